// Agent: the handshake of one installed @github/copilot-sdk release against one CLI:
// import, construct, start, ping, getStatus, stop. Prints one report line.
//
// cfg (argv[2]): {sdk_dir, cli_path, step_timeout, log_level, import_only, leak}
import { cfg, finish, openClient, report, step, stopClient, watchGone } from "./copilot_node_common.mjs";

async function main() {
  const opened = await openClient();
  if (!opened) return;
  const { client } = opened;
  try {
    await step("start", () => client.start());
    if (report.steps.at(-1).ok) {
      const pong = await step("ping", () => client.ping("compat-matrix"));
      report.ping_protocol = pong?.protocolVersion ?? null;
      // 0.1.32+ keep what they negotiated; earlier releases checked ping's value; 0.1.9 checks nothing.
      report.negotiated_protocol = client.negotiatedProtocolVersion
        ?? (typeof client.verifyProtocolVersion === "function" ? pong?.protocolVersion ?? null : null);
      if (typeof client.getStatus === "function") {
        const status = await step("get_status", () => client.getStatus());
        report.observed_cli_version = status?.version ?? null;
      } else {
        report.steps.push({ name: "get_status", ok: true, skipped: "this release has no getStatus()" });
      }
    }
  } finally {
    await stopClient(client);
    // An application lives on after stop(): what the SDK started must go by itself.
    report.after_stop = await watchGone(Number(cfg.leak ?? 5) * 1000);
  }
}

await finish(main);
