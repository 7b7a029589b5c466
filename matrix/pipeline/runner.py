"""Cells -> rows: provision both sides, run the probe, append the row.

Cells run on a thread pool (each probe is a subprocess, so threads are enough); cells are
ordered by CLI version so a CLI prefix is used by consecutive cells and can be evicted
when the run moves on. Install failures are recorded as ``uninstallable`` (the registry
no longer serves that version) or ``infra-error`` (our side; retried with backoff; never
a verdict), once per environment per run.
"""

from __future__ import annotations

import contextlib
import functools
import json
import shutil
import socket
import threading
import time
import traceback
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from matrix import rules_version
from matrix.errors import InfraError, UninstallableError, UserError
from matrix.execute import proc
from matrix.execute.environment import Environment, GoAgent, NpmPrefix, UvVenv, evict, make_env, with_retries
from matrix.execute.forkserver import ForkServers
from matrix.execute.sandbox import install_env
from matrix.execute.schedule import Prefetcher, Slots, Uses, Window
from matrix.execute.scratch import Scratch
from matrix.execute.storage import StorageError
from matrix.families.copilot.cli import CliInstall, Runtime, RuntimeSource, prepare_cli, self_reported_version
from matrix.families.copilot.go.measure import run_go_handshake, run_go_tolerance
from matrix.families.copilot.handshake import HandshakeCell
from matrix.families.copilot.node.measure import run_node_handshake, run_node_tolerance
from matrix.families.copilot.node.sdk import NodeSdk, prepare_node_sdk
from matrix.families.copilot.python.contract import run_python_contract
from matrix.families.copilot.python.measure import run_python_handshake, run_python_tolerance
from matrix.families.cosmo.probe import run_cosmo
from matrix.families.registry import FAMILIES
from matrix.model import Outcome
from matrix.pipeline.config import Plan
from matrix.store.results import Row, Store, is_stale
from matrix.versions import sort_key

__all__ = ["NO_CLI", "Cell", "Runner", "pending"]

UNINSTALLABLE_TTL = 7 * 24 * 3600
NO_CLI = "none"  # cli_version of a tolerance cell whose SDK version has no compatible CLI
# Never verdicts, so an incremental run measures them again: an infrastructure failure, or a
# cell our side could not judge (a shared tree modified, a CLI that answered for another).
RETRY_OUTCOMES = {Outcome.INFRA_ERROR.value, Outcome.HARNESS_ERROR.value}


class _Evicted(Exception):
    """An environment went away between ensuring it and taking it for use."""


@dataclass(frozen=True)
class Cell:
    family: str
    sdk_version: str
    cli_version: str
    probe: str
    mutation: str = ""

    def key(self) -> tuple[str, str, str, str, str]:
        return (self.family, self.sdk_version, self.cli_version, self.probe, self.mutation)


def pending(cells: Iterable[Cell], local: Iterable[Row], kept: Iterable[Row] = (), force: bool = False,
            stale: bool = False) -> list[Cell]:
    """The cells to measure: those with no row yet, and local infrastructure or harness errors
    (never verdicts; ``kept``, the committed history, holds none of the first). A stale row
    (``is_stale``) counts as measured unless ``stale``; ``force``: every cell."""
    if force:
        return list(cells)
    done = {r.key() for r in kept if not (stale and is_stale(r))}
    done |= {r.key() for r in local if r.outcome not in RETRY_OUTCOMES and not (stale and is_stale(r))}
    return [c for c in cells if c.key() not in done]


def order(cells: Iterable[Cell]) -> list[Cell]:
    """By CLI release first, across families: each CLI is installed once, used by every cell that
    needs it (the Copilot families share their CLIs), and can then be evicted."""
    return sorted(cells, key=lambda c: (sort_key(c.cli_version), c.family, sort_key(c.sdk_version)))


