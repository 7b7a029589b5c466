// Handshake agent for the crate github-copilot-sdk. Built by the harness against exactly one
// released version (Cargo.toml requires `=X.Y.Z`, without the crate's default `bundled-cli`
// feature: the CLI is the one the harness gives, by explicit path, as a user who pins a CLI
// does), it starts that version's client on the given CLI, runs start / ping / get_status /
// stop, watches what the SDK started until it is gone, and prints one report line.
//
// Usage: agent '{"cli_path": P, "step_timeout": 30, "leak": 5, "dead_cli": 5, "sdk_dir": D}'
// (a "rule" runs the tolerance probe instead (tolerance.rs), "probe": "session" the session
// probe (session.rs); both report as the Go agent does, so the harness classifies them alike)
//
// The client API this agent calls (Client::start, ClientOptions.program = CliProgram::Path,
// ping(Option<&str>), get_status(), protocol_version(), stop(), force_stop()) is the same in
// every release that has a client; a release without it does not compile, and the compiler's
// words are that release's verdict.

// The session and tolerance probes drive the crate's session API, which changed more than its
// client's: built without the feature `probes` (where they do not compile against a release),
// the agent runs the handshake alone and says the other probes could not be run.
#[cfg(feature = "probes")]
mod conversation;
#[cfg(feature = "probes")]
mod session;
#[cfg(feature = "probes")]
mod tolerance;
mod watch;

use std::future::Future;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use github_copilot_sdk::{CliProgram, Client, ClientOptions};
use serde_json::{Value, json};

const PREFIX: &str = "@@compat-matrix-report@@ ";

struct Report {
    doc: serde_json::Map<String, Value>,
    steps: Vec<Value>,
}

impl Report {
    fn step(&mut self, name: &str, ok: bool, seconds: f64, error: Option<Value>, result: Option<Value>) {
        let mut s = json!({"name": name, "ok": ok, "seconds": round(seconds)});
        if let Some(e) = error {
            s["error"] = e;
        }
        if let Some(r) = result {
            s["result"] = r;
        }
        self.steps.push(s);
    }

    fn print(mut self) {
        self.doc.insert("steps".into(), Value::Array(self.steps));
        println!("\n{}{}", PREFIX, Value::Object(self.doc));
    }
}

fn round(x: f64) -> f64 {
    (x * 10000.0).round() / 10000.0
}

fn error_info<E: std::fmt::Display + std::fmt::Debug>(err: &E) -> Value {
    let debug = format!("{err:?}");
    // The error's kind, as the crate names it: the first word of its Debug form.
    let kind: String = debug.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
    json!({"type": if kind.is_empty() { "Error".to_string() } else { kind },
           "module": "github_copilot_sdk", "message": err.to_string(), "traceback": debug})
}

enum Settled<T> {
    Done(T),
    TimedOut,
    CliGone(Value),
}

/// One SDK call under the harness's deadline; a CLI that exited while the SDK still waits on
/// it ends the call `dead_cli` seconds later (the SDK had not noticed: a hang, never ours).
async fn call<T, F: Future<Output = T>>(fut: F, timeout: Duration, watch: Option<&mut watch::CliWatch>,
                                       name: &str) -> (Settled<T>, f64) {
    eprintln!("[agent] step {name}");
    let t0 = Instant::now();
    tokio::pin!(fut);
    let deadline = tokio::time::sleep(timeout);
    tokio::pin!(deadline);
    let mut tick = tokio::time::interval(Duration::from_millis(250));
    let mut watch = watch;
    loop {
        tokio::select! {
            out = &mut fut => return (Settled::Done(out), t0.elapsed().as_secs_f64()),
            _ = &mut deadline => return (Settled::TimedOut, t0.elapsed().as_secs_f64()),
            _ = tick.tick() => {
                if let Some(w) = watch.as_deref_mut() {
                    if w.poll() {
                        return (Settled::CliGone(w.failure(name)), t0.elapsed().as_secs_f64());
                    }
                }
            }
        }
    }
}

