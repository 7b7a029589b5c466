"""Handshake agent for github-copilot-sdk. Runs with the SDK venv's interpreter, never
inside the harness: it imports only the SDK and the stdlib.

Usage: python copilot_python_handshake.py '{"cli_path": ..., "step_timeout": ...}'

It constructs that version's client pointed at the given CLI through the version's own
API (found by inspecting the constructor, not by a table of versions), starts it (the
SDK's own negotiation), pings and asks for status where the version has those calls,
stops it, and prints one report line. Only the SDK's own calls are wrapped as SDK
errors; a failure to drive the API (our side) is reported as ``harness_error``.
"""

import asyncio
import contextlib
import importlib
import importlib.metadata
import inspect
import json
import logging
import os
import sys
import time
import traceback
import warnings

PREFIX = "@@compat-matrix-report@@ "
DIST = "github-copilot-sdk"

report = {"schema": 1, "sdk_name": DIST, "steps": [], "warnings": [], "declared": {}, "api": {},
          # Names only: the harness checks that no credential-like variable reached the SDK.
          "env_names": sorted(os.environ)}


def note(msg):
    # Progress on stderr: if the harness has to kill us, the last line says where we were.
    print(f"[agent] {msg}", file=sys.stderr, flush=True)


def describe(exc):
    """The message, with the sub-exceptions of a group (their text is the real reason)."""
    text = str(exc) or repr(exc)
    if isinstance(exc, BaseExceptionGroup):
        text += ": " + "; ".join(f"{type(e).__name__}: {describe(e)}" for e in exc.exceptions)
    return text


def error_info(exc, timeout=False):
    return {
        "type": type(exc).__name__,
        "module": type(exc).__module__,
        "message": describe(exc),
        "traceback": "".join(traceback.format_exception(exc))[-6000:],
        "timeout": timeout or isinstance(exc, (TimeoutError, asyncio.TimeoutError)),
    }


def jsonable(value):
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        pass
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if hasattr(value, "__dict__"):
        return {k: jsonable(v) for k, v in vars(value).items() if not k.startswith("_")}
    return repr(value)


def field(obj, *names):
    for name in names:
        if isinstance(obj, dict) and name in obj:
            return obj[name]
        if hasattr(obj, name):
            return getattr(obj, name)
    return None


class Capture(logging.Handler):
    def emit(self, record):
        report["warnings"].append(f"log {record.name} {record.levelname}: {record.getMessage()}"[:2000])


