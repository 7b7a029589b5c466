"""A warm start for Python agents: import an SDK once, then fork one fresh child per cell.

Runs with the SDK venv's interpreter (stdlib only). Importing some SDK releases costs more
than the CLI's whole start and handshake (github-copilot-sdk 1.0 spends about 0.8 s
building its generated RPC types), and it is the same work in every cell. A forked child
gets its own copy of the imported modules (copy on write): nothing it changes reaches the
server or another cell, and the server never runs probe code itself.

Usage: python -I python_forkserver.py '["copilot"]'

First line out: {"ready": true} or {"ready": false, "why": ...}: an import that fails,
warns, or starts a thread is not preloaded at all (the harness then starts the agent the
usual way, so what it says reaches the cell's report). Then one JSON request per line in:
{"id", "argv": [script, *args], "env", "cwd", "stdout", "stderr"}; out: {"id", "pid"} when
the child exists and {"id", "code"} when it has ended (code as subprocess reports it).
"""

import importlib
import json
import os
import runpy
import select
import signal
import sys
import threading
import traceback
import warnings


def send(msg):
    os.write(1, (json.dumps(msg) + "\n").encode())


def preload(names):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            for name in names:
                importlib.import_module(name)
        except BaseException as exc:  # the agent will meet (and report) the same failure
            return f"import failed: {type(exc).__name__}: {exc}"
    if caught:
        return f"import warned: {caught[0].category.__name__}: {caught[0].message}"
    if threading.active_count() > 1:
        return "import started a thread (forking would copy it half-way)"
    return None


def child(req, wake_fds):
    """Become the cell's process: own session, its environment, its files, its script."""
    code = 1
    try:
        os.setsid()
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for fd in wake_fds:
            os.close(fd)
        os.chdir(req["cwd"])
        null = os.open(os.devnull, os.O_RDONLY)
        out = os.open(req["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        err = os.open(req["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        for src, dst in ((null, 0), (out, 1), (err, 2)):
            os.dup2(src, dst)
            os.close(src)
        os.environ.clear()
        os.environ.update(req["env"])
        import tempfile
        tempfile.tempdir = None  # recomputed from this cell's TMPDIR
        sys.argv = list(req["argv"])
        runpy.run_path(sys.argv[0], run_name="__main__")
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if not isinstance(exc.code, (int, type(None))):
            print(exc.code, file=sys.stderr)
    except BaseException:
        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def serve():
    why = preload(json.loads(sys.argv[1]))
    send({"ready": why is None, "why": why})
    if why is not None:
        return
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # only to wake select
    children = {}
    buffer = b""
    while True:
        try:
            ready, _, _ = select.select([0, wake_r], [], [])
        except InterruptedError:
            ready = []
        if wake_r in ready:
            os.read(wake_r, 4096)
        while children:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                break
            send({"id": children.pop(pid), "code": os.waitstatus_to_exitcode(status)})
        if 0 in ready:
            data = os.read(0, 65536)
            if not data:
                return  # the harness closed us: the cells' children are theirs to reap
            buffer += data
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                req = json.loads(line)
                sys.stdout.flush()
                sys.stderr.flush()
                pid = os.fork()
                if pid == 0:
                    child(req, (wake_r, wake_w))
                children[pid] = req["id"]
                send({"id": req["id"], "pid": pid})


if __name__ == "__main__":
    serve()
