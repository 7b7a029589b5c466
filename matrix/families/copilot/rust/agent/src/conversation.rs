// What the session and tolerance probes share: the SDK calls as report steps, the session an
// application opens (its events collected from as early as the release lets an application
// subscribe), and the SDK's own warnings captured as an application's log would hold them.
//
// How a session is opened is the one thing chosen at build time: with the agent's feature
// `prepared` (releases that have Client::prepare_session, 1.0.13 on), the application
// subscribes before the session's first event; without it (1.0.0-1.0.11), right after
// create_session returns, as early as those releases let it.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use github_copilot_sdk::session::Session;
use github_copilot_sdk::subscription::RecvErrorKind;
use github_copilot_sdk::{Client, Error, ErrorKind, EventSubscription, SessionConfig, SessionErrorKind, SessionEvent};
use serde_json::{Value, json};

use crate::{Report, Settled, call, error_info, timeout_error};

pub const MUTATED_ID: &str = "00000000-0000-4000-8000-00000000c0de";
pub const CANARY_ID: &str = "00000000-0000-4000-8000-00000000ca9a";
pub const UNKNOWN_FIELD: &str = "compatMatrixUnknownField";
pub const UNKNOWN_VALUE: &str = "compat_matrix_unknown_value";
pub const UNKNOWN_CAPABILITY: &str = "compat-matrix.unknown-capability";

/// What the application's handlers were handed: every session event, what its tool ran, what
/// its permission handler was asked, and whether it approves the CLI's own tools.
#[derive(Default)]
pub struct Conversation {
    pub events: Vec<SessionEvent>,
    pub ran: Vec<String>,
    pub asked: Vec<Value>,
    pub allow: bool,
    pub lagged: Vec<String>,
}

pub type Shared = Arc<Mutex<Conversation>>;

/// An SDK error as the report's error: its kind as the crate names it, and whether it is the
/// SDK's own timeout (a turn that never reached idle within the wait it was given).
pub fn sdk_error(err: &Error) -> Value {
    let kind = format!("{:?}", err.kind());
    let name: String = kind.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
    let timeout = matches!(err.kind(), ErrorKind::Session(SessionErrorKind::Timeout(_)));
    let mut info = json!({"type": if name.is_empty() { "Error".to_string() } else { name },
                          "module": "github_copilot_sdk", "message": err.to_string(), "traceback": kind,
                          "timeout": timeout});
    if timeout {
        info["source"] = json!("sdk");
    }
    info
}

/// One SDK call as a report step under the harness's deadline: its value, or None when it
/// failed or never settled (the step says which).
pub async fn step<T, F: Future<Output = Result<T, Error>>>(report: &mut Report, name: &str, timeout: Duration,
                                                             fut: F) -> Option<T> {
    let (settled, secs) = call(fut, timeout, None, name).await;
    match settled {
        Settled::Done(Ok(v)) => {
            report.step(name, true, secs, None, None);
            Some(v)
        }
        Settled::Done(Err(err)) => {
            report.step(name, false, secs, Some(sdk_error(&err)), None);
            None
        }
        Settled::TimedOut => {
            report.step(name, false, secs, Some(timeout_error(name, timeout)), None);
            None
        }
        Settled::CliGone(e) => {
            report.step(name, false, secs, Some(e), None);
            None
        }
    }
}

/// Client::stop() as the report's step "stop" (its error type differs from the other calls').
pub async fn stop(report: &mut Report, client: &Client, timeout: Duration) {
    let (stopped, secs) = call(client.stop(), timeout, None, "stop").await;
    match stopped {
        Settled::Done(Ok(())) => report.step("stop", true, secs, None, None),
        Settled::Done(Err(errs)) => report.step("stop", false, secs, Some(error_info(&errs)), None),
        _ => {
            report.step("stop", false, secs, Some(timeout_error("stop", timeout)), None);
            client.force_stop();
        }
    }
}

fn collect(mut events: EventSubscription, into: Shared) {
    tokio::spawn(async move {
        loop {
            match events.recv().await {
                Ok(ev) => into.lock().unwrap().events.push(ev),
                Err(err) => {
                    if matches!(err.kind(), RecvErrorKind::Closed) {
                        break;
                    }
                    into.lock().unwrap().lagged.push(format!("event subscription: {err}"));
                }
            }
        }
    });
}

/// How this build opens a session, for the report's `api`.
pub const OPEN_SESSION: &str = if cfg!(feature = "prepared") {
    "Client::prepare_session(SessionConfig) + PreparedSession::subscribe() + start()"
} else {
    "Client::create_session(SessionConfig) + Session::subscribe()"
};

/// Opens the session, every event it routes collected into `into`.
#[cfg(feature = "prepared")]
pub async fn open_session(client: &Client, config: SessionConfig, into: Shared) -> Result<Session, Error> {
    let prepared = client.prepare_session(config)?;
    collect(prepared.subscribe(), into);
    prepared.start().await
}

#[cfg(not(feature = "prepared"))]
pub async fn open_session(client: &Client, config: SessionConfig, into: Shared) -> Result<Session, Error> {
    let session = client.create_session(config).await?;
    collect(session.subscribe(), into);
    Ok(session)
}

/// Is `needle` anywhere in what the application can reach from `v` (as JSON, or in the
/// crate's own Debug rendering)?
pub fn seen<T: serde::Serialize + std::fmt::Debug>(v: &T, needle: &str) -> bool {
    serde_json::to_string(v).map(|s| s.contains(needle)).unwrap_or(false) || format!("{v:?}").contains(needle)
}

/// A permission request's kind as the CLI sent it ("custom-tool", "shell", ...).
pub fn kind_of<T: serde::Serialize>(request: &T) -> String {
    serde_json::to_value(request).ok().and_then(|v| v.get("kind").and_then(Value::as_str).map(String::from))
        .unwrap_or_default()
}

// -- the SDK's log, as an application with a tracing subscriber holds it -----------------

static WARNINGS: Mutex<Vec<String>> = Mutex::new(Vec::new());

struct Capture {
    next: AtomicU64,
}

struct Fields(String);

impl tracing::field::Visit for Fields {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if !self.0.is_empty() {
            self.0.push(' ');
        }
        if field.name() == "message" {
            self.0.push_str(&format!("{value:?}"));
        } else {
            self.0.push_str(&format!("{}={value:?}", field.name()));
        }
    }
}

impl tracing::Subscriber for Capture {
    fn enabled(&self, meta: &tracing::Metadata<'_>) -> bool {
        *meta.level() <= tracing::Level::WARN
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(self.next.fetch_add(1, Ordering::Relaxed))
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        let meta = event.metadata();
        let mut fields = Fields(String::new());
        event.record(&mut fields);
        let line: String = format!("log {} {}: {}", meta.target(), meta.level(), fields.0).chars().take(2000).collect();
        WARNINGS.lock().unwrap().push(line);
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

/// Captures what the SDK logs at WARN and above (the Python agent's logging handler, here).
pub fn capture_warnings() {
    let _ = tracing::subscriber::set_global_default(Capture { next: AtomicU64::new(1) });
}

pub fn warnings() -> Value {
    json!(WARNINGS.lock().unwrap().clone())
}