def cli_children():
    """{pid: exit code or None while alive} of our child processes (the CLI the SDK ran:
    the launcher execs it in place). Read from /proc only: reaping them is the SDK's job."""
    found = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/children") as f:
                pids = f.read().split()
        except OSError:
            continue
        for pid in pids:
            try:
                with open(f"/proc/{pid}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            # A zombie's stat ends with its wait status (Linux 3.5+).
            found[int(pid)] = os.waitstatus_to_exitcode(int(fields[-1])) if fields[0] == "Z" else None
    return found


class CliWatch:
    """Notices a CLI that has exited while an SDK call still waits on it. ``grace`` seconds
    after the last CLI we saw is gone, the call is stopped: the SDK has not noticed, and
    nothing can answer it any more (recorded as such, a hang, never a verdict of ours)."""

    def __init__(self, grace):
        self.grace = grace
        self.seen = {}  # pid -> exit code, None while alive
        self.gone_since = None

    def poll(self):
        now = cli_children()
        for pid in self.seen:
            if self.seen[pid] is None and pid not in now:
                self.seen[pid] = "reaped"
        self.seen.update(now)
        dead = bool(self.seen) and all(code is not None for code in self.seen.values())
        if not dead:
            self.gone_since = None
        elif self.gone_since is None:
            self.gone_since = time.monotonic()
        return dead and time.monotonic() - self.gone_since >= self.grace


WATCH = None  # a CliWatch when the harness asked for one (config "dead_cli")
MARKER = "COMPAT_MATRIX_CELL"
# Where to say that from here on this agent only waits (config "waiting"): a file the harness
# looks for, and gives the cell's CPU slot to another cell meanwhile. Said once a leak wait
# has lasted SAY_WAITING_AFTER with something still alive: a CLI that goes is gone sooner.
WAITING = None
SAY_WAITING_AFTER = 0.5


def say_waiting():
    global WAITING
    if WAITING:
        with contextlib.suppress(OSError):
            open(WAITING, "x").close()
        WAITING = None


def sdk_processes():
    """{pid: command} of the live processes the SDK started: those in our process group, and
    those carrying our cell's marker variable (a native CLI whose Node loader has exited is
    re-parented and may have left the group; the marker is in its environment still). Read
    from /proc only; a zombie has exited and is not counted."""
    me, group = os.getpid(), os.getpgrp()
    marker = os.environ.get(MARKER)
    needle = f"{MARKER}={marker}".encode() if marker else None
    found = {}
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if fields[0] in ("Z", "X"):
                continue
            if int(fields[2]) != group:
                if needle is None:
                    continue
                with open(f"/proc/{name}/environ", "rb") as f:
                    if needle not in f.read().split(b"\0"):
                        continue
            with open(f"/proc/{name}/cmdline", "rb") as f:
                found[int(name)] = f.read().replace(b"\0", b" ").decode(errors="replace").strip()[:400]
        except (OSError, IndexError, ValueError):
            continue
    return found


def _started(pid):
    """The start time of a live ``pid`` (a zombie has exited), None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return None if fields[0] in ("Z", "X") else fields[19]


# Every this many polls /proc is read whole (a process the SDK started late); in between only
# the processes already found are looked at: a whole scan reads every process's stat and
# environment, and 100 of them per leak wait were a measurable share of a run's CPU.
FULL_SCAN_EVERY = 10


async def watch_gone(wait):
    """Wait up to ``wait`` seconds, the event loop running as an application's would, for
    every process the SDK started to be gone. Each one's seconds until gone (None: still
    alive at the end), and the seconds until the last was gone (None: something outlived
    the wait, a leak). Whether anything is left is always decided by a whole scan."""
    t0 = time.monotonic()
    seen = {}
    started = {}
    polls = 0
    while True:
        if polls % FULL_SCAN_EVERY == 0:
            live = sdk_processes()
            for pid in live:
                started.setdefault(pid, _started(pid))
        else:
            live = {pid: c for pid, c in live.items() if started.get(pid) is not None
                    and _started(pid) == started[pid]}
        polls += 1
        now = round(time.monotonic() - t0, 3)
        for pid, command in live.items():
            seen.setdefault(pid, {"pid": pid, "command": command, "gone_after": None})
        for pid, entry in seen.items():
            if pid not in live and entry["gone_after"] is None:
                entry["gone_after"] = now
        if live and now >= SAY_WAITING_AFTER:
            say_waiting()
        if not live or now >= wait:
            if polls % FULL_SCAN_EVERY != 1 and sdk_processes().keys() - live.keys():
                polls = 0  # one the quick look missed: scan whole and go on
                continue
            break
        await asyncio.sleep(0.05)
    processes = list(seen.values())
    leaked = [p for p in processes if p["gone_after"] is None]
    return {"wait": wait, "processes": processes[:20], "leaked": [p["command"] for p in leaked][:10],
            "exit_after_stop_seconds": None if leaked else max((p["gone_after"] for p in processes), default=0.0)}


async def step(name, make, timeout, watch=True):
    """Run one SDK call with our deadline; record ok/error/seconds/result."""
    note(f"step {name}")
    t0 = time.monotonic()
    entry = {"name": name, "ok": False}
    report["steps"].append(entry)
    task = asyncio.ensure_future(make())
    try:
        while True:
            left = timeout - (time.monotonic() - t0)
            done, _ = await asyncio.wait({task}, timeout=min(0.25, max(left, 0)) if WATCH and watch else left)
            if done:
                break
            if time.monotonic() - t0 >= timeout:
                task.cancel()
                raise asyncio.TimeoutError
            if WATCH and watch and WATCH.poll():
                task.cancel()
                codes = ", ".join(f"pid {p}: {'exit ' + str(c) if isinstance(c, int) else c}"
                                  for p, c in WATCH.seen.items())
                entry["error"] = {"type": "CliExitedUnnoticed", "module": "", "timeout": True, "source": "watch",
                                  "message": f"{name} still waiting {time.monotonic() - WATCH.gone_since:.1f}s after "
                                             f"the CLI exited ({codes}); stopped after {WATCH.grace:.0f}s, the SDK "
                                             f"had not noticed", "traceback": ""}
                return None
        result = task.result()
        entry["ok"] = True
        entry["result"] = jsonable(result)
        return result
    except asyncio.TimeoutError as exc:
        entry["error"] = error_info(exc, timeout=True)
        if time.monotonic() - t0 >= timeout - 0.05:
            entry["error"]["message"] = f"{name} did not settle within {timeout:.0f}s (harness deadline)"
            entry["error"]["source"] = "harness"
        else:  # the SDK's own request timeout fired first
            said = f": {exc}" if str(exc) else " (no message)"
            entry["error"]["message"] = (f"the SDK gave up waiting after {time.monotonic() - t0:.1f}s, "
                                         f"{type(exc).__name__}{said}")
            entry["error"]["source"] = "sdk"
        return None
    except Exception as exc:  # the SDK's own failure: classified by the harness
        entry["error"] = error_info(exc)
        return None
    finally:
        if not task.done():
            task.cancel()
        entry["seconds"] = round(time.monotonic() - t0, 4)


def declared(copilot):
    found = {}
    names = ("SDK_PROTOCOL_VERSION", "MIN_PROTOCOL_VERSION", "_MIN_PROTOCOL_VERSION", "CLI_VERSION")
    for mod_name in ("copilot.sdk_protocol_version", "copilot._sdk_protocol_version",
                     "copilot.client", "copilot._cli_version"):
        try:
            mod = importlib.import_module(mod_name)
        except ImportError:
            continue
        for n in names:
            if isinstance(getattr(mod, n, None), (int, str)):
                found[n.lstrip("_")] = getattr(mod, n)
    import os

    bundled = os.path.join(os.path.dirname(copilot.__file__), "bin", "copilot")
    found["bundled_cli"] = os.path.exists(bundled)
    return found


def construct(copilot, cli_path, log_level, no_login):
    """Build the client through this version's own constructor, with its defaults for
    everything but the CLI path (and, when asked, auto-login turned off)."""
    params = inspect.signature(copilot.CopilotClient.__init__).parameters
    if "connection" in params:
        conn_cls = getattr(copilot, "RuntimeConnection", None)
        if conn_cls is None:
            raise LookupError("constructor takes connection= but copilot.RuntimeConnection is missing")
        kwargs = {"connection": conn_cls.for_stdio(path=cli_path), "log_level": log_level}
        if no_login and "use_logged_in_user" in params:
            kwargs["use_logged_in_user"] = False
        report["api"] = {"style": "keyword connection", "call": "CopilotClient(connection=RuntimeConnection.for_stdio(path=P), ...)"}
        return copilot.CopilotClient(**kwargs)
    if "config" in params:
        cfg_cls = getattr(copilot, "SubprocessConfig", None)
        if cfg_cls is None:
            raise LookupError("constructor takes config= but copilot.SubprocessConfig is missing")
        cfg_params = inspect.signature(cfg_cls).parameters
        kwargs = {"cli_path": cli_path, "use_stdio": True, "log_level": log_level}
        if no_login and "use_logged_in_user" in cfg_params:
            kwargs["use_logged_in_user"] = False
        report["api"] = {"style": "config dataclass", "call": "CopilotClient(SubprocessConfig(cli_path=P, ...), auto_start=False)"}
        return copilot.CopilotClient(cfg_cls(**kwargs), auto_start=False)
    if "options" in params:
        # Old options dict: keys a version does not know are read with .get() and ignored.
        opts = {"cli_path": cli_path, "use_stdio": True, "log_level": log_level, "auto_start": False}
        if no_login:
            opts["use_logged_in_user"] = False
        report["api"] = {"style": "options dict", "call": "CopilotClient({'cli_path': P, ...})"}
        return copilot.CopilotClient(opts)
    raise LookupError(f"unrecognised CopilotClient signature {list(params)}")


def client_for(cfg):
    """Import the SDK and build its client for the probes that follow a handshake known to
    import and construct (tolerance, contract). None, with harness_error set, if we could
    not drive this version's constructor."""
    import importlib.metadata

    import copilot

    global WAITING
    WAITING = cfg.get("waiting")
    report["sdk_version"] = importlib.metadata.version(DIST)
    report["steps"].append({"name": "import", "ok": True})
    try:
        client = construct(copilot, cfg["cli_path"], cfg.get("log_level", "error"), bool(cfg.get("no_login")))
    except (LookupError, TypeError) as exc:
        report["harness_error"] = f"could not construct the client: {type(exc).__name__}: {exc}"
        return None
    report["steps"].append({"name": "construct", "ok": True})
    return client


