// Agent for com.github:copilot-sdk-java. Compiled by the harness against exactly one released
// version (the jar and its dependencies resolved by Maven), it starts that version's client on
// the given CLI (CopilotClientOptions.setCliPath, stdio) and prints one report line. The
// handshake (here): start / ping / getStatus / stop, then it watches what the SDK started until
// it is gone. A "rule" in the config runs the tolerance probe instead (Tolerance.java), "probe":
// "session" the session probe (Session.java).
//
// Usage: java -cp CLASSPATH Agent '{"cli_path": P, "step_timeout": 30, "leak": 5, "dead_cli": 5}'
//   tolerance: + "rule": R (or "rules": [R...], a batch), "event_wait": 6
//   session:   + "probe": "session", "model_url": U, "model": M, "tool": T, "turns": [[name, prompt]...],
//                "turn_timeout": 30
//
// The protocol window is read from the release itself: SdkProtocolVersion.get() and the
// client's private MIN_PROTOCOL_VERSION (by reflection: a read, never a change).

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.github.copilot.sdk.CopilotClient;
import com.github.copilot.sdk.SdkProtocolVersion;
import com.github.copilot.sdk.json.CopilotClientOptions;
import com.github.copilot.sdk.json.GetStatusResponse;
import com.github.copilot.sdk.json.PingResponse;

import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

public final class Agent {
    static final String PREFIX = "@@compat-matrix-report@@ ";
    static final String MARKER = "COMPAT_MATRIX_CELL";
    static final ObjectMapper JSON = new ObjectMapper();
    static final Map<String, Object> report = new LinkedHashMap<>();
    static final List<Map<String, Object>> steps = new ArrayList<>();
    /** What the SDK logged at WARNING or above (its event and reader threads report what they
     *  could not handle only there): the evidence a dropped message leaves. */
    static final List<String> loopErrors = Collections.synchronizedList(new ArrayList<>());
    // Held for the agent's life: java.util.logging keeps loggers only weakly.
    static final Logger SDK_LOG = Logger.getLogger("com.github.copilot");

    static double round(double x) {
        return Math.round(x * 10000.0) / 10000.0;
    }

    static Map<String, Object> errorInfo(Throwable err) {
        Throwable e = err;
        while ((e instanceof ExecutionException || e instanceof java.util.concurrent.CompletionException)
                && e.getCause() != null) {
            e = e.getCause();
        }
        StringWriter trace = new StringWriter();
        e.printStackTrace(new PrintWriter(trace));
        Map<String, Object> info = new LinkedHashMap<>();
        info.put("type", e.getClass().getSimpleName());
        info.put("module", e.getClass().getPackageName());
        info.put("message", String.valueOf(e.getMessage()));
        info.put("traceback", trace.toString());
        return info;
    }

    static Map<String, Object> step(String name, boolean ok, double seconds, Map<String, Object> error,
                                    Object result) {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("name", name);
        s.put("ok", ok);
        s.put("seconds", round(seconds));
        if (error != null) {
            s.put("error", error);
        }
        if (result != null) {
            s.put("result", result);
        }
        steps.add(s);
        return s;
    }

    /** One SDK call under the harness's deadline; a CLI that exited while the SDK still waits
     *  on it ends the call dead_cli seconds later (a hang the SDK had not noticed). */
    static <T> T call(String name, CompletableFuture<T> future, double timeout, Watch watch) {
        System.err.println("[agent] step " + name);
        long t0 = System.nanoTime();
        double deadline = timeout;
        while (true) {
            double elapsed = (System.nanoTime() - t0) / 1e9;
            try {
                T value = future.get(250, TimeUnit.MILLISECONDS);
                step(name, true, (System.nanoTime() - t0) / 1e9, null, null);
                return value;
            } catch (TimeoutException pending) {
                if (elapsed >= deadline) {
                    Map<String, Object> err = new LinkedHashMap<>();
                    err.put("type", "TimeoutError");
                    err.put("timeout", true);
                    err.put("source", "harness");
                    err.put("message", String.format("%s did not settle within %.0fs (harness deadline)", name, timeout));
                    step(name, false, elapsed, err, null);
                    return null;
                }
                if (watch != null && watch.poll()) {
                    step(name, false, elapsed, watch.failure(name), null);
                    return null;
                }
            } catch (InterruptedException | ExecutionException | RuntimeException failed) {
                step(name, false, (System.nanoTime() - t0) / 1e9, errorInfo(failed), null);
                return null;
            }
        }
    }

