// Shared by the Node agents: import one installed @github/copilot-sdk release by file URL,
// build its client through the release's own API, run steps under a deadline, report.
//
// Every release is ESM and some export only "import", so a bare specifier from here would
// not resolve: the package is imported from the npm prefix the harness installed it into.
// The client API is chosen by what the module exports, never by its version number: 1.0+
// take `connection: RuntimeConnection.forStdio({path})` and silently ignore `cliPath`.
import { readFileSync, readdirSync, existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { createRequire, syncBuiltinESMExports } from "node:module";
import { esmEntry } from "./copilot_node_entry.mjs";

export const PREFIX = "@@compat-matrix-report@@ ";
const PKG = "@github/copilot-sdk";
export const cfg = JSON.parse(process.argv[2] || "{}");
export const STEP_MS = Number(cfg.step_timeout ?? 35) * 1000;
// timeouts.dead_cli: stop a call still waiting this long after every process the SDK
// spawned has exited (0: off). Old releases never notice a CLI that refused their flags.
const DEAD_CLI_MS = Number(cfg.dead_cli ?? 0) * 1000;
export const report = { schema: 1, sdk_name: PKG, steps: [], warnings: [], declared: {}, api: {}, launched: [],
                 node: process.version, node_warnings: [], uncaught: [],
                 // Names only: the harness checks that no credential-like variable reached the SDK.
                 env_names: Object.keys(process.env).sort() };

// Every process the SDK spawns: the SDK's `import { spawn } from "node:child_process"` is a
// live binding that syncBuiltinESMExports() refreshes, so this sees a bundled CLI too.
export const spawned = [];
{
  const cp = createRequire(import.meta.url)("node:child_process");
  const real = cp.spawn;
  cp.spawn = function (...args) {
    const child = real.apply(this, args);
    spawned.push(child);
    return child;
  };
  syncBuiltinESMExports();
}

// Old releases let a dead CLI's EPIPE escape as an uncaught exception; recorded, not fatal
// to the agent, so the report still prints.
process.on("unhandledRejection", (e) => report.uncaught.push(`unhandledRejection: ${e?.stack || e}`.slice(0, 2000)));
process.on("uncaughtException", (e) => report.uncaught.push(`uncaughtException: ${e?.stack || e}`.slice(0, 2000)));
process.on("warning", (w) => report.node_warnings.push(`${w.name}: ${w.message}`.slice(0, 500)));

export const progress = (m) => process.stderr.write(`[agent] ${m}\n`);

export function errorInfo(e, timeout = false) {
  const info = { type: e?.constructor?.name || typeof e, module: "", message: String(e?.message ?? e),
                 traceback: String(e?.stack ?? "").slice(-4000), timeout };
  if (e?.code !== undefined) info.message = `${info.message} (code ${e.code})`;
  if (/copilot-sdk/.test(info.traceback)) info.module = PKG;
  else if (/vscode-jsonrpc/.test(info.traceback)) info.module = "vscode-jsonrpc";
  return info;
}

export function jsonable(v) {
  if (v === undefined) return null;
  try {
    return JSON.parse(JSON.stringify(v, (_k, x) => (x instanceof Error ? { type: x.constructor.name, message: x.message } : x)));
  } catch {
    return String(v);
  }
}

class CliExitedUnnoticed extends Error {}

// How every process the SDK spawned ended ("pid 7: exit 1"), or null while one still runs
// (or none was spawned). Node reaps them itself and keeps each one's exit on its object.
function cliExits() {
  if (!spawned.length || spawned.some((c) => c.exitCode === null && c.signalCode === null)) return null;
  return spawned.map((c) => `pid ${c.pid}: ${c.signalCode ? `signal ${c.signalCode}` : `exit ${c.exitCode}`}`)
    .join(", ");
}

// Rejects ``fail`` once every spawned process has been gone DEAD_CLI_MS while the call waits.
function watchCli(name, fail) {
  let goneSince = null;
  return setInterval(() => {
    const exits = cliExits();
    if (exits === null) {
      goneSince = null;
      return;
    }
    goneSince ??= performance.now();
    const waited = performance.now() - goneSince;
    if (waited >= DEAD_CLI_MS) {
      fail(Object.assign(new CliExitedUnnoticed(`${name} still waiting ${(waited / 1000).toFixed(1)}s after the CLI `
        + `exited (${exits}); stopped after ${DEAD_CLI_MS / 1000}s, the SDK had not noticed`), { harnessTimeout: true }));
    }
  }, 250);
}

// ``watch``: false for stop and force_stop, where the CLI is meant to exit.
export async function step(name, make, watch = true) {
  progress(`step ${name}`);
  const entry = { name, ok: false };
  report.steps.push(entry);
  const t0 = performance.now();
  let timer, watcher;
  try {
    const deadline = new Promise((_, reject) => {
      timer = setTimeout(() => reject(Object.assign(new Error(`${name} did not settle within ${STEP_MS / 1000}s`),
        { harnessTimeout: true })), STEP_MS);
      if (DEAD_CLI_MS && watch) watcher = watchCli(name, reject);
    });
    const result = await Promise.race([Promise.resolve().then(make), deadline]);
    entry.ok = true;
    entry.result = jsonable(result);
    return result;
  } catch (e) {
    entry.error = errorInfo(e, Boolean(e?.harnessTimeout));
    return undefined;
  } finally {
    clearTimeout(timer);
    clearInterval(watcher);
    entry.seconds = Math.round(performance.now() - t0) / 1000;
  }
}

// What the release declares in its own source: the protocol window, a pinned or bundled CLI.
export function declared(pj) {
  const src = (f) => { try { return readFileSync(join(cfg.sdk_dir, "dist", f), "utf8"); } catch { return ""; } };
  const client = src("client.js");
  const d = { engines: pj.engines?.node ?? null };
  let m = src("sdkProtocolVersion.js").match(/SDK_PROTOCOL_VERSION = (\d+)/);
  if (m) d.SDK_PROTOCOL_VERSION = Number(m[1]);
  m = client.match(/const MIN_PROTOCOL_VERSION = (\d+)/);
  if (m) d.MIN_PROTOCOL_VERSION = Number(m[1]);
  m = src("cliVersion.js").match(/COPILOT_CLI_VERSION = "([^"]+)"/);
  if (m) d.CLI_VERSION = m[1];
  d.exact_match = /serverVersion !== expectedVersion/.test(client);
  d.sends_connect = /internalRpc\.connect\(/.test(client);
  const deps = { ...(pj.dependencies ?? {}), ...(pj.optionalDependencies ?? {}) };
  d.bundled_cli = Object.keys(deps).some((n) => n === "@github/copilot" || n.startsWith("@github/copilot-sdk-"));
  return d;
}

export function construct(sdk, cliPath, logLevel) {
  const { CopilotClient, RuntimeConnection } = sdk;
  if (typeof CopilotClient !== "function") throw new TypeError("the module exports no CopilotClient");
  if (typeof RuntimeConnection?.forStdio === "function") {
    report.api = { constructor: "connection", call: "new CopilotClient({connection: RuntimeConnection.forStdio({path}), logLevel})" };
    return new CopilotClient({ connection: RuntimeConnection.forStdio({ path: cliPath }), logLevel });
  }
  report.api = { constructor: "options", call: "new CopilotClient({cliPath, logLevel})" };
  return new CopilotClient({ cliPath, logLevel });
}


// Import the release and build its client. Returns the client, or undefined when the import
// or the constructor failed (recorded as steps) or the release has no code at all.
export async function openClient() {
  progress("step import");
  let t0 = performance.now();
  let sdk, pj;
  try {
    pj = JSON.parse(readFileSync(join(cfg.sdk_dir, "package.json"), "utf8"));
    report.sdk_version = pj.version;
    report.declared = declared(pj);
    if (!existsSync(join(cfg.sdk_dir, esmEntry(pj)))) {
      const files = readdirSync(cfg.sdk_dir).join(", ");
      throw Object.assign(new Error(`the release has no code to import (${esmEntry(pj)} is missing; it contains: ${files})`),
        { noCode: true });
    }
    sdk = await import(pathToFileURL(join(cfg.sdk_dir, esmEntry(pj))).href);
    report.steps.push({ name: "import", ok: true, seconds: Math.round(performance.now() - t0) / 1000 });
  } catch (e) {
    report.steps.push({ name: "import", ok: false, seconds: Math.round(performance.now() - t0) / 1000, error: errorInfo(e) });
    if (e?.noCode) report.no_code = true;
    return undefined;
  }
  if (cfg.import_only) return undefined;
  progress("step construct");
  t0 = performance.now();
  try {
    const client = construct(sdk, cfg.cli_path, cfg.log_level ?? "error");
    report.steps.push({ name: "construct", ok: true, seconds: Math.round(performance.now() - t0) / 1000 });
    return { sdk, client };
  } catch (e) {
    if (e instanceof TypeError && !report.api.call) {
      report.harness_error = `could not construct the client: ${e.message}`;
    } else {
      report.steps.push({ name: "construct", ok: false, seconds: Math.round(performance.now() - t0) / 1000, error: errorInfo(e) });
    }
    return undefined;
  }
}

// Always stop (before 1.0.13 a failed start leaves the CLI running until stop()), and record
// what the SDK spawned.
export async function stopClient(client) {
  const stopped = await step("stop", () => client.stop(), false);
  const stop = report.steps.at(-1);
  if (stop.ok && Array.isArray(stopped) && stopped.length) {
    // stop() resolves to the errors it met instead of throwing them (every release).
    stop.ok = false;
    stop.error = { type: "StopErrors", module: PKG, traceback: "", timeout: false,
                   message: stopped.map((e) => e?.message ?? String(e)).join("; ").slice(0, 4000) };
  }
  if (!stop.ok && typeof client.forceStop === "function") await step("force_stop", () => client.forceStop(), false);
  report.launched = spawned.map((c) => [...(c.spawnargs ?? [])].join(" "));
}

const MARKER = "COMPAT_MATRIX_CELL";

// pid -> command of the live processes the SDK started: those in our process group, and those
// carrying our cell's marker variable (a native CLI whose loader exited has left the group but
// keeps the marker in its environment). Read from /proc only; a zombie has exited.
function sdkProcesses() {
  const statOf = (pid) => readFileSync(`/proc/${pid}/stat`, "latin1").split(")").at(-1).trim().split(/\s+/);
  const group = statOf("self")[2];
  const needle = process.env[MARKER] ? `${MARKER}=${process.env[MARKER]}` : null;
  const found = new Map();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const fields = statOf(name);
      if (fields[0] === "Z" || fields[0] === "X") continue;
      if (fields[2] !== group) {
        if (!needle || !readFileSync(`/proc/${name}/environ`, "latin1").split("\0").includes(needle)) continue;
      }
      found.set(Number(name), readFileSync(`/proc/${name}/cmdline`, "utf8").replaceAll("\0", " ").trim().slice(0, 400));
    } catch {
      // gone while we looked
    }
  }
  return found;
}

