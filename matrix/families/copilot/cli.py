"""The @github/copilot CLI side: its entry point, the Node runtime it needs, and the
launcher every probe points the SDK at.

The runtime is measured, not looked up: each runtime we can provide is tried with
``--version`` in a sandbox, oldest first, and the first that answers is recorded in the
prefix. A release installed without its native binary (the registry does not serve it,
``matrix/ecosystems/npm_optional.py``) runs its JS build, which refuses Node 20."""

from __future__ import annotations

import json
import platform
import re
import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from matrix.ecosystems.npm_env import NpmPrefix
from matrix.errors import InfraError
from matrix.execute import proc
from matrix.execute.cache import dir_size
from matrix.execute.sandbox import sandbox
from matrix.execute.storage import write_atomic
from matrix.families.copilot.cli_seed import Seed, make_seed
from matrix.families.copilot.compile_cache import PORTABLE, asked_status, make_compile_cache

__all__ = ["CliInstall", "Runtime", "RuntimeSource", "does_not_start", "first_runtime", "platform_label",
           "prepare_cli", "read_launches", "self_reported_version", "write_launcher"]

_VERSION = re.compile(r"(\d+\.\d+\.\d+(?:-[0-9A-Za-z.]+)?)")
RUNTIME_FILE = ".compat-matrix-runtime.json"
SAYS_FILE = ".compat-matrix-says.json"  # self_reported_version's answer


@dataclass(frozen=True)
class Runtime:
    label: str  # "node20", "node24"
    node: Path


@dataclass(frozen=True)
class RuntimeSource:
    """A runtime we can provide; ``get`` installs it on first use (node@24 from npm)."""

    label: str
    get: Callable[[], Runtime]


@dataclass(frozen=True)
class CliInstall:
    version: str
    entry: Path  # the JS file npm links as the `copilot` command
    runtime: Runtime | None  # None: no runtime we have could start it
    version_output: str
    runtime_failures: dict[str, str]
    seed: Seed | None = None  # its first-launch unpack, shared read-only by every cell
    compile_cache: Path | None = None  # what it compiles at start, copied into every cell's TMPDIR
    # Optional packages (the native binary) the registry does not serve: npm installed the
    # CLI without them and its loader runs the JavaScript fallback.
    not_served: tuple[str, ...] = ()
    home: Path | None = None  # the installed prefix: what is asked of the release once is kept there


def platform_label() -> str:
    """This machine as npm's platform packages name it (``linux-x64``)."""
    machine = platform.machine().lower()
    return f"{sys.platform}-{ {'x86_64': 'x64', 'amd64': 'x64', 'aarch64': 'arm64'}.get(machine, machine)}"


def does_not_start(cli: CliInstall, package: str) -> str | None:
    """Why no runtime we have starts this CLI release by itself (its own ``--version``, each
    runtime tried), or None when one does: a fact about the release on this platform, the same
    for every SDK."""
    if cli.runtime is not None:
        return None
    why = "; ".join(dict.fromkeys(f.split(": ", 1)[-1].strip() for f in cli.runtime_failures.values())) or "no runtime"
    served = f" ({', '.join(cli.not_served)} not served by the registry)" if cli.not_served else ""
    return (f"{package} {cli.version} does not start on {platform_label()}: `copilot --version` fails with every "
            f"Node runtime tried ({', '.join(cli.runtime_failures) or 'none'}): {why[:400]}{served}")


def bin_entry(prefix: NpmPrefix) -> Path:
    meta = prefix.package_json()
    raw = meta.get("bin")
    if isinstance(raw, dict):
        rel = raw.get("copilot") or next(iter(raw.values()))
    else:
        rel = raw
    if not isinstance(rel, str):
        raise InfraError(f"{prefix.package}@{prefix.version}", "package.json has no bin entry")
    return prefix.package_dir / rel


def first_runtime(stamp: Path, runtimes: list[RuntimeSource],
                  trial: Callable[[Runtime], tuple[str | None, str]]) -> tuple[Runtime | None, dict[str, str], str]:
    """The first runtime, oldest first, for which ``trial`` reports no failure, remembered in
    ``stamp`` for these candidates: (runtime or None, why each earlier one failed, the
    trial's output). ``trial(rt)`` returns (why it failed or None, output)."""
    known = {r.label: r for r in runtimes}
    try:
        data = json.loads(stamp.read_text())
        if data["candidates"] == list(known) and (data["runtime"] is None or data["runtime"] in known):
            rt = known[data["runtime"]].get() if data["runtime"] else None
            return rt, data["failures"], data["output"]
    except (OSError, ValueError, KeyError):
        pass
    failures: dict[str, str] = {}
    chosen: Runtime | None = None
    output = ""
    for source in runtimes:
        rt = source.get()
        why, text = trial(rt)
        if why is None:
            chosen, output = rt, text
            break
        failures[rt.label] = why
    stamp.write_text(json.dumps({"candidates": list(known), "runtime": chosen.label if chosen else None,
                                 "output": output, "failures": failures}))
    return chosen, failures, output