    /** call() on what make returns; a call that throws before handing back its future is
     *  that step's failure too (an application meets it at the same line). */
    static <T> T call(String name, java.util.concurrent.Callable<CompletableFuture<T>> make, double timeout) {
        CompletableFuture<T> future;
        long t0 = System.nanoTime();
        try {
            future = make.call();
        } catch (Exception | LinkageError failed) {
            System.err.println("[agent] step " + name);
            step(name, false, (System.nanoTime() - t0) / 1e9, errorInfo(failed), null);
            return null;
        }
        return call(name, future, timeout, null);
    }

    static Map<String, Object> declared() {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("SDK_PROTOCOL_VERSION", SdkProtocolVersion.get());
        d.put("bundled_cli", false);
        try {
            Field min = CopilotClient.class.getDeclaredField("MIN_PROTOCOL_VERSION");
            min.setAccessible(true);
            d.put("MIN_PROTOCOL_VERSION", min.getInt(null));
        } catch (ReflectiveOperationException | RuntimeException absent) {
            d.put("MIN_PROTOCOL_VERSION", null);
        }
        return d;
    }

    public static void main(String[] args) throws Exception {
        // Keep stdout for the report: anything the SDK prints goes to stderr.
        PrintStream out = System.out;
        System.setOut(System.err);
        try {
            run(args.length > 0 ? JSON.readTree(args[0]) : JSON.createObjectNode());
        } catch (Throwable failed) {
            report.put("harness_error", "agent failed: " + errorInfo(failed).get("traceback"));
        }
        report.put("steps", steps);
        out.println();
        out.println(PREFIX + JSON.writeValueAsString(report));
        out.flush();
        // The client is still alive here, as in an application: exit without closing it, so
        // its close() cannot hide what stop() left.
        Runtime.getRuntime().halt(0);
    }

    static void run(JsonNode cfg) throws Exception {
        report.put("schema", 1);
        report.put("sdk_name", "com.github:copilot-sdk-java");
        report.put("sdk_version", System.getProperty("compatmatrix.sdk.version", ""));
        report.put("warnings", new ArrayList<>());
        report.put("launched", new ArrayList<>());
        report.put("negotiated_protocol", null);
        report.put("observed_cli_version", null);
        report.put("env_names", new TreeSet<>(System.getenv().keySet()));
        report.put("declared", declared());
        double timeout = cfg.path("step_timeout").asDouble(30.0);
        double leak = cfg.path("leak").asDouble(5.0);
        double deadCli = cfg.path("dead_cli").asDouble(0.0);
        boolean tolerance = !cfg.path("rule").asText("").isEmpty() || cfg.has("rules");
        Watch watch = deadCli > 0 && !tolerance ? new Watch(deadCli) : null;

        step("import", true, 0.0, null, "on the class path at compile time");
        long t0 = System.nanoTime();
        CopilotClientOptions options = new CopilotClientOptions()
                .setCliPath(cfg.path("cli_path").asText())
                .setUseStdio(true)
                .setAutoStart(false)
                .setAutoRestart(false);
        if (!cfg.path("log_level").asText("").isEmpty()) {
            options.setLogLevel(cfg.path("log_level").asText());
        }
        CopilotClient client = new CopilotClient(options);
        step("construct", true, (System.nanoTime() - t0) / 1e9, null, null);
        Map<String, Object> api = new LinkedHashMap<>();
        api.put("options", "setCliPath, setUseStdio(true), setAutoStart(false), setAutoRestart(false)");
        report.put("api", api);

        if (tolerance) {
            captureSdkLog();
            Tolerance.run(client, cfg, timeout);
            return;
        }
        if ("session".equals(cfg.path("probe").asText(""))) {
            captureSdkLog();
            Session.run(client, cfg, timeout);
            return;
        }
        handshake(client, timeout, leak, watch);
    }

