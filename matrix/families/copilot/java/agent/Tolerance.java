// The tolerance probe: the shim between this SDK and the real CLI applies one mutation rule;
// this reports what the application was handed, in the report the Go, Python and Node agents
// give, classified by the harness the same way. Result, notification and request rules: what
// ping and getStatus return and what the client kept from the handshake. Event rules: a real
// session (createSession with onEvent, every permission approved), every event handed to the
// application until the well-formed event behind the mutated one arrives, then a ping to prove
// the client still works. History rules: the session's stored events read back (getMessages).
// What the SDK could not handle it reports only to its loggers: that is the evidence
// (loop_errors).

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.github.copilot.sdk.CopilotClient;
import com.github.copilot.sdk.CopilotSession;
import com.github.copilot.sdk.generated.SessionEvent;
import com.github.copilot.sdk.json.PermissionHandler;
import com.github.copilot.sdk.json.SessionConfig;

import java.lang.reflect.Array;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;

final class Tolerance {
    static final String MUTATED_ID = "00000000-0000-4000-8000-00000000c0de";
    static final String CANARY_ID = "00000000-0000-4000-8000-00000000ca9a";
    static final String UNKNOWN_FIELD = "compatMatrixUnknownField";
    static final String UNKNOWN_VALUE = "compat_matrix_unknown_value";
    static final String UNKNOWN_CAPABILITY = "compat-matrix.unknown-capability";
    /** How an application would see an event as JSON: its own getters, dates as text. */
    static final ObjectMapper VIEW = new ObjectMapper().findAndRegisterModules()
            .disable(SerializationFeature.FAIL_ON_EMPTY_BEANS)
            .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS);

    private Tolerance() {
    }

    /** The rules of this run: "rules" (a batch: one client; connection rules observed together,
     *  each session rule on a session of its own, in this order, as the shim assigns them), or
     *  "rule" alone. */
    static List<String> rules(JsonNode cfg) {
        List<String> rules = new ArrayList<>();
        cfg.path("rules").forEach(r -> rules.add(r.asText()));
        if (rules.isEmpty()) {
            rules.add(cfg.path("rule").asText());
        }
        return rules;
    }

    static void run(CopilotClient client, JsonNode cfg, double timeout) throws InterruptedException {
        List<String> rules = rules(cfg);
        String first = rules.get(0);
        double wait = cfg.path("event_wait").asDouble(6.0);
        Map<String, Object> observed = new LinkedHashMap<>();
        Agent.report.put("observed", observed);
        Agent.report.put("loop_errors", new ArrayList<>());
        try {
            Agent.call("start", () -> client.start().thenApply(v -> Boolean.TRUE), timeout);
            if (!ok()) {
                return;
            }
            if (first.startsWith("result.") || first.startsWith("notification.") || first.startsWith("request.")) {
                Object pong = Agent.call("ping", () -> client.ping("compat-matrix"), timeout);
                observed.put("ping_unknown_field", seen(pong, UNKNOWN_FIELD));
                Object status = Agent.call("get_status", () -> client.getStatus(), timeout);
                observed.put("status_unknown_field", seen(status, UNKNOWN_FIELD));
                // Whatever the client kept from the handshake (capabilities, task kinds...).
                observed.put("client_has_unknown_capability", reaches(client, UNKNOWN_CAPABILITY));
                observed.put("client_has_unknown_value", reaches(client, UNKNOWN_VALUE));
                // A notification or request injected after the handshake lands (and is answered).
                Thread.sleep(rules.stream().anyMatch(r -> r.startsWith("request.")) ? 1000 : 500);
                return;
            }
            if (!cfg.has("rules")) {
                sessionRule(client, first, observed, wait, timeout);
                return;
            }
            Map<String, Object> batch = new LinkedHashMap<>();
            Agent.report.put("batch", batch);
            for (String rule : rules) {
                int mark = Agent.steps.size();
                int errors = Agent.loopErrorsSoFar().size();
                Map<String, Object> own = new LinkedHashMap<>();
                sessionRule(client, rule, own, wait, timeout);
                List<String> loop = Agent.loopErrorsSoFar();
                Map<String, Object> seg = new LinkedHashMap<>();
                seg.put("steps", new ArrayList<>(Agent.steps.subList(mark, Agent.steps.size())));
                seg.put("observed", own);
                seg.put("loop_errors", new ArrayList<>(loop.subList(Math.min(errors, loop.size()), loop.size())));
                batch.put(rule, seg);
            }
        } finally {
            Agent.call("stop", () -> client.stop().thenApply(v -> Boolean.TRUE), timeout);
            Agent.report.put("loop_errors", Agent.loopErrorsSoFar());
        }
    }

    /** One session-scoped rule's steps on a session of its own. */
    static void sessionRule(CopilotClient client, String rule, Map<String, Object> observed, double wait,
                            double timeout) throws InterruptedException {
        List<SessionEvent> events = Collections.synchronizedList(new ArrayList<>());
        CopilotSession session = Agent.call("create_session", () -> openSession(client, events::add), timeout);
        if (session == null) {
            return;
        }
        if (rule.startsWith("history.")) {
            readHistory(session, observed, timeout);
            Agent.call("ping", () -> client.ping("compat-matrix"), timeout);
            closeSession(session, timeout);
            return;
        }
        long deadline = System.nanoTime() + (long) (wait * 1e9);
        while (!hasCanary(snapshot(events)) && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        observeEvents(snapshot(events), observed);
        Agent.call("ping", () -> client.ping("compat-matrix"), timeout);
        closeSession(session, timeout);
    }

    static boolean ok() {
        return Boolean.TRUE.equals(Agent.lastStep().get("ok"));
    }

    static List<SessionEvent> snapshot(List<SessionEvent> events) {
        synchronized (events) {
            return new ArrayList<>(events);
        }
    }

    static boolean hasCanary(List<SessionEvent> events) {
        return events.stream().anyMatch(e -> CANARY_ID.equals(String.valueOf(e.getId())));
    }

    /** createSession with every permission approved and the handler registered through the
     *  config's onEvent: before the session's first event, as the SDK advises. */
    @SuppressWarnings("unchecked")
    static CompletableFuture<CopilotSession> openSession(CopilotClient client,
                                                        java.util.function.Consumer<SessionEvent> handler) {
        SessionConfig config = new SessionConfig().setOnPermissionRequest(PermissionHandler.APPROVE_ALL)
                .setOnEvent(handler);
        ((Map<String, Object>) Agent.report.get("api")).put("session",
                "createSession(SessionConfig.setOnPermissionRequest(PermissionHandler.APPROVE_ALL).setOnEvent(handler))");
        return client.createSession(config);
    }

    /** The events (the last 20), whether the canary arrived, and the mutated event as handed over. */
    static void observeEvents(List<SessionEvent> events, Map<String, Object> observed) {
        List<Map<String, Object>> described = new ArrayList<>();
        for (SessionEvent e : events) {
            described.add(describe(e));
        }
        observed.put("canary", described.stream().anyMatch(d -> CANARY_ID.equals(d.get("id"))));
        observed.put("mutated", described.stream().filter(d -> MUTATED_ID.equals(d.get("id"))).findFirst()
                .orElse(null));
        observed.put("events", new ArrayList<>(described.subList(Math.max(0, described.size() - 20),
                described.size())));
    }

    /** Reads the session's stored events back, as an application replaying a session does. */
    @SuppressWarnings("unchecked")
    static void readHistory(CopilotSession session, Map<String, Object> observed, double timeout) {
        ((Map<String, Object>) Agent.report.get("api")).put("history", "CopilotSession.getMessages()");
        List<SessionEvent> history = Agent.call("get_history", () -> session.getMessages(), timeout);
        if (!ok()) {
            return;
        }
        observeEvents(history == null ? List.of() : history, observed);
    }

    static void closeSession(CopilotSession session, double timeout) {
        // close() destroys the session on the CLI (session.destroy) and waits up to 5 s for it.
        Agent.call("close_session", () -> CompletableFuture.supplyAsync(() -> {
            session.close();
            return Boolean.TRUE;
        }), timeout);
    }

    /** An event as the application reads it: its type, id, data and whether the unknown field
     *  or value reached it. Java keeps the wire's type string as the event's type (an event type
     *  it does not know is an UnknownSessionEvent carrying it). */
    static Map<String, Object> describe(SessionEvent event) {
        Object data = dataOf(event);
        JsonNode view;
        try {
            view = VIEW.valueToTree(data);
        } catch (RuntimeException unserializable) {
            view = VIEW.createObjectNode();
        }
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("type", String.valueOf(event.getType()));
        d.put("raw_type", event.getType());
        d.put("id", String.valueOf(event.getId()));
        d.put("data_class", data == null ? null : data.getClass().getSimpleName());
        d.put("message", plain(view == null ? null : view.get("message")));
        d.put("role", plain(view == null ? null : view.get("role")));
        d.put("name", plain(view == null ? null : view.get("name")));
        d.put("has_unknown_field", seen(event, UNKNOWN_FIELD));
        d.put("has_unknown_value", seen(event, UNKNOWN_VALUE));
        return d;
    }

    /** The event's data (getData() of its class), or null when it has none. */
    static Object dataOf(Object event) {
        try {
            Method getter = event.getClass().getMethod("getData");
            return getter.invoke(event);
        } catch (ReflectiveOperationException | RuntimeException none) {
            return null;
        }
    }

    /** A JSON value as itself: a number stays a number (a field whose type changed shows it). */
    static Object plain(JsonNode node) {
        if (node == null || node.isNull() || node.isMissingNode()) {
            return null;
        }
        try {
            return VIEW.treeToValue(node, Object.class);
        } catch (Exception unreadable) {
            return node.toString();
        }
    }

    /** Is needle anywhere the application can reach from value: its JSON view, or its state. */
    static boolean seen(Object value, String needle) {
        if (value == null) {
            return false;
        }
        try {
            if (VIEW.writeValueAsString(value).contains(needle)) {
                return true;
            }
        } catch (Exception unserializable) {
            // its state below
        }
        return reaches(value, needle);
    }

    /** Is needle in the state held by value (its fields, followed six deep through the SDK's own
     *  objects, records, collections, maps, futures and JSON trees; the JDK's internals aside)? */
    static boolean reaches(Object value, String needle) {
        return reaches(value, needle, 0, Collections.newSetFromMap(new IdentityHashMap<>()));
    }

    static boolean reaches(Object v, String needle, int depth, Set<Object> visited) {
        if (v == null) {
            return false;
        }
        if (v instanceof CharSequence || v instanceof Number || v instanceof Boolean || v instanceof Enum
                || v instanceof java.util.UUID || v instanceof java.time.temporal.Temporal) {
            return v.toString().contains(needle);
        }
        if (v instanceof JsonNode) {
            return v.toString().contains(needle);
        }
        if (depth > 6 || !visited.add(v)) {
            return false;
        }
        try {
            if (v instanceof Map<?, ?> m) {
                for (Map.Entry<?, ?> e : new ArrayList<>(m.entrySet())) {
                    if (String.valueOf(e.getKey()).contains(needle) || reaches(e.getValue(), needle, depth + 1, visited)) {
                        return true;
                    }
                }
                return false;
            }
            if (v instanceof Collection<?> c) {
                for (Object o : c.toArray()) {
                    if (reaches(o, needle, depth + 1, visited)) {
                        return true;
                    }
                }
                return false;
            }
            if (v.getClass().isArray()) {
                if (v.getClass().getComponentType().isPrimitive()) {
                    return false;
                }
                for (int i = 0; i < Array.getLength(v); i++) {
                    if (reaches(Array.get(v, i), needle, depth + 1, visited)) {
                        return true;
                    }
                }
                return false;
            }
            if (v instanceof Optional<?> o) {
                return reaches(o.orElse(null), needle, depth + 1, visited);
            }
            if (v instanceof AtomicReference<?> r) {
                return reaches(r.get(), needle, depth + 1, visited);
            }
            if (v instanceof CompletableFuture<?> f) {
                return f.isDone() && !f.isCompletedExceptionally() && reaches(f.getNow(null), needle, depth + 1,
                        visited);
            }
        } catch (RuntimeException changing) {
            return false;
        }
        Class<?> type = v.getClass();
        if (!type.isRecord() && !type.getName().startsWith("com.github.copilot.")) {
            return false;
        }
        for (Class<?> k = type; k != null && k != Object.class; k = k.getSuperclass()) {
            for (Field f : k.getDeclaredFields()) {
                if (Modifier.isStatic(f.getModifiers()) || f.getType().isPrimitive()) {
                    continue;
                }
                try {
                    f.setAccessible(true);
                    if (reaches(f.get(v), needle, depth + 1, visited)) {
                        return true;
                    }
                } catch (ReflectiveOperationException | RuntimeException closed) {
                    // a field we may not read
                }
            }
        }
        return false;
    }
}
