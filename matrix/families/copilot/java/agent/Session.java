// The session probe: one real conversation as an application holds it, in the report the Go,
// Python and Node agents give. The client is started; a session is created whose model calls go
// to the harness's stand-in (the session's own ProviderConfig), with one tool of the
// application's, a permission handler and the event handler registered through the config's
// onEvent (before the session's first event); each scripted turn is sent with sendAndWait and
// waited for until the session is idle; the history is read back (getMessages), the session
// closed and the client stopped. The report says what each step did, every event the
// application was handed, what the permission handler was asked and what the tool ran; the
// harness classifies it.

import com.fasterxml.jackson.databind.JsonNode;
import com.github.copilot.sdk.CopilotClient;
import com.github.copilot.sdk.CopilotSession;
import com.github.copilot.sdk.generated.AssistantMessageEvent;
import com.github.copilot.sdk.generated.SessionEvent;
import com.github.copilot.sdk.json.MessageOptions;
import com.github.copilot.sdk.json.PermissionHandler;
import com.github.copilot.sdk.json.PermissionRequestResult;
import com.github.copilot.sdk.json.PermissionRequestResultKind;
import com.github.copilot.sdk.json.ProviderConfig;
import com.github.copilot.sdk.json.SessionConfig;
import com.github.copilot.sdk.json.ToolDefinition;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

final class Session {
    static final String IDLE = "session.idle";

    private Session() {
    }

    /** What the application's handlers saw; every list is guarded by the conversation itself. */
    static final class Conversation {
        final List<SessionEvent> events = new ArrayList<>();
        final List<String> ran = new ArrayList<>();
        final List<Map<String, Object>> asked = new ArrayList<>();
        boolean allow = true;

        synchronized void onEvent(SessionEvent e) {
            events.add(e);
        }

        synchronized List<SessionEvent> events(int from) {
            return new ArrayList<>(events.subList(Math.min(from, events.size()), events.size()));
        }

        synchronized int[] marks() {
            return new int[] {ran.size(), asked.size(), events.size()};
        }

        synchronized void allow(boolean allowed) {
            allow = allowed;
        }

        /** The application's permission handler: its own tool always, the CLI's tools while
         *  allow is set; answered in the SDK's own result kinds. */
        PermissionHandler permissions() {
            return (request, invocation) -> {
                String kind = String.valueOf(request.getKind());
                boolean allowed;
                synchronized (this) {
                    allowed = allow || kind.equals("custom-tool");
                    Map<String, Object> a = new LinkedHashMap<>();
                    a.put("kind", kind);
                    a.put("allowed", allowed);
                    asked.add(a);
                }
                return CompletableFuture.completedFuture(new PermissionRequestResult().setKind(
                        allowed ? PermissionRequestResultKind.APPROVED : PermissionRequestResultKind.REJECTED));
            };
        }

        /** The application's tool: it returns the text it is given, upper-cased. */
        ToolDefinition tool(String name) {
            Map<String, Object> text = Map.of("type", "string");
            Map<String, Object> schema = Map.of("type", "object", "required", List.of("text"),
                    "properties", Map.of("text", text));
            return ToolDefinition.create(name, "Returns the text it is given, upper-cased.", schema, invocation -> {
                Map<String, Object> args = invocation.getArguments();
                String given = String.valueOf(args == null ? null : args.get("text"));
                synchronized (this) {
                    ran.add(given);
                }
                return CompletableFuture.completedFuture(given.toUpperCase(Locale.ROOT));
            });
        }
    }

    /** The event's type as the application reads it, and whether the SDK knew it (an
     *  UnknownSessionEvent is the SDK's unknown; it keeps the wire's type). */
    static Map<String, Object> describe(SessionEvent event) {
        Object data = Tolerance.dataOf(event);
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("type", String.valueOf(event.getType()));
        d.put("raw_type", event.getType());
        d.put("unknown", event.getClass().getSimpleName().equals("UnknownSessionEvent"));
        d.put("data_class", data == null ? event.getClass().getSimpleName() : data.getClass().getSimpleName());
        return d;
    }