fn timeout_error(name: &str, timeout: Duration) -> Value {
    json!({"type": "TimeoutError", "timeout": true, "source": "harness",
           "message": format!("{name} did not settle within {:.0}s (harness deadline)", timeout.as_secs_f64())})
}

fn declared(sdk_dir: &str) -> Value {
    let mut d = serde_json::Map::new();
    d.insert("SDK_PROTOCOL_VERSION".into(), json!(github_copilot_sdk::SDK_PROTOCOL_VERSION));
    d.insert("bundled_cli".into(), json!(false));
    // MIN_PROTOCOL_VERSION is private to the crate: read from its source, as the Go agent does.
    if let Ok(src) = std::fs::read_to_string(PathBuf::from(sdk_dir).join("src").join("lib.rs")) {
        if let Some(rest) = src.split("const MIN_PROTOCOL_VERSION: u32 = ").nth(1) {
            if let Ok(n) = rest.split(';').next().unwrap_or("").trim().parse::<u32>() {
                d.insert("MIN_PROTOCOL_VERSION".into(), json!(n));
            }
        }
    }
    Value::Object(d)
}

#[tokio::main]
async fn main() {
    let cfg: Value = std::env::args().nth(1).and_then(|a| serde_json::from_str(&a).ok()).unwrap_or(json!({}));
    let mut report = Report { doc: serde_json::Map::new(), steps: Vec::new() };
    let mut names: Vec<String> = std::env::vars_os().map(|(k, _)| k.to_string_lossy().into_owned()).collect();
    names.sort();
    for (k, v) in [("schema", json!(1)), ("sdk_name", json!("github-copilot-sdk")),
                   ("sdk_version", json!(option_env!("COMPAT_MATRIX_SDK_VERSION").unwrap_or(""))),
                   ("api", json!({})), ("warnings", json!([])), ("launched", json!([])),
                   ("negotiated_protocol", Value::Null), ("observed_cli_version", Value::Null),
                   ("env_names", json!(names))] {
        report.doc.insert(k.into(), v);
    }
    let Some(cli_path) = cfg["cli_path"].as_str().map(PathBuf::from) else {
        report.doc.insert("harness_error".into(), json!("bad config: no cli_path"));
        report.print();
        return;
    };
    report.doc.insert("declared".into(), declared(cfg["sdk_dir"].as_str().unwrap_or("")));
    let timeout = Duration::from_secs_f64(cfg["step_timeout"].as_f64().unwrap_or(30.0));
    let leak = Duration::from_secs_f64(cfg["leak"].as_f64().filter(|x| *x > 0.0).unwrap_or(5.0));
    let mut watch = cfg["dead_cli"].as_f64().filter(|x| *x > 0.0).map(|g| watch::CliWatch::new(Duration::from_secs_f64(g)));

    // The SDK is linked in at build time: nothing is left to import.
    report.step("import", true, 0.0, None, Some(json!("linked at build time")));
    let mut options = ClientOptions::default();
    options.program = CliProgram::Path(cli_path);
    report.step("construct", true, 0.0, None, None);
    report.doc.insert("api".into(), json!({"program": "CliProgram::Path", "start": "Client::start(ClientOptions)"}));

    // A batch of tolerance rules ("rules") runs as the tolerance probe too.
    let rule = cfg["rule"].as_str().unwrap_or(if cfg["rules"].is_array() { "batch" } else { "" });
    if !rule.is_empty() || cfg["probe"] == "session" {
        other_probe(options, &cfg, &mut report, timeout, rule).await;
        report.print();
        std::process::exit(0);
    }

    let (started, secs) = call(Client::start(options), timeout, watch.as_mut(), "start").await;
    let client = match started {
        Settled::Done(Ok(client)) => {
            report.step("start", true, secs, None, None);
            Some(client)
        }
        Settled::Done(Err(err)) => {
            report.step("start", false, secs, Some(error_info(&err)), None);
            None
        }
        Settled::TimedOut => {
            report.step("start", false, secs, Some(timeout_error("start", timeout)), None);
            None
        }
        Settled::CliGone(e) => {
            report.step("start", false, secs, Some(e), None);
            None
        }
    };
    let Some(client) = client else {
        // Client::start owns the process it spawned; without a client there is nothing to stop.
        report.doc.insert("after_stop".into(), watch::watch_gone(leak));
        report.print();
        std::process::exit(0);
    };
    if let Some(pid) = client.pid() {
        report.doc.insert("launched".into(), json!([format!("pid {pid}")]));
    }
    let (pinged, secs) = call(client.ping(Some("compat-matrix")), timeout, watch.as_mut(), "ping").await;
    let mut ping_protocol = Value::Null;
    match pinged {
        Settled::Done(Ok(pong)) => {
            ping_protocol = json!(pong.protocol_version);
            report.step("ping", true, secs, None, Some(json!({"message": pong.message,
                                                                "protocol_version": pong.protocol_version})));
        }
        Settled::Done(Err(err)) => report.step("ping", false, secs, Some(error_info(&err)), None),
        Settled::TimedOut => report.step("ping", false, secs, Some(timeout_error("ping", timeout)), None),
        Settled::CliGone(e) => report.step("ping", false, secs, Some(e), None),
    }
    report.doc.insert("ping_protocol".into(), ping_protocol.clone());
    let negotiated = client.protocol_version().map(|v| json!(v)).unwrap_or(ping_protocol);
    report.doc.insert("negotiated_protocol".into(), negotiated);
    let (status, secs) = call(client.get_status(), timeout, watch.as_mut(), "get_status").await;
    match status {
        Settled::Done(Ok(st)) => {
            report.doc.insert("observed_cli_version".into(), json!(st.version));
            report.step("get_status", true, secs, None, Some(json!({"version": st.version,
                                                                      "protocol_version": st.protocol_version})));
        }
        Settled::Done(Err(err)) => report.step("get_status", false, secs, Some(error_info(&err)), None),
        Settled::TimedOut => report.step("get_status", false, secs, Some(timeout_error("get_status", timeout)), None),
        Settled::CliGone(e) => report.step("get_status", false, secs, Some(e), None),
    }
    // stop(): the CLI is meant to exit here, so no watch.
    let (stopped, secs) = call(client.stop(), timeout, None, "stop").await;
    let stopped_ok = match stopped {
        Settled::Done(Ok(())) => {
            report.step("stop", true, secs, None, None);
            true
        }
        Settled::Done(Err(errs)) => {
            report.step("stop", false, secs, Some(error_info(&errs)), None);
            false
        }
        _ => {
            report.step("stop", false, secs, Some(timeout_error("stop", timeout)), None);
            false
        }
    };
    if !stopped_ok {
        let t0 = Instant::now();
        client.force_stop();
        report.step("force_stop", true, t0.elapsed().as_secs_f64(), None, None);
    }
    // An application lives on after stop(): what the SDK started must go by itself.
    let gone = watch::watch_gone(leak);
    report.doc.insert("after_stop".into(), gone);
    report.print();
    // The client is still alive here (as in an application); exit without dropping it, so
    // its Drop (which kills the CLI) cannot hide what stop() left.
    std::process::exit(0);
}

#[cfg(feature = "probes")]
async fn other_probe(options: ClientOptions, cfg: &Value, report: &mut Report, timeout: Duration, rule: &str) {
    conversation::capture_warnings();
    if rule.is_empty() {
        session::run(options, cfg, report, timeout).await;
    } else {
        tolerance::run(options, cfg, report, timeout).await;
    }
    report.doc.insert("warnings".into(), conversation::warnings());
}

#[cfg(not(feature = "probes"))]
async fn other_probe(_options: ClientOptions, _cfg: &Value, report: &mut Report, _timeout: Duration, _rule: &str) {
    report.doc.insert("not_applicable".into(), json!(NO_PROBES));
}

#[cfg(not(feature = "probes"))]
const NO_PROBES: &str = "the agent's session code does not compile against this release (its session API \
                         differs from the one the agent drives): the session and tolerance probes are not run";