// Said once a leak wait has lasted this long with something still alive (a CLI that goes is
// gone sooner): the file the harness named (cfg.waiting) tells it this agent only waits from
// then on, and it gives the cell's CPU slot to another cell meanwhile.
const SAY_WAITING_AFTER = 0.5;
let saidWaiting = false;
function sayWaiting() {
  if (saidWaiting || !cfg.waiting) return;
  saidWaiting = true;
  try { writeFileSync(cfg.waiting, "", { flag: "wx" }); } catch { /* said already, or no sandbox left */ }
}

// Wait up to ``waitMs``, the event loop running as an application's would, for every process
// the SDK started to be gone: each one's seconds until gone (null: still alive at the end),
// and the seconds until the last was gone (null: something outlived the wait, a leak).
export async function watchGone(waitMs) {
  const t0 = performance.now();
  const seen = new Map();
  for (;;) {
    const live = sdkProcesses();
    const now = Math.round(performance.now() - t0) / 1000;
    for (const [pid, command] of live) if (!seen.has(pid)) seen.set(pid, { pid, command, gone_after: null });
    for (const [pid, entry] of seen) if (!live.has(pid) && entry.gone_after === null) entry.gone_after = now;
    if (live.size && now >= SAY_WAITING_AFTER) sayWaiting();
    if (!live.size || now * 1000 >= waitMs) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const processes = [...seen.values()];
  const leaked = processes.filter((p) => p.gone_after === null);
  return { wait: waitMs / 1000, processes: processes.slice(0, 20), leaked: leaked.map((p) => p.command).slice(0, 10),
           exit_after_stop_seconds: leaked.length ? null : Math.max(0, ...processes.map((p) => p.gone_after)) };
}

// Print the report and exit: a start() that never settled keeps the event loop alive.
export async function finish(main) {
  try {
    await main();
  } catch (e) {
    report.harness_error = `agent failed: ${e?.stack || e}`.slice(0, 3000);
  }
  process.stdout.write(PREFIX + JSON.stringify(report) + "\n", () => process.exit(0));
}
