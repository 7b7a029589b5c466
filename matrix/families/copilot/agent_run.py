"""Run one agent script in a sandbox against one CLI, optionally through the shim, and
collect everything a probe classifies from: the report, the process result, the launches
the launcher logged, and the files the cell left in its HOME."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from matrix.ecosystems.pypi_env import UvVenv
from matrix.execute import proc
from matrix.execute.aheadstart import AheadStarts
from matrix.execute.forkserver import ForkServers
from matrix.execute.redaction import redact_file
from matrix.execute.sandbox import sandbox
from matrix.execute.storage import writing
from matrix.families.copilot.cli import CliInstall, Runtime, read_launches, write_launcher
from matrix.families.copilot.cli_seed import plant
from matrix.families.copilot.compile_cache import plant_compile_cache
from matrix.probes.report import AgentReport, parse_report

__all__ = ["AgentCommand", "AgentRun", "node_agent", "python_agent", "run_agent"]

# Where CLI releases unpack their own package and write logs (it moved between releases,
# and follows XDG_STATE_HOME / XDG_CONFIG_HOME / XDG_CACHE_HOME in some): the CLI's own
# cache, not "files the cell wrote". Config, locks and ids written there still count.
_CLI_OWN = (".copilot/pkg", ".copilot/logs", ".cache/copilot/pkg", ".local/state/.copilot/pkg",
            ".config/.copilot/logs", ".local/state/copilot")
_HOME_LIST_LIMIT = 200
# The file an agent creates in its sandbox to say it only waits from then on.
_WAITING = "waiting"


@dataclass(frozen=True)
class AgentCommand:
    """How an agent script runs inside one SDK's environment: the interpreter (and flags)
    before the script, and directories its PATH needs."""

    prefix: tuple[str, ...]
    path_dirs: tuple[Path, ...] = ()
    # Python agents: modules a warm server imports once, forking the agent per cell.
    warm: ForkServers | None = None
    # Node agents: a process started ahead of each cell, with the preload done (aheadstart.py).
    ahead: AheadStarts | None = None
    preload: tuple[str, ...] = ()
    # Its scripts say when they only wait (the config's "waiting" file; see run_agent).
    says_waiting: bool = False
    label: str = ""  # the SDK's environment, as a run's summary names it

    @contextmanager
    def spawner(self) -> Iterator[proc.Spawn | None]:
        """How to start this agent: forked from a warm server, handed to a process started
        ahead, or None (a new process)."""
        if self.ahead is not None:
            yield self.ahead.spawner(self.prefix, self.preload, self.label)
            return
        if self.warm is None or not self.preload:
            yield None
            return
        interpreter = Path(self.prefix[0])
        with self.warm.use(interpreter, self.preload, interpreter.parent.parent.name) as server:
            yield None if server is None else server.spawner(skip=len(self.prefix))


def python_agent(venv: UvVenv, warm: ForkServers | None = None, preload: tuple[str, ...] = ()) -> AgentCommand:
    # -I: nothing from the sandbox's cwd or env
    return AgentCommand((str(venv.interpreter), "-I"), warm=warm, preload=preload, says_waiting=True)


def node_agent(node: Path, ahead: AheadStarts | None = None, preload: tuple[str, ...] = (),
               label: str = "") -> AgentCommand:
    """``preload``: a module whose ``preload(...)`` an agent started ahead awaits, and its arguments."""
    return AgentCommand((str(node),), (node.parent,), ahead=ahead if preload else None, preload=preload,
                        says_waiting=True, label=label)


@dataclass(frozen=True)
class AgentRun:
    report: AgentReport | None
    result: proc.Result
    launches: list[list[str]]
    home_files: list[str]  # paths relative to HOME outside the CLI's own cache
    seed_modified: bool = False  # the CLI wrote into the unpacked tree shared between cells
    work_files: list[str] = field(default_factory=list)  # what the cell left in its working directory (names)


def _home_files(home: Path) -> list[str]:
    found = []
    for dirpath, _dirs, files in os.walk(home):
        rel_dir = os.path.relpath(dirpath, home)
        if rel_dir.startswith(_CLI_OWN):
            continue
        for name in files:
            rel = os.path.normpath(os.path.join(rel_dir, name))
            if not rel.startswith(_CLI_OWN):
                found.append(rel)
                if len(found) >= _HOME_LIST_LIMIT:
                    return sorted(found)
    return sorted(found)


def run_agent(agent: Path | None, cfg: dict[str, Any], command: AgentCommand, cli: CliInstall, runtime: Runtime,
              timeout: float, grace: float, scratch: Path, reaper: proc.Reaper | None = None,
              shim_rule: str | list[str] | None = None, use_shim: bool = False, transcript: Path | None = None,
              launcher: bool = True, extra_env: dict[str, str] | None = None,
              waiting: Callable[[], None] | None = None) -> AgentRun:
    """``launcher``: False gives the SDK the CLI's own entry point (no launcher, no shim, no
    log of launches), to show that what a cell measures is the SDK's doing and not ours.
    ``extra_env``: variables the cell sets besides the sandbox's (addresses of our stand-ins,
    never a credential). ``waiting``: called once if the agent says it only waits from then
    on (its config's "waiting" file: the leak wait after stop())."""
    with sandbox(scratch, path_dirs=[*command.path_dirs, runtime.node.parent]) as box:
        shim = None
        if use_shim:
            config = box.root / "shim.json"
            target = transcript or box.root / "transcript.jsonl"
            with writing(target):
                target.parent.mkdir(parents=True, exist_ok=True)
                target.unlink(missing_ok=True)
            rules = {"rules": shim_rule} if isinstance(shim_rule, list) else {"rule": shim_rule}  # a list: a batch
            config.write_text(json.dumps({"transcript": str(target), **rules}))
            shim = (Path(proc.harness_python()), config)
        seeded = plant(cli.seed, box.home)
        plant_compile_cache(cli.compile_cache, Path(box.env["TMPDIR"]))
        cli_path, log = write_launcher(box.root, cli, runtime, shim) if launcher else (cli.entry, box.root / "none")
        env = dict(box.env)
        # Every way a version may look for its CLI points at our launcher; none downloads.
        env.update(COPILOT_CLI_PATH=str(cli_path), COPILOT_SKIP_CLI_DOWNLOAD="1", **(extra_env or {}))
        waiting = waiting if command.says_waiting else None
        said = box.root / _WAITING
        ours = {p.name for p in box.root.iterdir()} | {said.name}
        script = (str(agent),) if agent else ()  # None: the command is the agent (a built binary)
        argv = (*command.prefix, *script, json.dumps({**cfg, "cli_path": str(cli_path),
                                                      **({"waiting": str(said)} if waiting else {})}))
        with command.spawner() as spawn:
            req = proc.Request(argv, env, box.root, timeout=timeout, grace=grace,
                               waiting=said if waiting else None, on_wait=waiting)
            res = proc.run(req, reaper, spawn=spawn) if spawn else proc.run(req, reaper)
        launches = read_launches(log)
        home = _home_files(box.home)
        work = sorted(p.name for p in box.root.iterdir() if p.name not in ours and p != log)
        if use_shim:
            redact_file(target)
    modified = seeded and cli.seed is not None and not cli.seed.intact()
    if modified and cli.seed is not None:
        cli.seed.retire(f"modified during a cell of {cli.version}")
    return AgentRun(parse_report(res.stdout), res, launches, home, modified, work)
