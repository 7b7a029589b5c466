// The tolerance probe: the shim between this SDK and the real CLI applies one mutation rule;
// this reports what the application was handed, in the report the Go agent writes, so the
// harness classifies it the same way. The crate hands an application each session event as a
// SessionEvent (its type a string, its data untyped JSON); a stored session's events come back
// from Session::get_events().

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use github_copilot_sdk::permission;
use github_copilot_sdk::session::Session;
use github_copilot_sdk::{Client, ClientOptions, SessionConfig, SessionEvent};
use serde_json::{Map, Value, json};

use crate::Report;
use crate::conversation::{
    CANARY_ID, Conversation, MUTATED_ID, OPEN_SESSION, Shared, UNKNOWN_CAPABILITY, UNKNOWN_FIELD, UNKNOWN_VALUE,
    open_session, seen, step, stop,
};

fn describe(ev: &SessionEvent) -> Value {
    let field = |name: &str| ev.data.get(name).cloned().unwrap_or(Value::Null);
    json!({"type": ev.event_type, "raw_type": ev.event_type, "id": ev.id,
           "data_class": format!("SessionEventType::{:?}", ev.parsed_type()),
           "message": field("message"), "role": field("role"), "name": field("name"),
           "has_unknown_field": seen(ev, UNKNOWN_FIELD), "has_unknown_value": seen(ev, UNKNOWN_VALUE)})
}

/// The described events, the canary and the mutated event among them (the last 20 kept).
fn observe(events: &[SessionEvent], observed: &mut Map<String, Value>) {
    let mut described: Vec<Value> = events.iter().map(describe).collect();
    observed.insert("canary".into(), json!(described.iter().any(|d| d["id"] == CANARY_ID)));
    let mutated = described.iter().rev().find(|d| d["id"] == MUTATED_ID).cloned().unwrap_or(Value::Null);
    observed.insert("mutated".into(), mutated);
    if described.len() > 20 {
        described.drain(..described.len() - 20);
    }
    observed.insert("events".into(), Value::Array(described));
}

/// The rules of this run: "rules" (a batch: one client; connection rules observed together,
/// each session rule on a session of its own, in this order, as the shim assigns them), or
/// "rule" alone.
fn rules(cfg: &Value) -> Vec<String> {
    match cfg["rules"].as_array() {
        Some(list) => list.iter().filter_map(|r| r.as_str().map(String::from)).collect(),
        None => vec![cfg["rule"].as_str().unwrap_or("").to_string()],
    }
}

pub async fn run(options: ClientOptions, cfg: &Value, report: &mut Report, timeout: Duration) {
    let rules = rules(cfg);
    let mut observed = Map::new();
    report.doc.insert("loop_errors".into(), json!([]));
    let client = step(report, "start", timeout, Client::start(options)).await;
    if let Some(client) = client {
        let first = rules.first().cloned().unwrap_or_default();
        if !cfg["rules"].is_array() || ["result.", "notification.", "request."].iter().any(|p| first.starts_with(p)) {
            let waits_for_answer = rules.iter().any(|r| r.starts_with("request."));
            let errors = probe(&client, &first, waits_for_answer, cfg, report, &mut observed, timeout).await;
            report.doc.insert("loop_errors".into(), json!(errors));
        } else {
            let mut batch = Map::new();
            let mut all: Vec<String> = Vec::new();
            for rule in &rules {
                let mark = report.steps.len();
                let mut own = Map::new();
                let errors = probe(&client, rule, false, cfg, report, &mut own, timeout).await;
                all.extend(errors.iter().cloned());
                batch.insert(rule.clone(), json!({"steps": report.steps[mark..].to_vec(), "observed": own,
                                                  "loop_errors": errors}));
            }
            report.doc.insert("batch".into(), Value::Object(batch));
            report.doc.insert("loop_errors".into(), json!(all));
        }
        stop(report, &client, timeout).await;
        // Exit without dropping the client (its Drop kills the CLI), as after the handshake.
        std::mem::forget(client);
    }
    report.doc.insert("observed".into(), Value::Object(observed));
}

/// One rule's steps (a session rule on a session of its own); what the event subscription
/// reported lost on the way (the rule's loop errors).
async fn probe(client: &Client, rule: &str, waits_for_answer: bool, cfg: &Value, report: &mut Report,
               observed: &mut Map<String, Value>, timeout: Duration) -> Vec<String> {
    if ["result.", "notification.", "request."].iter().any(|p| rule.starts_with(p)) {
        let pong = step(report, "ping", timeout, client.ping(Some("compat-matrix"))).await;
        observed.insert("ping_unknown_field".into(), json!(pong.as_ref().is_some_and(|p| seen(p, UNKNOWN_FIELD))));
        let status = step(report, "get_status", timeout, client.get_status()).await;
        observed.insert("status_unknown_field".into(),
                        json!(status.as_ref().is_some_and(|s| seen(s, UNKNOWN_FIELD))));
        // What the application can reach of the client: its Debug rendering (the crate keeps the
        // handshake's result private).
        let client_text = format!("{client:?}");
        observed.insert("client_has_unknown_capability".into(), json!(client_text.contains(UNKNOWN_CAPABILITY)));
        observed.insert("client_has_unknown_value".into(), json!(client_text.contains(UNKNOWN_VALUE)));
        // A notification or request injected after the handshake lands (and is answered).
        let wait = if waits_for_answer || rule.starts_with("request.") { 1000 } else { 500 };
        tokio::time::sleep(Duration::from_millis(wait)).await;
        return Vec::new();
    }
    let conv: Shared = Arc::new(Mutex::new(Conversation { allow: true, ..Default::default() }));
    let config = SessionConfig::default().with_permission_handler(permission::approve_all());
    report.doc["api"]["session"] = json!(format!("{OPEN_SESSION}, permission::approve_all()"));
    let Some(session) = step(report, "create_session", timeout, open_session(client, config, conv.clone())).await
    else {
        return Vec::new();
    };
    let mut errors = Vec::new();
    if rule.starts_with("history.") {
        report.doc["api"]["history"] = json!("Session::get_events() -> Vec<SessionEvent>");
        if let Some(events) = step(report, "get_history", timeout, session.get_events()).await {
            observe(&events, observed);
        }
    } else {
        let wait = Duration::from_secs_f64(cfg["event_wait"].as_f64().filter(|w| *w > 0.0).unwrap_or(6.0));
        let t0 = Instant::now();
        loop {
            let canary = conv.lock().unwrap().events.iter().any(|e| e.id == CANARY_ID);
            if canary || t0.elapsed() >= wait {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let c = conv.lock().unwrap();
        observe(&c.events, observed);
        errors = c.lagged.clone();
        drop(c);
    }
    step(report, "ping", timeout, client.ping(Some("compat-matrix"))).await;
    close(report, &session, timeout).await;
    errors
}

pub async fn close(report: &mut Report, session: &Session, timeout: Duration) {
    step(report, "close_session", timeout, session.disconnect()).await;
}
