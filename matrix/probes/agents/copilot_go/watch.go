package main

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// cliWatch notices a CLI that has exited while an SDK call still waits on it
// (timeouts.dead_cli). grace after the last child we saw is gone, the call is stopped: the
// SDK has not noticed, and nothing can answer it any more (a hang, never a verdict of ours).
type cliWatch struct {
	grace     time.Duration
	seen      map[int]string // pid -> how it ended, "" while alive
	goneSince time.Time
}

var watch *cliWatch // set when the harness asked for it

// children reads our child processes from /proc (the CLI the SDK ran: the launcher execs it
// in place). Read only: reaping them is the SDK's job. A zombie's stat ends with its wait status.
func children() map[int]string {
	found := map[int]string{}
	tasks, _ := os.ReadDir("/proc/self/task")
	for _, task := range tasks {
		raw, err := os.ReadFile("/proc/self/task/" + task.Name() + "/children")
		if err != nil {
			continue
		}
		for _, field := range strings.Fields(string(raw)) {
			pid, _ := strconv.Atoi(field)
			stat, err := os.ReadFile("/proc/" + field + "/stat")
			if err != nil {
				continue
			}
			rest := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
			if len(rest) == 0 || rest[0] != "Z" {
				found[pid] = ""
				continue
			}
			status, _ := strconv.Atoi(rest[len(rest)-1])
			if status&0x7f == 0 {
				found[pid] = fmt.Sprintf("exit %d", (status>>8)&0xff)
			} else {
				found[pid] = fmt.Sprintf("signal %d", status&0x7f)
			}
		}
	}
	return found
}

// poll reports whether every child seen so far has been gone for grace.
func (w *cliWatch) poll() bool {
	now := children()
	for pid, how := range w.seen {
		if _, ok := now[pid]; !ok && how == "" {
			w.seen[pid] = "reaped"
		}
	}
	for pid, how := range now {
		w.seen[pid] = how
	}
	dead := len(w.seen) > 0
	for _, how := range w.seen {
		dead = dead && how != ""
	}
	if !dead {
		w.goneSince = time.Time{}
		return false
	}
	if w.goneSince.IsZero() {
		w.goneSince = time.Now()
	}
	return time.Since(w.goneSince) >= w.grace
}

func (w *cliWatch) exits() string {
	pids := make([]int, 0, len(w.seen))
	for pid := range w.seen {
		pids = append(pids, pid)
	}
	sort.Ints(pids)
	parts := make([]string, len(pids))
	for i, pid := range pids {
		parts[i] = fmt.Sprintf("pid %d: %s", pid, w.seen[pid])
	}
	return strings.Join(parts, ", ")
}

func (w *cliWatch) failure(name string) *errInfo {
	return &errInfo{Type: "CliExitedUnnoticed", Timeout: true, Source: "watch",
		Message: fmt.Sprintf("%s still waiting %.1fs after the CLI exited (%s); stopped after %.0fs, the SDK had not noticed",
			name, time.Since(w.goneSince).Seconds(), w.exits(), w.grace.Seconds())}
}
