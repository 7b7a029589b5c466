"""proc.run with real children: a grandchild must die, an escaped one must be found."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from matrix.execute import proc
from matrix.execute.proc import MARKER_VAR, Reaper, Request, find_marked, run

PY = sys.executable


def env(marker: str | None = None) -> dict[str, str]:
    e = {"PATH": os.environ["PATH"]}
    if marker:
        e[MARKER_VAR] = marker
    return e


def alive(pid: int) -> bool:
    """Still running 3 s from now? (A killed process can take a moment to leave /proc.)"""
    deadline = time.monotonic() + 3
    while True:
        try:
            with open(f"/proc/{pid}/stat") as f:
                running = f.read().rsplit(")", 1)[1].split()[0] != "Z"
        except FileNotFoundError:
            running = False
        if not running or time.monotonic() > deadline:
            return running
        time.sleep(0.05)


def spawner(pidfile: Path, new_session: bool = False, then_sleep: bool = False) -> str:
    """Code for a child that starts a sleeping grandchild and writes its pid to ``pidfile``."""
    return (
        "import subprocess, time\n"
        f"p = subprocess.Popen([{PY!r}, '-c', 'import time; time.sleep(600)'], start_new_session={new_session})\n"
        f"open({str(pidfile)!r}, 'w').write(str(p.pid))\n"
        + ("time.sleep(600)\n" if then_sleep else "")
    )


def test_exit_code_and_output(tmp_path: Path) -> None:
    res = run(Request((PY, "-c", "import sys; print('out'); print('err', file=sys.stderr); sys.exit(3)"),
                      env(), tmp_path, timeout=30))
    assert res.returncode == 3 and not res.timed_out
    assert res.stdout.strip() == "out" and res.stderr.strip() == "err"


def test_timeout_kills_the_whole_group_including_grandchild(tmp_path: Path) -> None:
    pidfile = tmp_path / "grandchild.pid"
    code = spawner(pidfile, then_sleep=True)
    t0 = time.monotonic()
    res = run(Request((PY, "-c", code), env(), tmp_path, timeout=2, grace=1))
    assert res.timed_out and res.returncode is None
    assert time.monotonic() - t0 < 15
    grandchild = int(pidfile.read_text())
    assert not alive(grandchild)


def test_grandchild_left_behind_is_killed_and_recorded(tmp_path: Path) -> None:
    pidfile = tmp_path / "orphan.pid"
    code = spawner(pidfile)
    res = run(Request((PY, "-c", code), env(), tmp_path, timeout=30, grace=1))
    assert res.returncode == 0
    assert len(res.leftovers) == 1 and "sleep(600)" in res.leftovers[0]
    assert not alive(int(pidfile.read_text()))


def test_process_that_left_the_group_is_found_by_marker(tmp_path: Path) -> None:
    pidfile = tmp_path / "daemon.pid"
    code = spawner(pidfile, new_session=True)
    res = run(Request((PY, "-c", code), env("m-" + os.urandom(4).hex()), tmp_path, timeout=30, grace=1))
    assert len(res.leftovers) == 1
    assert not alive(int(pidfile.read_text()))


def test_reaper_kill_all_ends_running_groups(tmp_path: Path) -> None:
    import threading

    reaper = Reaper()
    marker = "r-" + os.urandom(4).hex()
    results: list[proc.Result] = []
    t = threading.Thread(target=lambda: results.append(
        run(Request((PY, "-c", "import time; time.sleep(600)"), env(marker), tmp_path, timeout=300), reaper)))
    t.start()
    deadline = time.monotonic() + 10
    while not find_marked(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    reaper.kill_all()
    t.join(timeout=20)
    assert not t.is_alive()
    assert reaper.cancelled
    assert results and results[0].returncode == -9
    assert find_marked(marker) == []


def test_processes_of_a_killed_harness_are_swept_and_a_live_ones_are_not(tmp_path: Path) -> None:
    import subprocess

    from matrix.execute.proc import MARKER_VAR, sweep_orphans

    gone = subprocess.Popen([PY, "-c", "pass"])
    gone.wait()  # a harness pid that no longer exists
    base = {"PATH": "/usr/bin:/bin"}
    orphan = subprocess.Popen([PY, "-c", "import time; time.sleep(60)"],
                              env={**base, MARKER_VAR: f"{gone.pid}-orphan"}, start_new_session=True)
    ours = subprocess.Popen([PY, "-c", "import time; time.sleep(60)"],
                            env={**base, MARKER_VAR: f"{os.getpid()}-ours"}, start_new_session=True)
    try:
        deadline = time.monotonic() + 10
        while not (find_marked(f"{gone.pid}-orphan") and find_marked(f"{os.getpid()}-ours")):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert [pid for pid, _ in proc.marked_by(gone.pid)] == [orphan.pid]  # each run's own, none other's
        assert [pid for pid, _ in proc.marked_by(os.getpid(), gone.pid)] == sorted([orphan.pid, ours.pid])
        killed = sweep_orphans()
        assert len(killed) == 1 and "sleep(60)" in killed[0]
        assert orphan.wait(timeout=10) == -9
        assert ours.poll() is None  # a live harness's cell is left alone
    finally:
        ours.kill()
        ours.wait()


def test_a_child_that_says_it_only_waits_is_told_once_while_it_runs(tmp_path: Path) -> None:
    said = tmp_path / "waiting"
    told: list[float] = []
    code = (f"import time\ntime.sleep(0.3)\nopen({str(said)!r}, 'w').close()\ntime.sleep(1.0)\n"
            f"open({str(said)!r}, 'a').close()\n")
    t0 = time.monotonic()
    res = run(Request((PY, "-c", code), env(), tmp_path, timeout=30, waiting=said,
                      on_wait=lambda: told.append(time.monotonic() - t0)))
    assert res.ok and res.elapsed >= 1.3
    assert len(told) == 1 and 0.25 <= told[0] <= 1.0  # while the child still ran, not at its end
    quiet: list[float] = []
    res = run(Request((PY, "-c", "import time; time.sleep(0.3)"), env(), tmp_path, timeout=30,
                      waiting=tmp_path / "never", on_wait=lambda: quiet.append(0.0)))
    assert res.ok and quiet == []


def test_a_child_that_said_it_waits_still_meets_its_deadline(tmp_path: Path) -> None:
    said = tmp_path / "waiting"
    told: list[bool] = []
    code = f"import time\nopen({str(said)!r}, 'w').close()\ntime.sleep(600)\n"
    res = run(Request((PY, "-c", code), env(), tmp_path, timeout=1.0, grace=0.5, waiting=said,
                      on_wait=lambda: told.append(True)))
    assert res.timed_out and told == [True] and res.elapsed < 5


def test_kill_all_also_ends_what_was_started_without_the_runs_reaper(tmp_path: Path) -> None:
    """An install or a CLI's seed runs with no reaper, in a thread of its own: an interrupt
    ends it too, and the child it sent out of its group (marked with our pid) with it."""
    import threading

    pidfile = tmp_path / "daemon.pid"
    marker = proc.new_marker()
    results: list[proc.Result] = []
    t = threading.Thread(target=lambda: results.append(
        run(Request((PY, "-c", spawner(pidfile, new_session=True, then_sleep=True)), env(marker), tmp_path,
                    timeout=300))))
    t.start()
    deadline = time.monotonic() + 10
    while len(find_marked(marker)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(find_marked(marker)) == 2, "the child and its escaped grandchild never both ran"
    Reaper().kill_all()  # a reaper that never saw them
    assert find_marked(marker) == []  # gone when kill_all returns, not some time later
    t.join(timeout=20)
    assert results and results[0].returncode == -9
    assert not alive(int(pidfile.read_text()))


def test_end_all_leaves_alone_what_another_harness_started(tmp_path: Path) -> None:
    import subprocess

    theirs = subprocess.Popen([PY, "-c", "import time; time.sleep(60)"],
                              env={"PATH": "/usr/bin:/bin", MARKER_VAR: "1-theirs"}, start_new_session=True)
    try:
        deadline = time.monotonic() + 10
        while not find_marked("1-theirs"):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert proc.end_all() == ()
        assert theirs.poll() is None
    finally:
        theirs.kill()
        theirs.wait()


# Stands in for an SDK: runs each launcher it is sent, from a process of its own (as an
# SDK starts its CLI), and says whether the exec found the file busy.
_RUNNER = """
import errno, subprocess, sys
for line in sys.stdin:
    try:
        subprocess.run([line.strip()], check=True)
        print("ran", flush=True)
    except OSError as err:
        print("busy" if err.errno == errno.ETXTBSY else f"error {err}", flush=True)