async def main(cfg):
    global WATCH, WAITING
    WAITING = cfg.get("waiting")
    cli_path = cfg["cli_path"]
    t = float(cfg.get("step_timeout", 30))
    if cfg.get("dead_cli"):
        WATCH = CliWatch(float(cfg["dead_cli"]))
    logging.getLogger().addHandler(Capture(level=logging.WARNING))
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(
        lambda _loop, ctx: report["warnings"].append(f"asyncio: {ctx.get('message')} {ctx.get('exception')!r}"[:2000])
    )

    note("step import")
    t0 = time.monotonic()
    try:
        copilot = importlib.import_module("copilot")
        report["sdk_version"] = importlib.metadata.version(DIST)
        report["steps"].append({"name": "import", "ok": True, "seconds": round(time.monotonic() - t0, 4)})
    except Exception as exc:
        report["steps"].append({"name": "import", "ok": False, "seconds": round(time.monotonic() - t0, 4),
                                "error": error_info(exc)})
        return
    try:
        report["declared"] = declared(copilot)
    except Exception as exc:
        report["declared"] = {"error": repr(exc)}

    note("step construct")
    t0 = time.monotonic()
    try:
        client = construct(copilot, cli_path, cfg.get("log_level", "error"), bool(cfg.get("no_login")))
    except (LookupError, TypeError) as exc:
        # We called the API wrongly: a bug in this agent, never the SDK's crash.
        report["harness_error"] = f"could not construct the client: {type(exc).__name__}: {exc}"
        return
    except Exception as exc:
        report["steps"].append({"name": "construct", "ok": False, "seconds": round(time.monotonic() - t0, 4),
                                "error": error_info(exc)})
        return
    report["steps"].append({"name": "construct", "ok": True, "seconds": round(time.monotonic() - t0, 4)})

    started = False
    try:
        await step("start", client.start, t)
        started = report["steps"][-1]["ok"]
        if started:
            report["negotiated_protocol"] = getattr(client, "_negotiated_protocol_version", None)
            if hasattr(client, "ping"):
                res = await step("ping", lambda: client.ping("compat-matrix"), t)
                proto = field(res, "protocolVersion", "protocol_version")
                if report["negotiated_protocol"] is None and isinstance(proto, int):
                    report["negotiated_protocol"] = proto
            if hasattr(client, "get_status"):
                res = await step("get_status", client.get_status, t)
                report["observed_cli_version"] = field(res, "version")
            else:
                report["steps"].append({"name": "get_status", "ok": True, "skipped": "no get_status in this version"})
    finally:
        res = await step("stop", client.stop, t, watch=False)  # the CLI is meant to exit here
        stop = report["steps"][-1]
        # Up to 0.1.28 stop() returns the cleanup errors instead of raising them.
        if stop["ok"] and isinstance(res, list) and res:
            stop["ok"] = False
            stop["error"] = {"type": "StopErrors", "module": "", "message": "; ".join(map(str, res))[:4000],
                             "traceback": "", "timeout": False}
        if not stop["ok"] and hasattr(client, "force_stop"):
            await step("force_stop", client.force_stop, t, watch=False)
        if not started:
            stop["after_failed_start"] = True
        # An application lives on after stop(): what the SDK started must go by itself.
        report["after_stop"] = await watch_gone(float(cfg.get("leak", 5)))


if __name__ == "__main__":
    config = json.loads(sys.argv[1])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            asyncio.run(main(config))
        except BaseException as exc:  # our own bug outside the SDK's calls
            report["harness_error"] = f"agent failed: {type(exc).__name__}: {exc}\n{traceback.format_exc()[-3000:]}"
        # ResourceWarnings are the interpreter tidying up after the SDK, not the SDK talking.
        report["warnings"].extend(f"warning {w.category.__name__}: {w.message}"[:2000] for w in caught
                                  if not issubclass(w.category, ResourceWarning))
    print(PREFIX + json.dumps(report, default=repr), flush=True)
