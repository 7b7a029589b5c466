"""Failure-contract agent for github-copilot-sdk (the Copilot SDK's version negotiation
design: "if handshake fails, the SDK closes pipes, terminates the CLI, and pending tasks are
rejected with the same error").

Run only on pairs the handshake matrix measured as refused or launch-failed. It starts the
client with a second call queued behind the start, and after the start fails it does NOT
call stop(): whether the CLI is still alive then is the SDK's own doing.

Usage: python copilot_python_contract.py '{"cli_path": ..., "step_timeout": ...}'
"""

import asyncio
import importlib.util
import json
import os
import sys
import time

_spec = importlib.util.spec_from_file_location(
    "handshake_agent", os.path.join(os.path.dirname(os.path.abspath(__file__)), "copilot_python_handshake.py"))
base = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(base)
report = base.report
GRACE = 5.0


async def main(cfg):
    t = float(cfg.get("step_timeout", 30))
    client = base.client_for(cfg)
    if client is None:
        return
    contract = report.setdefault("contract", {})
    t0 = time.monotonic()
    start = asyncio.ensure_future(client.start())
    await asyncio.sleep(0.05)  # the start is under way: its request is pending
    queued = asyncio.ensure_future(client.ping("queued behind start") if hasattr(client, "ping") else asyncio.sleep(0))
    done, _ = await asyncio.wait({start}, timeout=t)
    if not done:
        report["steps"].append({"name": "start", "ok": False, "error": {
            "type": "TimeoutError", "message": f"start did not settle within {t:.0f}s", "timeout": True}})
        start.cancel()
    elif start.exception() is None:
        report["steps"].append({"name": "start", "ok": True})
        contract["start_succeeded"] = True
    else:
        report["steps"].append({"name": "start", "ok": False, "error": base.error_info(start.exception())})
    failed_at = time.monotonic()
    contract["start_seconds"] = round(failed_at - t0, 3)
    try:
        await asyncio.wait_for(queued, timeout=10)
        contract["queued_call"] = {"ok": True}
    except asyncio.TimeoutError:
        contract["queued_call"] = {"ok": False, "error": "still pending 10 s after start failed"}
    except Exception as exc:
        contract["queued_call"] = {"ok": False, "error": f"{type(exc).__name__}: {base.describe(exc)}"[:1000]}
    contract["queued_settled_after_start_s"] = round(time.monotonic() - failed_at, 3)
    # The SDK may take a moment to terminate the CLI on its own: watch for up to GRACE seconds.
    gone = await base.watch_gone(max(GRACE - (time.monotonic() - failed_at), 0.0))
    contract["cli_alive_after_failure"] = gone["leaked"]
    if not gone["leaked"]:
        contract["cli_gone_after_s"] = round(time.monotonic() - failed_at, 2)


if __name__ == "__main__":
    config = json.loads(sys.argv[1])
    try:
        asyncio.run(main(config))
    except BaseException as exc:
        import traceback

        report["harness_error"] = f"agent failed: {type(exc).__name__}: {exc}\n{traceback.format_exc()[-3000:]}"
    print(base.PREFIX + json.dumps(report, default=repr), flush=True)
    sys.stdout.flush()
    os._exit(0)  # do not let interpreter shutdown tidy up after the SDK: that is what we measure