class Runner:
    def __init__(self, plan: Plan, store: Store, cache: Path, reaper: proc.Reaper,
                 on_row: Callable[[Row], None] = lambda r: None, through_shim: bool = False,
                 direct_cli: bool = False) -> None:
        self.through_shim = through_shim  # relay handshakes through the (non-mutating) shim
        # Give the SDK the CLI's own entry point, no launcher: shows a measurement is the SDK's
        # doing, not ours (without the launcher's log every such cell is a harness error).
        self.direct_cli = direct_cli
        self.plan = plan
        self.store = store
        self.cache = cache
        self.reaper = reaper
        self.on_row = on_row
        self.envs = cache / "envs"
        self._scratch = Scratch(cache / "sandboxes")
        self.scratch = self._scratch.path
        self.logs = cache / "logs"
        self._failures: dict[tuple[str, str, str], Exception] = {}
        self._clis: dict[str, tuple[object, CliInstall]] = {}  # version -> (its install's time, prepared)
        self._node_sdks: dict[Path, NodeSdk] = {}
        self._cli_says_cache: dict[str, tuple[CliInstall, str | None]] = {}
        self._runtime_cache: dict[str, Runtime] = {}
        self._lock = threading.Lock()
        self._key_locks: dict[object, threading.Lock] = {}
        self.env_seconds: dict[str, float] = {}
        self.warm = ForkServers(self.scratch, reaper, plan.run.warm_sdks)
        self._uses: Uses | None = None  # during run(): which environments cells still need
        self._window: Window | None = None
        self.parked = 0

    # -- environments -------------------------------------------------------------------

    def _key_lock(self, key: object) -> threading.Lock:
        with self._lock:
            return self._key_locks.setdefault(key, threading.Lock())

    def _marker(self, env: Environment) -> Path:
        return self.cache / "uninstallable" / (env.location.name + f".{env.kind}.json")

    def _ensure(self, env: Environment) -> None:
        key = (env.kind, env.package, env.version)
        with self._key_lock(key):
            if key in self._failures:
                raise self._failures[key]
            marker = self._marker(env)
            if marker.exists() and time.time() - marker.stat().st_mtime < UNINSTALLABLE_TTL:
                raise UninstallableError(env.package, env.version, json.loads(marker.read_text())["detail"])
            t0 = time.monotonic()
            try:
                built = with_retries(env.create, self.plan.run.install_retries)
            except UninstallableError as err:
                marker.parent.mkdir(parents=True, exist_ok=True)
                marker.write_text(json.dumps({"detail": err.detail, "at": time.time()}))
                self._failures[key] = err
                raise
            except InfraError as err:
                self._failures[key] = err
                raise
            if built:
                self.env_seconds[f"{env.package}=={env.version}"] = round(time.monotonic() - t0, 2)

    def _make(self, side: str, kind: str, package: str, version: str, **kw: object) -> Environment:
        return make_env(kind, package, version, self.envs / side,
                        install_timeout=self.plan.timeouts.install, log_dir=self.logs, **kw)

    def _runtime(self, label: str, factory: Callable[[], Runtime]) -> Runtime:
        with self._key_lock(("runtime", label)):
            if label not in self._runtime_cache:
                self._runtime_cache[label] = factory()
            return self._runtime_cache[label]

    def _runtimes(self) -> list[RuntimeSource]:
        def system() -> Runtime:
            res = proc.run(proc.Request(("node", "--version"), install_env(), Path.cwd(), timeout=30))
            if not res.ok:
                raise InfraError("node --version", res.stderr.strip() or "node is not on PATH")
            major = res.stdout.strip().lstrip("v").split(".")[0]
            return Runtime(f"node{major}", Path(shutil.which("node") or "node"))

        def node24() -> Runtime:
            env = self._make("runtime", "npm-prefix", "node", "24")
            self._ensure(env)
            return Runtime("node24", env.location / "node_modules" / "node" / "bin" / "node")

        return [RuntimeSource("node-system", lambda: self._runtime("node-system", system)),
                RuntimeSource("node24", lambda: self._runtime("node24", node24))]

    def _cli(self, prefix: NpmPrefix) -> CliInstall:
        # Keyed by the install too: a prefix evicted and installed again during the run is a
        # new tree (its unpacked seed made anew), not the one prepared before.
        installed = (prefix.stored() or {}).get("created")
        with self._key_lock(("cli-prepare", prefix.version)):
            known = self._clis.get(prefix.version)
            if known is None or known[0] != installed:
                known = installed, prepare_cli(prefix, self._runtimes(), self.scratch, timeout=self.plan.timeouts.probe)
                self._clis[prefix.version] = known
            return known[1]

    def prepared_cli(self, version: str) -> CliInstall:
        """The CLI as the last cell of ``version`` got it (entry, runtime, unpacked tree)."""
        return self._clis[version][1]

    # -- cells ----------------------------------------------------------------------------

    def _infra_row(self, cell: Cell, outcome: Outcome, side: str, err: Exception | str) -> Row:
        message = f"{side}: {err}" if side else str(err)
        return Row(family=cell.family, sdk_version=cell.sdk_version, cli_version=cell.cli_version,
                   probe=cell.probe, mutation=cell.mutation, outcome=str(outcome),
                   error_type=type(err).__name__ if isinstance(err, Exception) else None,
                   error_message=message, detail={"side": side} if side else {},
                   harness_version=rules_version(cell.probe),
                   measured_at=datetime.now(UTC).isoformat(timespec="seconds"),
                   host=socket.gethostname())


    def measure(self, cell: Cell, repeat: int = 1) -> Row | None:
        """Measure ``cell`` (``repeat`` times: a cell whose outcome differs between repeats
        is recorded as flaky, with every outcome seen) and record one row."""
        rows: list[Row] = []
        for _ in range(repeat):
            row = self._measure_once(cell)
            if row is None:
                return None  # interrupted: nothing recorded
            rows.append(row)
        row = rows[-1]
        if repeat > 1:
            seen = [r.outcome for r in rows]
            row = replace(row, repeats=seen, flaky=len(set(seen)) > 1)
        return self._record(row)

    def _measure_once(self, cell: Cell) -> Row | None:
        if self.reaper.cancelled:
            return None
        if cell.cli_version == NO_CLI:
            return (self._infra_row(
                cell, Outcome.NOT_APPLICABLE, "", "no CLI version in the matrix is compatible with this SDK version"))
        sdk, cli_env = self._environments(cell)
        if cli_env is None:
            assert isinstance(sdk, UvVenv)
            return self._measure_standin(cell, sdk)
        for attempt in (1, 2):
            for side, env in (("sdk", sdk), ("cli", cli_env)):
                try:
                    self._ensure(env)
                except UninstallableError as err:
                    return (self._infra_row(cell, Outcome.UNINSTALLABLE, side, err))
                except InfraError as err:
                    return (self._infra_row(cell, Outcome.INFRA_ERROR, side, err))
            budget = int(self.plan.run.cache_budget_gb * 1024**3)
            keep, first = self._eviction_hints(cli_env.location)
            evict(self.envs / "cli", cli_env.kind, budget, keep=keep, first=first)
            try:
                return self._probe(cell, sdk, cli_env)
            except _Evicted:
                if attempt == 2:
                    return (self._infra_row(
                        cell, Outcome.INFRA_ERROR, "harness", "an environment was evicted twice while in use"))
        raise AssertionError("unreachable")

    def _environments(self, cell: Cell) -> tuple[Environment, NpmPrefix | None]:
        """The SDK's environment and the CLI's (None: the other side is our stand-in)."""
        fam = FAMILIES[cell.family]
        if fam.sdk_ecosystem == "npm":
            sdk: Environment = self._make("sdk", "npm-prefix", fam.sdk_package, cell.sdk_version)
        elif fam.sdk_ecosystem == "go":
            sdk = self._make("sdk", "go-agent", fam.sdk_package, cell.sdk_version)
        else:
            extras = {"extras": fam.sdk_extras} if fam.sdk_extras else {}
            sdk = self._make("sdk", "uv-venv", fam.sdk_package, cell.sdk_version, **extras)
        if fam.standin or cell.cli_version == NO_CLI:
            return sdk, None
        cli_env = self._make("cli", "npm-prefix", fam.cli_package, cell.cli_version)
        assert isinstance(cli_env, NpmPrefix)
        return sdk, cli_env

    def _prepare(self, cell: Cell, env: Environment) -> None:
        """Everything a cell would otherwise do first for ``env``: install it, find the CLI's
        runtime and unpack it, find the Node SDK's runtime, import the Python SDK once."""
        self._ensure(env)
        with env.in_use():
            if not env.is_ready():
                return
            if isinstance(env, NpmPrefix) and env.location.parent.parent.name == "cli":
                self._cli(env)
            elif isinstance(env, NpmPrefix):
                self._node_sdk(env)
            elif isinstance(env, UvVenv):
                with self.warm.use(env.interpreter, FAMILIES[cell.family].preload, env.location.name):
                    pass

    def _cell_spec(self, cell: Cell) -> HandshakeCell:
        return HandshakeCell(cell.family, cell.sdk_version, cell.cli_version, self.plan.timeouts.probe,
                             self.plan.timeouts.call, self.plan.timeouts.stop_grace, self.scratch,
                             use_shim=self.through_shim, warm=self.warm, dead_cli=self.plan.timeouts.dead_cli,
                             leak=self.plan.timeouts.leak, launcher=not self.direct_cli)

    def _measure_standin(self, cell: Cell, sdk: UvVenv) -> Row | None:
        """A family whose other side is our stand-in: only the SDK is installed."""
        for attempt in (1, 2):
            try:
                self._ensure(sdk)
            except UninstallableError as err:
                return (self._infra_row(cell, Outcome.UNINSTALLABLE, "sdk", err))
            except InfraError as err:
                return (self._infra_row(cell, Outcome.INFRA_ERROR, "sdk", err))
            try:
                with sdk.in_use():
                    if not sdk.is_ready():
                        raise _Evicted
                    row = run_cosmo(self._cell_spec(cell), cell.probe, cell.mutation, sdk, self.store.directory,
                                    self.reaper)
            except _Evicted:
                if attempt == 2:
                    return (self._infra_row(
                        cell, Outcome.INFRA_ERROR, "harness", "an environment was evicted twice while in use"))
                continue
            except InfraError as err:
                return (self._infra_row(cell, Outcome.INFRA_ERROR, "harness", err))
            return None if self.reaper.cancelled else row
        raise AssertionError("unreachable")

    def _node_sdk(self, prefix: NpmPrefix) -> NodeSdk:
        with self._key_lock(("node-sdk", prefix.location)):
            if prefix.location not in self._node_sdks:
                self._node_sdks[prefix.location] = prepare_node_sdk(prefix, self._runtimes(), self.scratch,
                                                                    timeout=self.plan.timeouts.probe)
            return self._node_sdks[prefix.location]

    def _cli_says(self, cli: CliInstall, runtime: Runtime) -> str | None:
        """What ``cli`` reports as its version to a client with no SDK: asked once per install,
        and only when a cell's SDK saw another version than the one installed."""
        with self._key_lock(("cli-says", cli.version)):
            known = self._cli_says_cache.get(cli.version)
            if known is None or known[0] is not cli:
                known = cli, self_reported_version(cli, runtime, self.scratch, self.plan.timeouts.probe)
                self._cli_says_cache[cli.version] = known
            return known[1]

    def _run_probe(self, cell: Cell, sdk: Environment, cli: CliInstall, runtime: Runtime) -> Row:
        hs = replace(self._cell_spec(cell), cli_says=functools.partial(self._cli_says, cli, runtime))
        if isinstance(sdk, NpmPrefix) and cell.probe == "handshake":
            return run_node_handshake(hs, self._node_sdk(sdk), cli, runtime, self.reaper)
        if isinstance(sdk, GoAgent) and cell.probe == "handshake":
            return run_go_handshake(hs, sdk, cli, runtime, self.reaper)
        if isinstance(sdk, GoAgent) and cell.probe == "tolerance":
            return run_go_tolerance(hs, cell.mutation, sdk, cli, runtime, self.store.directory, self.reaper)
        if isinstance(sdk, NpmPrefix) and cell.probe == "tolerance":
            return run_node_tolerance(hs, cell.mutation, self._node_sdk(sdk), cli, runtime, self.store.directory,
                                      self.reaper)
        if isinstance(sdk, UvVenv):
            if cell.probe == "contract":
                return run_python_contract(hs, sdk, cli, runtime, self.reaper)
            if cell.probe == "tolerance":
                return run_python_tolerance(hs, cell.mutation, sdk, cli, runtime, self.store.directory, self.reaper)
            if cell.probe == "handshake":
                return run_python_handshake(hs, sdk, cli, runtime, self.reaper)
        # Planning only makes cells of a family's own probes; reaching here is our bug.
        raise UserError(f"probe {cell.probe!r} is not implemented for {cell.family}")

    def _probe(self, cell: Cell, sdk: Environment, cli_env: NpmPrefix) -> Row | None:
        try:
            with sdk.in_use(), cli_env.in_use():
                if not (sdk.is_ready() and cli_env.is_ready()):
                    raise _Evicted  # removed between our check and our shared lock
                cli = self._cli(cli_env)
                runtime = cli.runtime or self._runtimes()[-1].get()
                row = self._run_probe(cell, sdk, cli, runtime)
        except InfraError as err:
            return (self._infra_row(cell, Outcome.INFRA_ERROR, "harness", err))
        if self.reaper.cancelled:
            return None  # interrupted: the cell in flight is not recorded, never half-true
        return row

    def _record(self, row: Row) -> Row:
        if self.reaper.cancelled:
            return row
        self.store.append(row)
        self.on_row(row)
        return row

    def close(self) -> None:
        """End the warm servers (they would also end when we do: their input closes) and
        remove this run's sandboxes."""
        self.warm.close()
        self._scratch.release()

    def _eviction_hints(self, current: Path) -> tuple[set[Path], set[Path]]:
        """CLIs to keep (this cell's, and those installed for the next cells) and CLIs to
        evict first (no cell of this run needs them any more)."""
        if self._uses is None or self._window is None:
            return {current}, set()
        keep = {current} | {p for p in self._window.open() if isinstance(p, Path)}
        return keep, {p for p in self._uses.done() if isinstance(p, Path)}

    def run(self, cells: list[Cell], jobs: int, repeat: int = 1, keep_warm: bool = False) -> list[Row]:
        """Measure ``cells``; ``keep_warm``: leave the warm servers for a next phase (the
        caller then calls ``close``)."""
        ordered = order(cells)
        envs = [self._environments(c) if c.cli_version != NO_CLI else None for c in ordered]
        needs = [[e.location for e in pair if e is not None] if pair else [] for pair in envs]
        cli_of = [pair[1].location if pair and pair[1] is not None else None for pair in envs]
        clis = list(dict.fromkeys(c for c in cli_of if c is not None))
        self._uses = uses = Uses(needs)
        self._window = window = Window(clis, uses, self.plan.run.install_ahead)
        steps: list[tuple[int, Callable[[], None]]] = []
        seen: set[Path] = set()
        for cell, pair, cli in zip(ordered, envs, cli_of, strict=True):
            if pair is None:
                continue
            cli_at = window.index.get(cli, 0) if cli is not None else 0
            for env in pair:
                if env is not None and env.location not in seen:
                    seen.add(env.location)
                    steps.append((cli_at, functools.partial(self._prepare, cell, env)))
        prefetch = Prefetcher(steps, self.plan.run.install_ahead, window.reached, lambda: self.reaper.cancelled)
        slots = Slots(jobs, self.plan.run.park_after)

        def one(cell: Cell, keys: list[Path], cli: Path | None) -> Row | None:
            if cli is not None:
                window.started(cli)
            try:
                with slots.hold():
                    return self.measure(cell, repeat)
            except StorageError:
                raise  # nowhere to keep what is measured: the run ends, cells in flight are not recorded
            except Exception as err:  # our bug: this cell says so, the others are still measured
                row = self._infra_row(cell, Outcome.HARNESS_ERROR, "harness", err)
                row = replace(row, detail={**row.detail, "traceback": traceback.format_exc()[-4000:]})
                return self._record(row)
            finally:
                uses.finished(keys)
                prefetch.poke()

        rows: list[Row] = []
        prefetch.start()
        # More threads than slots: a parked cell keeps its thread while the next one works.
        closing = contextlib.nullcontext() if keep_warm else contextlib.closing(self)
        with closing, ThreadPoolExecutor(max_workers=jobs * 3) as pool:
            futures = [pool.submit(one, c, k, cli) for c, k, cli in zip(ordered, needs, cli_of, strict=True)]
            try:
                for fut in as_completed(futures):
                    row = fut.result()
                    if row is not None:
                        rows.append(row)
            except BaseException:
                self.reaper.kill_all()
                for f in futures:
                    f.cancel()
                raise
            finally:
                prefetch.close()
                self.parked += slots.parked
                self._uses = self._window = None
        return rows
