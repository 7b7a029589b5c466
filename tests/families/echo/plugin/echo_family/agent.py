"""Runs inside the SDK's own venv: one handshake, one call, one stop, reported as one JSON
line on stdout. Only the standard library and the SDK under test are importable here."""

import json
import sys
import time


def main() -> None:
    report: dict[str, object] = {"ok": False}
    started = time.monotonic()
    try:
        import echo_sdk

        client = echo_sdk.Client(sys.argv[1])
        report["protocol"] = client.start()
        report["answered"] = client.echo("ping") == "ping"
        client.stop()
        report["ok"] = bool(report["answered"])
    except Exception as err:  # what the SDK raised is the measurement
        report.update(type=type(err).__name__, message=str(err))
    report["seconds"] = round(time.monotonic() - started, 3)
    print(json.dumps(report), flush=True)


main()