def prepare_cli(
    prefix: NpmPrefix, runtimes: list[RuntimeSource], scratch: Path, timeout: float
) -> CliInstall:
    """Find (once per installed prefix) which runtime starts this CLI, oldest first."""
    entry = bin_entry(prefix)

    def version(rt: Runtime) -> tuple[str | None, str]:
        with sandbox(scratch) as box:
            res = proc.run(proc.Request((str(rt.node), str(entry), "--version"), box.env, box.root, timeout=timeout))
        if res.ok and _VERSION.search(res.stdout):
            return None, res.stdout.strip()
        text = (res.stdout + res.stderr).strip()
        return ("timed out" if res.timed_out else f"exit {res.returncode}: ") + text[-600:], ""

    not_served = tuple(prefix.optional_not_served())
    chosen, failures, output = first_runtime(prefix.location / RUNTIME_FILE, runtimes, version)
    seed = _seed(prefix, entry, chosen, scratch, timeout)
    compiled = None if chosen is None else make_compile_cache(prefix.location, chosen.node, entry, seed, scratch,
                                                              timeout)
    # Both live in the prefix and go with it: eviction weighs them with the install.
    extra = sum(dir_size(p) for p in (seed.root if seed else None, compiled) if p is not None)
    if extra:
        prefix.add_bytes(extra)
    return CliInstall(prefix.version, entry, chosen, output, failures, seed=seed, not_served=not_served,
                      compile_cache=compiled, home=prefix.location)


def self_reported_version(cli: CliInstall, runtime: Runtime, scratch: Path, timeout: float) -> str | None:
    """What the CLI answers to `status.get` when asked with no SDK (``matrix/families/copilot/cli_status.py``),
    in a sandbox like a cell's; None when it does not answer. An answer is kept with the install
    (``SAYS_FILE``, per runtime): a release says the same every time, and asking took a CLI
    start per run for every release that misreports itself."""
    stamp = cli.home / SAYS_FILE if cli.home is not None else None
    try:
        kept = json.loads(stamp.read_text()) if stamp is not None else None
    except (OSError, ValueError):
        kept = None
    if isinstance(kept, dict) and kept.get("runtime") == runtime.label and isinstance(kept.get("version"), str):
        return str(kept["version"])
    with asked_status(runtime.node, cli.entry, cli.seed, scratch, timeout) as (res, _box):
        pass
    try:
        version = json.loads(res.stdout.strip().splitlines()[-1])["version"]
    except (ValueError, IndexError, KeyError, TypeError):
        return None
    if not version:
        return None
    if stamp is not None:  # no answer (a timeout on a busy machine) is asked again next run
        write_atomic(stamp, json.dumps({"runtime": runtime.label, "version": str(version)}))
    return str(version)


def _seed(prefix: NpmPrefix, entry: Path, rt: Runtime | None, scratch: Path, timeout: float) -> Seed | None:
    if rt is None:
        return None
    return make_seed(prefix.location, (str(rt.node), str(entry), "--version"), [rt.node.parent], scratch, timeout)


def write_launcher(directory: Path, cli: CliInstall, runtime: Runtime,
                   shim: tuple[Path, Path] | None = None) -> tuple[Path, Path]:
    """A launcher the SDK runs as "the CLI": it logs each start's argv, then execs the real
    entry with the chosen runtime. The log proves the SDK ran our CLI and with which flags.
    ``shim``: (python, config) to relay the stream through matrix/families/copilot/shim.py."""
    log = directory / "launches.log"
    script = directory / "copilot"
    real = f"{shlex.quote(str(runtime.node))} {shlex.quote(str(cli.entry))}"
    if shim is not None:
        python, config = shim
        relay = Path(__file__).parent / "shim.py"
        real = (f"{shlex.quote(str(python))} -I {shlex.quote(str(relay))} {shlex.quote(str(config))} -- "
                + real)
    # Only the CLI's own Node processes read its compiled code (``compile_cache.py``).
    portable = "".join(f"export {k}={v}\n" for k, v in PORTABLE.items()) if cli.compile_cache else ""
    proc.write_executable(script, (  # the SDK runs it as soon as its agent starts: see write_executable
        "#!/bin/sh\n"
        f"printf '%s\\n' '@@launch@@' \"$@\" >> {shlex.quote(str(log))}\n"
        f"{portable}"
        f"exec {real} \"$@\"\n"
    ))
    return script, log


def read_launches(log: Path) -> list[list[str]]:
    try:
        lines = log.read_text().splitlines()
    except OSError:
        return []
    launches: list[list[str]] = []
    for line in lines:
        if line == "@@launch@@":
            launches.append([])
        elif launches:
            launches[-1].append(line)
    return launches