    static void handshake(CopilotClient client, double timeout, double leak, Watch watch) throws Exception {
        Object started = call("start", client.start().thenApply(v -> Boolean.TRUE), timeout, watch);
        if (started != null) {
            PingResponse pong = call("ping", client.ping("compat-matrix"), timeout, watch);
            if (pong != null) {
                report.put("ping_protocol", pong.protocolVersion());
                report.put("negotiated_protocol", pong.protocolVersion());
                steps.get(steps.size() - 1).put("result", Map.of("message", String.valueOf(pong.message())));
            }
            GetStatusResponse status = call("get_status", client.getStatus(), timeout, watch);
            if (status != null) {
                report.put("observed_cli_version", status.getVersion());
                steps.get(steps.size() - 1).put("result", Map.of("version", String.valueOf(status.getVersion()),
                        "protocol_version", status.getProtocolVersion()));
            }
        } else {
            report.put("stop_after_failed_start", true);
        }
        // stop(): the CLI is meant to exit here, so no watch.
        Object stopped = call("stop", client.stop().thenApply(v -> Boolean.TRUE), timeout, null);
        if (stopped == null) {
            call("force_stop", client.forceStop().thenApply(v -> Boolean.TRUE), timeout, null);
        }
        // An application lives on after stop(): what the SDK started must go by itself.
        report.put("after_stop", Watch.gone(leak));
    }

