// Agent: one tolerance rule for one installed @github/copilot-sdk release. The shim between
// this SDK and the real CLI applies the rule; this agent reports what the application was
// handed, and the harness classifies it exactly as for the Python SDK.
//
// Result and notification rules: look at what ping / getStatus return and at what the client
// kept from the handshake. Event rules: open a real session (offline is enough), collect every
// event handed to the application, wait for the shim's mutated event and the canary behind it,
// then ping to prove the client still works. Errors the SDK throws where the application
// cannot catch them (uncaught exceptions, unhandled rejections) are the evidence of a loss.
//
// cfg (argv[2]): {sdk_dir, cli_path, rule or rules (a batch), step_timeout, event_wait, log_level}
import { cfg, finish, jsonable, openClient, report, step, stopClient } from "./copilot_node_common.mjs";

const MUTATED_ID = "00000000-0000-4000-8000-00000000c0de";
const CANARY_ID = "00000000-0000-4000-8000-00000000ca9a";
const UNKNOWN_FIELD = "compatMatrixUnknownField";
const UNKNOWN_VALUE = "compat_matrix_unknown_value";
const UNKNOWN_CAPABILITY = "compat-matrix.unknown-capability";

// Is `needle` (a key or a value) anywhere the application can reach from `obj`?
function contains(obj, needle, depth = 0, seen = new Set()) {
  if (obj === needle) return true;
  if (typeof obj === "string") return obj.includes(needle);
  if (obj === null || typeof obj !== "object" || depth > 6 || seen.has(obj)) return false;
  seen.add(obj);
  if (obj instanceof Map) return [...obj.entries()].some(([k, v]) => k === needle || contains(v, needle, depth + 1, seen));
  if (obj instanceof Set || Array.isArray(obj)) return [...obj].some((v) => contains(v, needle, depth + 1, seen));
  let keys;
  try { keys = Object.keys(obj); } catch { return false; }
  return keys.some((k) => {
    if (k === needle) return true;
    let v;
    try { v = obj[k]; } catch { return false; }
    return typeof v !== "function" && contains(v, needle, depth + 1, seen);
  });
}

function describe(event) {
  const data = event?.data;
  return {
    type: String(event?.type),
    // JavaScript keeps the wire's type string as the event's type: the raw type is the type.
    raw_type: typeof event?.type === "string" ? event.type : null,
    id: String(event?.id ?? ""),
    data_class: data === undefined ? null : (data?.constructor?.name ?? typeof data),
    message: jsonable(data?.message ?? null),
    role: jsonable(data?.role ?? null),
    name: jsonable(data?.name ?? null),
    has_unknown_field: contains(event, UNKNOWN_FIELD),
    has_unknown_value: contains(event, UNKNOWN_VALUE),
  };
}

async function openSession(sdk, client, handler) {
  const config = {};
  if (typeof sdk.approveAll === "function") config.onPermissionRequest = sdk.approveAll;
  const session = await client.createSession(config);
  session.on(handler);
  report.api.session = `createSession({${Object.keys(config).join(", ")}}) + session.on(handler)`;
  return session;
}

// Read the session's stored events back, as an application replaying a session does
// (getEvents from 1.0.0-beta.8, getMessages before), and describe what it was handed.
async function readHistory(session, observed) {
  const name = typeof session.getEvents === "function" ? "getEvents" : "getMessages";
  if (typeof session[name] !== "function") {
    report.not_applicable = "this release cannot read a session's events back";
    return;
  }
  report.api.history = `session.${name}()`;
  const events = await step("get_history", () => session[name]());
  if (!report.steps.at(-1).ok) return;
  const described = (Array.isArray(events) ? events : []).map(describe);
  observed.events = described.slice(-20);
  observed.canary = described.some((d) => d.id === CANARY_ID);
  observed.mutated = described.find((d) => d.id === MUTATED_ID) ?? null;
}

async function closeSession(session) {
  for (const name of ["disconnect", "destroy"]) {
    if (typeof session?.[name] === "function") return session[name]();
  }
  return null;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// One session-scoped rule's steps on a session of its own.
async function sessionRule(sdk, client, rule, observed, waitMs) {
  const events = [];
  const session = await step("create_session", () => openSession(sdk, client, (e) => events.push(e)));
  if (!session) return;
  if (rule.startsWith("history.")) {
    await readHistory(session, observed);
    await step("ping", () => client.ping("compat-matrix"));
    await step("close_session", () => closeSession(session));
    return;
  }
  const deadline = Date.now() + waitMs;
  while (Date.now() < deadline && !events.some((e) => e?.id === CANARY_ID)) await sleep(50);
  const described = events.map(describe);
  observed.events = described.slice(-20);
  observed.canary = described.some((d) => d.id === CANARY_ID);
  observed.mutated = described.find((d) => d.id === MUTATED_ID) ?? null;
  await step("ping", () => client.ping("compat-matrix"));
  await step("close_session", () => closeSession(session));
}

async function main() {
  // cfg.rules: a batch (one client; connection rules observed together, each session rule on a
  // session of its own, in this order, as the shim assigns them); cfg.rule: one rule alone.
  const rules = cfg.rules ?? [cfg.rule];
  const waitMs = Number(cfg.event_wait ?? 6) * 1000;
  const observed = (report.observed = {});
  const opened = await openClient();
  if (!opened) return;
  const { sdk, client } = opened;
  try {
    await step("start", () => client.start());
    if (!report.steps.at(-1).ok) return;
    if (/^(result|notification|request)\./.test(rules[0])) {
      const pong = await step("ping", () => client.ping("compat-matrix"));
      observed.ping_unknown_field = contains(pong, UNKNOWN_FIELD);
      if (typeof client.getStatus === "function") {
        const status = await step("get_status", () => client.getStatus());
        observed.status_unknown_field = contains(status, UNKNOWN_FIELD);
      }
      // Whatever the client kept from the handshake (capabilities, task kinds...).
      observed.client_has_unknown_capability = contains(client, UNKNOWN_CAPABILITY);
      observed.client_has_unknown_value = contains(client, UNKNOWN_VALUE);
      // A notification or request injected after the handshake lands (and is answered).
      await sleep(rules.some((r) => r.startsWith("request.")) ? 1000 : 500);
    } else if (typeof client.createSession !== "function") {
      report.not_applicable = "this release has no createSession";
    } else if (!cfg.rules) {
      await sessionRule(sdk, client, rules[0], observed, waitMs);
    } else {
      report.batch = {};
      for (const rule of rules) {
        const mark = report.steps.length;
        const errors = report.uncaught.length;
        const seen = {};
        await sessionRule(sdk, client, rule, seen, waitMs);
        report.batch[rule] = { steps: report.steps.slice(mark), observed: seen,
                               loop_errors: report.uncaught.slice(errors, errors + 10) };
      }
    }
  } finally {
    report.loop_errors = report.uncaught.slice(0, 10);
    await stopClient(client);
  }
}

await finish(main);
