package main

import (
	"bytes"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
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

const marker = "COMPAT_MATRIX_CELL"

// sdkProcesses lists the live processes the SDK started: those in our process group, and those
// carrying our cell's marker variable (a native CLI whose loader exited has left the group but
// keeps the marker in its environment). Read from /proc only; a zombie has exited.
func sdkProcesses() map[int]string {
	me, group := os.Getpid(), syscall.Getpgrp()
	var needle []byte
	if v, ok := os.LookupEnv(marker); ok {
		needle = []byte(marker + "=" + v)
	}
	found := map[int]string{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == me {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(fields) < 3 || fields[0] == "Z" || fields[0] == "X" {
			continue
		}
		if pg, _ := strconv.Atoi(fields[2]); pg != group {
			env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
			if needle == nil || err != nil || !containsItem(env, needle) {
				continue
			}
		}
		cmd, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		text := strings.TrimSpace(strings.ReplaceAll(string(cmd), "\x00", " "))
		if len(text) > 400 {
			text = text[:400]
		}
		found[pid] = text
	}
	return found
}

func containsItem(env, item []byte) bool {
	for _, kv := range bytes.Split(env, []byte{0}) {
		if bytes.Equal(kv, item) {
			return true
		}
	}
	return false
}

type goneProcess struct {
	PID       int      `json:"pid"`
	Command   string   `json:"command"`
	GoneAfter *float64 `json:"gone_after"`
}

// watchGone waits up to wait, as an application lives on, for every process the SDK started
// to be gone: each one's seconds until gone (nil: still alive at the end), and the seconds
// until the last was gone (nil: something outlived the wait, a leak).
func watchGone(wait time.Duration) map[string]any {
	t0 := time.Now()
	var order []int
	seen := map[int]*goneProcess{}
	for {
		live := sdkProcesses()
		now := round(time.Since(t0).Seconds())
		for pid, cmd := range live {
			if _, ok := seen[pid]; !ok {
				seen[pid] = &goneProcess{PID: pid, Command: cmd}
				order = append(order, pid)
			}
		}
		for pid, p := range seen {
			if _, ok := live[pid]; !ok && p.GoneAfter == nil {
				at := now
				p.GoneAfter = &at
			}
		}
		if len(live) == 0 || time.Since(t0) >= wait {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	processes := []*goneProcess{}
	leaked := []string{}
	latest := 0.0
	for _, pid := range order {
		p := seen[pid]
		processes = append(processes, p)
		if p.GoneAfter == nil {
			leaked = append(leaked, p.Command)
		} else if *p.GoneAfter > latest {
			latest = *p.GoneAfter
		}
	}
	var last any = latest
	if len(leaked) > 0 {
		last = nil
	}
	return map[string]any{"wait": wait.Seconds(), "processes": processes, "leaked": leaked,
		"exit_after_stop_seconds": last}
}