    /** Records what the SDK's loggers say at WARNING or above into loopErrors (as they still
     *  print it on stderr). */
    static void captureSdkLog() {
        SDK_LOG.addHandler(new Handler() {
            @Override
            public void publish(LogRecord r) {
                if (r.getLevel().intValue() < Level.WARNING.intValue()) {
                    return;
                }
                String msg = r.getLevel() + " " + r.getLoggerName() + ": " + r.getMessage();
                Throwable e = r.getThrown();
                for (int depth = 0; e != null && depth < 4; depth++, e = e.getCause()) {
                    msg += (depth == 0 ? ": " : " <- ") + e;
                }
                loopErrors.add(msg.length() > 1500 ? msg.substring(0, 1500) : msg);
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        });
    }

    /** A snapshot of loopErrors, for the report (the SDK's threads may still add to it). */
    static List<String> loopErrorsSoFar() {
        synchronized (loopErrors) {
            return new ArrayList<>(loopErrors);
        }
    }

    /** The step call() added last. */
    static Map<String, Object> lastStep() {
        return steps.get(steps.size() - 1);
    }

    /** What the SDK started, read from /proc only (reaping is the SDK's job). */
    static final class Watch {
        final double grace;
        final Map<Long, String> seen = new TreeMap<>();
        long goneSince = -1;

        Watch(double grace) {
            this.grace = grace;
        }

        static String[] stat(String pid) {
            try {
                String s = Files.readString(Path.of("/proc", pid, "stat"));
                return s.substring(s.lastIndexOf(')') + 2).trim().split("\\s+");
            } catch (Exception gone) {
                return null;
            }
        }

        /** Our direct children and how each ended ("" while alive). */
        static Map<Long, String> children() {
            Map<Long, String> found = new TreeMap<>();
            ProcessHandle.current().children().forEach(child -> {
                String[] f = stat(Long.toString(child.pid()));
                if (f == null) {
                    return;
                }
                if (!f[0].equals("Z")) {
                    found.put(child.pid(), "");
                    return;
                }
                long status = Long.parseLong(f[f.length - 1]);
                found.put(child.pid(), (status & 0x7f) == 0 ? "exit " + ((status >> 8) & 0xff) : "signal " + (status & 0x7f));
            });
            return found;
        }

        boolean poll() {
            Map<Long, String> now = children();
            for (Map.Entry<Long, String> e : seen.entrySet()) {
                if (!now.containsKey(e.getKey()) && e.getValue().isEmpty()) {
                    e.setValue("reaped");
                }
            }
            seen.putAll(now);
            boolean dead = !seen.isEmpty() && seen.values().stream().noneMatch(String::isEmpty);
            if (!dead) {
                goneSince = -1;
                return false;
            }
            if (goneSince < 0) {
                goneSince = System.nanoTime();
            }
            return (System.nanoTime() - goneSince) / 1e9 >= grace;
        }

        Map<String, Object> failure(String name) {
            List<String> exits = new ArrayList<>();
            seen.forEach((pid, how) -> exits.add("pid " + pid + ": " + how));
            Map<String, Object> err = new LinkedHashMap<>();
            err.put("type", "CliExitedUnnoticed");
            err.put("timeout", true);
            err.put("source", "watch");
            err.put("message", String.format("%s still waiting %.1fs after the CLI exited (%s); stopped after %.0fs, "
                    + "the SDK had not noticed", name, (System.nanoTime() - goneSince) / 1e9, String.join(", ", exits), grace));
            return err;
        }

        /** The live processes the SDK started: in our process group, or carrying our marker. */
        static Map<Long, String> sdkProcesses() {
            Map<Long, String> found = new TreeMap<>();
            long me = ProcessHandle.current().pid();
            String[] mine = stat("self");
            String group = mine == null ? "" : mine[2];
            String marker = System.getenv(MARKER);
            byte[] needle = marker == null ? null : (MARKER + "=" + marker).getBytes(StandardCharsets.UTF_8);
            ProcessHandle.allProcesses().forEach(p -> {
                if (p.pid() == me) {
                    return;
                }
                String pid = Long.toString(p.pid());
                String[] f = stat(pid);
                if (f == null || f.length < 3 || f[0].equals("Z") || f[0].equals("X")) {
                    return;
                }
                if (!f[2].equals(group) && !marked(pid, needle)) {
                    return;
                }
                try {
                    String cmd = new String(Files.readAllBytes(Path.of("/proc", pid, "cmdline")), StandardCharsets.UTF_8)
                            .replace('\0', ' ').trim();
                    found.put(p.pid(), cmd.length() > 400 ? cmd.substring(0, 400) : cmd);
                } catch (Exception gone) {
                    // exited meanwhile
                }
            });
            return found;
        }

        static boolean marked(String pid, byte[] needle) {
            if (needle == null) {
                return false;
            }
            try {
                byte[] env = Files.readAllBytes(Path.of("/proc", pid, "environ"));
                int start = 0;
                for (int i = 0; i <= env.length; i++) {
                    if (i == env.length || env[i] == 0) {
                        if (i - start == needle.length
                                && java.util.Arrays.equals(env, start, i, needle, 0, needle.length)) {
                            return true;
                        }
                        start = i + 1;
                    }
                }
            } catch (Exception unreadable) {
                return false;
            }
            return false;
        }

        /** Waits up to wait seconds for everything the SDK started to be gone. */
        static Map<String, Object> gone(double wait) throws InterruptedException {
            long t0 = System.nanoTime();
            Map<Long, Map<String, Object>> seen = new LinkedHashMap<>();
            while (true) {
                Map<Long, String> live = sdkProcesses();
                double now = round((System.nanoTime() - t0) / 1e9);
                live.forEach((pid, cmd) -> seen.computeIfAbsent(pid, k -> {
                    Map<String, Object> p = new LinkedHashMap<>();
                    p.put("pid", pid);
                    p.put("command", cmd);
                    p.put("gone_after", null);
                    return p;
                }));
                seen.forEach((pid, p) -> {
                    if (!live.containsKey(pid) && p.get("gone_after") == null) {
                        p.put("gone_after", now);
                    }
                });
                if (live.isEmpty() || (System.nanoTime() - t0) / 1e9 >= wait) {
                    break;
                }
                Thread.sleep(50);
            }
            List<Object> leaked = new ArrayList<>();
            double latest = 0.0;
            for (Map<String, Object> p : seen.values()) {
                if (p.get("gone_after") == null) {
                    leaked.add(p.get("command"));
                } else {
                    latest = Math.max(latest, (Double) p.get("gone_after"));
                }
            }
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("wait", wait);
            out.put("processes", new ArrayList<>(seen.values()));
            out.put("leaked", leaked);
            out.put("exit_after_stop_seconds", leaked.isEmpty() ? latest : null);
            return out;
        }
    }
}
