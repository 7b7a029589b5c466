// Agent: one real conversation through one installed @github/copilot-sdk release, its CLI's
// model the harness's scripted stand-in on 127.0.0.1 (the session's provider option).
//
// As an application would: start the client, create a session with the stand-in as its
// provider, one tool and a permission handler, send each scripted turn and wait until the
// session is idle, read the history back, close the session, stop. It reports each step,
// every event the application was handed, what the permission handler was asked and
// answered and what the tool ran; the harness classifies them. Each API is chosen by what the
// release exports and its objects have, never by its version number.
//
// cfg (argv[2]): {sdk_dir, cli_path, model_url, model, tool, turns: [[name, prompt]...],
//                 step_timeout, turn_timeout, leak, log_level}
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { cfg, finish, jsonable, openClient, report, step, stopClient, watchGone } from "./copilot_node_common.mjs";

const IDLE = "session.idle";
const TURN_MS = Number(cfg.turn_timeout ?? 30) * 1000;

// The event types the release declares (its type declarations: `type: "session.idle"`).
// JavaScript keeps the wire's type as the event's type, so an event the release has no type for
// is still handed over as is: it reaches the application as an unknown it can read raw.
function declarations() {
  const texts = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory() && entry.name !== "node_modules") walk(path);
      else if (entry.name.endsWith(".d.ts")) texts.push(readFileSync(path, "utf8"));
    }
  };
  try { walk(join(cfg.sdk_dir, "dist")); } catch { return null; }
  return texts.join("\n");
}
const DECLARED = declarations();
const KNOWN = DECLARED === null ? null
  : new Set([...DECLARED.matchAll(/type:\s*"([a-z_]+(?:\.[a-z_]+)+)"/g)].map((m) => m[1]));
// Where the release's SessionConfig declares `onEvent`, the handler is registered before the
// session's first event (as its docs advise); subscribing once createSession returned misses them.
const EARLY = DECLARED !== null && /\bonEvent\?:\s*SessionEventHandler/.test(DECLARED);
const describe = (e) => ({ type: String(e?.type), raw_type: typeof e?.type === "string" ? e.type : null,
                           unknown: KNOWN !== null && !KNOWN.has(String(e?.type)),
                           data_class: e?.data?.constructor?.name ?? typeof e?.data });

// The application's permission handler: approves its own tool always and the CLI's built-in
// tools while `allow` is set, in the release's own result shape (what its approveAll gives).
function permissions(sdk) {
  const self = { allow: true, asked: [] };
  const approve = typeof sdk.approveAll === "function" ? sdk.approveAll : () => ({ kind: "approved" });
  report.api.permission = typeof sdk.approveAll === "function" ? "approveAll's result, a denial of its kind"
    : "{kind: 'approved' | 'denied-interactively-by-user'}";
  self.handler = async (request, invocation) => {
    const kind = String(typeof request?.kind === "function" ? request.kind() : request?.kind);
    const approved = await approve(request, invocation);
    const allowed = self.allow || kind === "custom-tool";
    self.asked.push({ kind, allowed });
    if (allowed) return approved;
    const deny = approved?.kind === "approve-once" ? "reject" : "denied-interactively-by-user";
    return deny === "reject" ? { kind: "reject", feedback: "compat-matrix denies it" } : { ...approved, kind: deny };
  };
  return self;
}

// The application's tool: it returns the text it is given, upper-cased.
function makeTool(sdk, ran) {
  const parameters = { type: "object", properties: { text: { type: "string" } }, required: ["text"] };
  const handler = async (args) => {
    const text = String(args?.text ?? args?.arguments?.text ?? "");
    ran.push(text);
    return text.toUpperCase();
  };
  const description = "Returns the text it is given, upper-cased.";
  if (typeof sdk.defineTool === "function") {
    report.api.tool = "defineTool(name, {description, parameters (JSON schema), handler})";
    return sdk.defineTool(cfg.tool, { description, parameters, handler });
  }
  report.api.tool = "{name, description, parameters, handler}";
  return { name: cfg.tool, description, parameters, handler };
}

async function turn(session, prompt, events) {
  const message = { prompt };
  if (typeof session.sendAndWait === "function") {
    report.api.turn = "sendAndWait({prompt}, timeout)";
    return session.sendAndWait(message, TURN_MS);
  }
  report.api.turn = "send({prompt}), then the first session.idle";
  const seen = events.length;
  await session.send(message);
  const deadline = Date.now() + TURN_MS;
  while (Date.now() < deadline) {
    const since = events.slice(seen);
    if (since.some((e) => e?.type === IDLE)) return since.findLast((e) => e?.type === "assistant.message");
    await new Promise((r) => setTimeout(r, 50));
  }
  throw Object.assign(new Error(`no ${IDLE} within ${TURN_MS / 1000}s`), { harnessTimeout: true });
}

async function closeSession(session) {
  for (const name of ["disconnect", "destroy"]) {
    if (typeof session?.[name] === "function") return session[name]();
  }
  return null;
}

async function main() {
  const observed = (report.observed = { turns: [], live: [], history: null });
  const opened = await openClient();
  if (!opened) return;
  const { sdk, client } = opened;
  const events = [];
  const ran = [];
  const perm = permissions(sdk);
  try {
    await step("start", () => client.start());
    if (!report.steps.at(-1).ok) return;
    if (typeof client.createSession !== "function") {
      report.not_applicable = "this release has no createSession";
      return;
    }
    const config = { model: cfg.model, tools: [makeTool(sdk, ran)], onPermissionRequest: perm.handler,
                     provider: { type: "openai", baseUrl: `${cfg.model_url}/v1`, apiKey: "compat-matrix",
                                 wireApi: "completions" } };
    if (EARLY) config.onEvent = (e) => events.push(e);
    report.api.session = EARLY ? "createSession({model, provider, tools, onPermissionRequest, onEvent})"
      : "createSession({model, provider, tools, onPermissionRequest}) + session.on(handler)";
    const session = await step("create_session", async () => {
      const s = await client.createSession(config);
      if (!EARLY) s.on((e) => events.push(e));
      return s;
    });
    if (!session) return;
    for (const [name, prompt] of cfg.turns) {
      perm.allow = name !== "denied";
      const [ranBefore, askedBefore, seen] = [ran.length, perm.asked.length, events.length];
      const message = await step(`turn:${name}`, () => turn(session, prompt, events));
      const last = report.steps.at(-1);
      observed.turns.push({ name, ok: last.ok, seconds: last.seconds, reply: message?.data?.content ?? null,
                            tool_ran: ran.slice(ranBefore), asked: perm.asked.slice(askedBefore),
                            idle: events.slice(seen).some((e) => e?.type === IDLE) });
      if (!last.ok) break;
    }
    const name = typeof session.getEvents === "function" ? "getEvents" : "getMessages";
    if (typeof session[name] === "function") {
      report.api.history = `session.${name}()`;
      const history = await step("get_history", () => session[name]());
      if (Array.isArray(history)) observed.history = history.map(describe);
    }
    await step("close_session", () => closeSession(session));
  } finally {
    observed.live = events.map(describe);
    report.loop_errors = report.uncaught.slice(0, 10);
    await stopClient(client);
    report.after_stop = await watchGone(Number(cfg.leak ?? 5) * 1000);
    report.observed.tool_results = jsonable(ran);
  }
}

await finish(main);