    static List<Map<String, Object>> describeAll(List<SessionEvent> events) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (SessionEvent e : events) {
            out.add(describe(e));
        }
        return out;
    }

    @SuppressWarnings("unchecked")
    static void run(CopilotClient client, JsonNode cfg, double timeout) throws InterruptedException {
        Map<String, Object> observed = new LinkedHashMap<>();
        observed.put("turns", new ArrayList<Map<String, Object>>());
        observed.put("live", new ArrayList<>());
        observed.put("history", null);
        Agent.report.put("observed", observed);
        Agent.report.put("loop_errors", new ArrayList<>());
        Map<String, Object> api = (Map<String, Object>) Agent.report.get("api");
        api.put("permission", "PermissionHandler answering PermissionRequestResultKind.APPROVED | REJECTED");
        double turnWait = cfg.path("turn_timeout").asDouble(45.0);
        double leak = cfg.path("leak").asDouble(5.0);
        Conversation c = new Conversation();
        try {
            Agent.call("start", () -> client.start().thenApply(v -> Boolean.TRUE), timeout);
            if (!Tolerance.ok()) {
                return;
            }
            String url = cfg.path("model_url").asText();
            SessionConfig config = new SessionConfig()
                    .setModel(cfg.path("model").asText())
                    .setProvider(new ProviderConfig().setType("openai").setBaseUrl(url + "/v1")
                            .setApiKey("compat-matrix").setWireApi("completions"))
                    .setTools(List.of(c.tool(cfg.path("tool").asText())))
                    .setOnPermissionRequest(c.permissions())
                    .setOnEvent(c::onEvent);
            api.put("session", "createSession(SessionConfig model, provider, tools (ToolDefinition.create), "
                    + "onPermissionRequest, onEvent)");
            api.put("tool", "ToolDefinition.create(name, description, JSON schema, handler returning a String)");
            CopilotSession session = Agent.call("create_session", () -> client.createSession(config), timeout);
            if (session == null) {
                return;
            }
            for (JsonNode t : cfg.path("turns")) {
                if (!turn(session, c, t.path(0).asText(), t.path(1).asText(), turnWait, observed, api)) {
                    break;
                }
            }
            api.put("history", "CopilotSession.getMessages()");
            List<SessionEvent> history = Agent.call("get_history", () -> session.getMessages(), timeout);
            if (Tolerance.ok() && history != null) {
                observed.put("history", describeAll(history));
            }
            Tolerance.closeSession(session, timeout);
        } finally {
            observed.put("live", describeAll(c.events(0)));
            Agent.call("stop", () -> client.stop().thenApply(v -> Boolean.TRUE), timeout);
            // An application lives on after stop(): what the SDK started must go by itself.
            Agent.report.put("after_stop", Agent.Watch.gone(leak));
            Agent.report.put("loop_errors", Agent.loopErrorsSoFar());
        }
    }

    /** One scripted turn: sendAndWait with the turn's deadline as the SDK's own timeout (the
     *  harness's is 5 s later); whether it held is the harness's to judge. */
    @SuppressWarnings("unchecked")
    static boolean turn(CopilotSession session, Conversation c, String name, String prompt, double wait,
                        Map<String, Object> observed, Map<String, Object> api) {
        c.allow(!name.equals("denied"));
        int[] before = c.marks();
        api.put("turn", "CopilotSession.sendAndWait(MessageOptions, timeoutMs)");
        AssistantMessageEvent reply = Agent.call("turn:" + name,
                () -> session.sendAndWait(new MessageOptions().setPrompt(prompt), (long) (wait * 1000)), wait + 5);
        Map<String, Object> step = Agent.lastStep();
        Object error = step.get("error");
        if (error instanceof Map<?, ?> e && "TimeoutException".equals(e.get("type"))) {
            // The SDK's own deadline (sendAndWait's timeout): the turn never reached idle.
            ((Map<String, Object>) e).put("timeout", true);
            ((Map<String, Object>) e).put("source", "sdk");
        }
        boolean idle = c.events(before[2]).stream().anyMatch(e -> IDLE.equals(e.getType()));
        Map<String, Object> t = new LinkedHashMap<>();
        t.put("name", name);
        t.put("ok", step.get("ok"));
        t.put("seconds", step.get("seconds"));
        t.put("reply", reply == null || reply.getData() == null ? null : reply.getData().content());
        synchronized (c) {
            t.put("tool_ran", new ArrayList<>(c.ran.subList(before[0], c.ran.size())));
            t.put("asked", new ArrayList<>(c.asked.subList(before[1], c.asked.size())));
        }
        t.put("idle", idle);
        ((List<Map<String, Object>>) observed.get("turns")).add(t);
        return Boolean.TRUE.equals(step.get("ok"));
    }
}