"""


def test_a_launcher_written_while_other_threads_start_processes_is_never_busy(tmp_path: Path) -> None:
    """A child forked while a launcher is written holds it open for writing until its own
    exec; an SDK that runs the launcher meanwhile fails with ETXTBSY, "Text file busy" (its
    CLI never started). Threads that start processes, and threads that write a launcher and
    have another process run it at once, as a cell's SDK does: no run may find it busy."""
    import subprocess
    import threading

    stop = time.monotonic() + 3.0
    said: list[str] = []

    def starter() -> None:
        while time.monotonic() < stop:
            proc.start(["/bin/true"], start_new_session=True).wait()

    def launcher(i: int) -> None:
        path = tmp_path / f"launcher-{i}"
        sdk = proc.start([PY, "-c", _RUNNER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert sdk.stdin is not None and sdk.stdout is not None
        while time.monotonic() < stop:
            path.unlink(missing_ok=True)
            proc.write_executable(path, "#!/bin/sh\nexit 0\n")
            sdk.stdin.write(f"{path}\n")
            sdk.stdin.flush()
            said.append(sdk.stdout.readline().strip())
        sdk.communicate()  # closes its pipes

    threads = [threading.Thread(target=starter) for _ in range(3)]
    threads += [threading.Thread(target=launcher, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(said) > 100  # enough runs to meet the race: without the turns, dozens a second are busy
    assert set(said) == {"ran"}, {s: said.count(s) for s in set(said)}
