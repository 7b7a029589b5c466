// What the SDK started, read from /proc only (never touched: reaping is the SDK's job).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const MARKER: &str = "COMPAT_MATRIX_CELL";

/// The fields of /proc/<pid>/stat after the command name.
fn stat_fields(pid: &str) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    Some(rest.split_whitespace().map(String::from).collect())
}

/// Our child processes (the CLI the SDK ran), and how each ended ("" while alive): a zombie's
/// stat ends with its wait status.
fn children() -> BTreeMap<u32, String> {
    let mut found = BTreeMap::new();
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else { return found };
    for task in tasks.flatten() {
        let Ok(raw) = std::fs::read_to_string(task.path().join("children")) else { continue };
        for pid in raw.split_whitespace() {
            let Some(fields) = stat_fields(pid) else { continue };
            let Ok(n) = pid.parse::<u32>() else { continue };
            if fields.first().map(String::as_str) != Some("Z") {
                found.insert(n, String::new());
                continue;
            }
            let status: i64 = fields.last().and_then(|s| s.parse().ok()).unwrap_or(0);
            let how = if status & 0x7f == 0 { format!("exit {}", (status >> 8) & 0xff) }
                      else { format!("signal {}", status & 0x7f) };
            found.insert(n, how);
        }
    }
    found
}

/// Notices a CLI that exited while an SDK call still waits on it (timeouts.dead_cli).
pub struct CliWatch {
    grace: Duration,
    seen: BTreeMap<u32, String>,
    gone_since: Option<Instant>,
}

impl CliWatch {
    pub fn new(grace: Duration) -> Self {
        CliWatch { grace, seen: BTreeMap::new(), gone_since: None }
    }

    /// Whether every child seen so far has been gone for the grace period.
    pub fn poll(&mut self) -> bool {
        let now = children();
        for (pid, how) in self.seen.iter_mut() {
            if !now.contains_key(pid) && how.is_empty() {
                *how = "reaped".into();
            }
        }
        for (pid, how) in now {
            self.seen.insert(pid, how);
        }
        let dead = !self.seen.is_empty() && self.seen.values().all(|h| !h.is_empty());
        if !dead {
            self.gone_since = None;
            return false;
        }
        let since = *self.gone_since.get_or_insert_with(Instant::now);
        since.elapsed() >= self.grace
    }

    pub fn failure(&self, name: &str) -> Value {
        let exits: Vec<String> = self.seen.iter().map(|(p, h)| format!("pid {p}: {h}")).collect();
        let waited = self.gone_since.map(|t| t.elapsed().as_secs_f64()).unwrap_or(0.0);
        json!({"type": "CliExitedUnnoticed", "timeout": true, "source": "watch",
               "message": format!("{name} still waiting {waited:.1}s after the CLI exited ({}); stopped after {:.0}s, \
                                   the SDK had not noticed", exits.join(", "), self.grace.as_secs_f64())})
    }
}

/// The live processes the SDK started: those in our process group, and those carrying our
/// cell's marker variable (a native CLI whose loader exited has left the group).
fn sdk_processes() -> BTreeMap<u32, String> {
    let me = std::process::id();
    let group = stat_fields("self").and_then(|f| f.get(2).cloned()).unwrap_or_default();
    let needle = std::env::var(MARKER).ok().map(|v| format!("{MARKER}={v}"));
    let mut found = BTreeMap::new();
    let Ok(entries) = std::fs::read_dir("/proc") else { return found };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Ok(pid) = name.parse::<u32>() else { continue };
        if pid == me {
            continue;
        }
        let Some(fields) = stat_fields(&name) else { continue };
        if fields.len() < 3 || fields[0] == "Z" || fields[0] == "X" {
            continue;
        }
        if fields[2] != group {
            let marked = match (&needle, std::fs::read(format!("/proc/{name}/environ"))) {
                (Some(n), Ok(env)) => env.split(|b| *b == 0).any(|kv| kv == n.as_bytes()),
                _ => false,
            };
            if !marked {
                continue;
            }
        }
        let Ok(cmd) = std::fs::read(format!("/proc/{name}/cmdline")) else { continue };
        let text: String = String::from_utf8_lossy(&cmd).replace('\0', " ").trim().chars().take(400).collect();
        found.insert(pid, text);
    }
    found
}

/// Waits up to `wait` for every process the SDK started to be gone: each one's seconds until
/// gone (null: alive at the end), and the seconds until the last was gone (null: a leak).
pub fn watch_gone(wait: Duration) -> Value {
    let t0 = Instant::now();
    let mut order: Vec<u32> = Vec::new();
    let mut seen: BTreeMap<u32, (String, Option<f64>)> = BTreeMap::new();
    loop {
        let live = sdk_processes();
        let now = (t0.elapsed().as_secs_f64() * 10000.0).round() / 10000.0;
        for (pid, cmd) in &live {
            if !seen.contains_key(pid) {
                seen.insert(*pid, (cmd.clone(), None));
                order.push(*pid);
            }
        }
        for (pid, entry) in seen.iter_mut() {
            if !live.contains_key(pid) && entry.1.is_none() {
                entry.1 = Some(now);
            }
        }
        if live.is_empty() || t0.elapsed() >= wait {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut processes = Vec::new();
    let mut leaked = Vec::new();
    let mut latest = 0.0f64;
    for pid in order {
        let (cmd, gone) = &seen[&pid];
        processes.push(json!({"pid": pid, "command": cmd, "gone_after": gone}));
        match gone {
            None => leaked.push(json!(cmd)),
            Some(g) => latest = latest.max(*g),
        }
    }
    let last = if leaked.is_empty() { json!(latest) } else { Value::Null };
    json!({"wait": wait.as_secs_f64(), "processes": processes, "leaked": leaked, "exit_after_stop_seconds": last})
}
