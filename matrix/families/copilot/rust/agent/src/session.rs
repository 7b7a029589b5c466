// The session probe: one real conversation as an application holds it, reported as the Go
// agent reports it. The client is started, a session is created whose model calls go to the
// harness's stand-in (the session's own provider), with one tool of the application's and a
// permission handler; each scripted turn is sent with send_and_wait (the turn's wait as its
// timeout); the session's history is read back, the session closed and the client stopped.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use github_copilot_sdk::tool::ToolHandler;
use github_copilot_sdk::{
    Client, ClientOptions, Error, MessageOptions, ProviderConfig, SessionConfig, SessionEvent, Tool, ToolInvocation,
    ToolResult, permission,
};
use serde_json::{Map, Value, json};

use crate::Report;
use crate::conversation::{Conversation, OPEN_SESSION, Shared, kind_of, open_session, step, stop};
use crate::tolerance::close;
use crate::watch;

const IDLE: &str = "session.idle";

/// The event as the application reads it, and whether the crate knew its type (its own
/// `SessionEventType::Unknown` for a type it does not name).
fn describe(ev: &SessionEvent) -> Value {
    let parsed = format!("{:?}", ev.parsed_type());
    json!({"type": ev.event_type, "raw_type": ev.event_type, "unknown": parsed == "Unknown",
           "data_class": format!("SessionEventType::{parsed}")})
}

/// The application's tool: it returns the text it is given, upper-cased.
struct Echo(Shared);

#[async_trait]
impl ToolHandler for Echo {
    async fn call(&self, invocation: ToolInvocation) -> Result<ToolResult, Error> {
        let given = invocation.arguments.get("text").and_then(Value::as_str).unwrap_or("").to_string();
        self.0.lock().unwrap().ran.push(given.clone());
        Ok(ToolResult::Text(given.to_uppercase()))
    }
}

fn config(cfg: &Value, conv: &Shared) -> SessionConfig {
    let url = cfg["model_url"].as_str().unwrap_or("");
    let tool = Tool::new(cfg["tool"].as_str().unwrap_or("compat_matrix_echo"))
        .with_description("Returns the text it is given, upper-cased.")
        .with_parameters(json!({"type": "object", "required": ["text"],
                                "properties": {"text": {"type": "string"}}}))
        .with_handler(Arc::new(Echo(conv.clone())));
    let asked = conv.clone();
    // Approves the application's own tool always, the CLI's tools while the turn allows them.
    let permissions = permission::approve_if(move |request| {
        let kind = kind_of(request);
        let mut c = asked.lock().unwrap();
        let allowed = c.allow || kind == "custom-tool";
        c.asked.push(json!({"kind": kind, "allowed": allowed}));
        allowed
    });
    SessionConfig::default()
        .with_model(cfg["model"].as_str().unwrap_or(""))
        .with_provider(ProviderConfig::new(format!("{url}/v1")).with_provider_type("openai")
                           .with_api_key("compat-matrix").with_wire_api("completions"))
        .with_tools(vec![tool])
        .with_permission_handler(permissions)
}

pub async fn run(options: ClientOptions, cfg: &Value, report: &mut Report, timeout: Duration) {
    let conv: Shared = Arc::new(Mutex::new(Conversation { allow: true, ..Default::default() }));
    let mut observed = Map::new();
    observed.insert("turns".into(), json!([]));
    observed.insert("live".into(), json!([]));
    observed.insert("history".into(), Value::Null);
    report.doc.insert("loop_errors".into(), json!([]));
    let api = &mut report.doc["api"];
    api["session"] = json!(format!("{OPEN_SESSION} with_model, with_provider(ProviderConfig), with_tools, \
                                    with_permission_handler"));
    api["permission"] = json!("permission::approve_if(predicate): approve_once | reject");
    api["tool"] = json!("Tool::new(name).with_parameters(schema).with_handler(Arc<dyn ToolHandler>) -> ToolResult::Text");
    api["turn"] = json!("Session::send_and_wait(MessageOptions::new(prompt).with_wait_timeout(turn_timeout))");
    api["history"] = json!("Session::get_events() -> Vec<SessionEvent>");
    let leak = Duration::from_secs_f64(cfg["leak"].as_f64().filter(|x| *x > 0.0).unwrap_or(5.0));
    if let Some(client) = step(report, "start", timeout, Client::start(options)).await {
        conversation(&client, cfg, &conv, report, &mut observed, timeout).await;
        let c = conv.lock().unwrap();
        observed.insert("live".into(), Value::Array(c.events.iter().map(describe).collect()));
        report.doc.insert("loop_errors".into(), json!(c.lagged));
        drop(c);
        stop(report, &client, timeout).await;
        report.doc.insert("after_stop".into(), watch::watch_gone(leak));
        std::mem::forget(client);
    } else {
        report.doc.insert("after_stop".into(), watch::watch_gone(leak));
    }
    report.doc.insert("observed".into(), Value::Object(observed));
}

async fn conversation(client: &Client, cfg: &Value, conv: &Shared, report: &mut Report,
                      observed: &mut Map<String, Value>, timeout: Duration) {
    let config = config(cfg, conv);
    let Some(session) = step(report, "create_session", timeout, open_session(client, config, conv.clone())).await
    else {
        return;
    };
    let wait = Duration::from_secs_f64(cfg["turn_timeout"].as_f64().filter(|x| *x > 0.0).unwrap_or(45.0));
    let mut turns = Vec::new();
    for turn in cfg["turns"].as_array().cloned().unwrap_or_default() {
        let name = turn[0].as_str().unwrap_or("").to_string();
        let prompt = turn[1].as_str().unwrap_or("").to_string();
        let (ran, asked, seen) = {
            let mut c = conv.lock().unwrap();
            c.allow = name != "denied";
            (c.ran.len(), c.asked.len(), c.events.len())
        };
        let message = MessageOptions::new(prompt).with_wait_timeout(wait);
        let reply = step(report, &format!("turn:{name}"), wait + Duration::from_secs(5),
                         session.send_and_wait(message)).await;
        let last = report.steps.last().cloned().unwrap_or(Value::Null);
        let c = conv.lock().unwrap();
        let idle = c.events[seen..].iter().any(|e| e.event_type == IDLE);
        let content = reply.as_ref().and_then(|r| r.as_ref()).and_then(|ev| ev.data.get("content").cloned());
        turns.push(json!({"name": name, "ok": last["ok"], "seconds": last["seconds"],
                          "reply": content.unwrap_or(Value::Null), "tool_ran": c.ran[ran..].to_vec(),
                          "asked": c.asked[asked..].to_vec(), "idle": idle}));
        drop(c);
        observed.insert("turns".into(), Value::Array(turns.clone()));
        if reply.is_none() {
            break;
        }
    }
    if let Some(history) = step(report, "get_history", timeout, session.get_events()).await {
        observed.insert("history".into(), Value::Array(history.iter().map(describe).collect()));
    }
    close(report, &session, timeout).await;
}
