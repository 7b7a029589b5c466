"""What the three Copilot families share: the @github/copilot CLI on the other side (installed
from npm, started through our launcher with the Node runtime measured for it), the phases
(handshake, then tolerance and the failure contract planned from its verdicts), and their
pages. Each language's package says how its SDK is installed, prepared and driven."""

from __future__ import annotations

import functools
import shutil
from abc import abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from matrix.ecosystems.npm_env import NpmPrefix
from matrix.errors import InfraError, UserError
from matrix.execute import proc
from matrix.execute.environment import Environment
from matrix.execute.sandbox import install_env
from matrix.families.base import LETTERS, Context, Family, MakeEnv, Picture, Planning, SiteView, Vocabulary
from matrix.families.copilot import compare_pages as compare
from matrix.families.copilot import repro
from matrix.families.copilot.cli import (
    CliInstall,
    Runtime,
    RuntimeSource,
    does_not_start,
    prepare_cli,
    self_reported_version,
)
from matrix.families.copilot.drift_page import drift_page
from matrix.families.copilot.handshake import HandshakeCell, cli_does_not_start_row
from matrix.families.copilot.matrix_pages import matrix_pages
from matrix.families.copilot.pages import tolerance_pages
from matrix.families.copilot.payload import CONNECTED, HANDSHAKE, SESSION, payload_model
from matrix.families.copilot.release_pages import cli_page, sdk_pages
from matrix.families.copilot.rules import COPILOT_RULES
from matrix.families.copilot.session_pages import session_pages
from matrix.families.copilot.shim import CONTROL_DESCRIPTIONS, RULES, control_of
from matrix.families.copilot.stops import (
    LEAK_MARK,
    LEAK_TEXT,
    RACE_MARK,
    RACE_TEXT,
    SESSION_WORKS,
    leak_kind,
    leaves_running,
    session_clean,
    session_leaks,
)
from matrix.families.copilot.targets import control_target, works
from matrix.families.copilot.tolerance import BATCH_STANDS
from matrix.families.payload import Payload
from matrix.families.rules import Rules
from matrix.markup import cli_slug
from matrix.model import HANDSHAKE_OUTCOMES, NO_CLI, SESSION_OUTCOMES, TOLERANCE_OUTCOMES, Cell, Outcome, Row
from matrix.present.grid import first_line
from matrix.present.rows import refined
from matrix.versions import sort_key, sorted_versions

__all__ = ["CopilotFamily", "runtimes"]


def runtimes(ctx: Context) -> list[RuntimeSource]:
    """The Node runtimes we can give a CLI or an npm SDK, oldest first: the system's, then
    Node 24 from the npm package ``node@24`` (installed on first use)."""
    def system() -> Runtime:
        res = proc.run(proc.Request(("node", "--version"), install_env(), Path.cwd(), timeout=30))
        if not res.ok:
            raise InfraError("node --version", res.stderr.strip() or "node is not on PATH")
        major = res.stdout.strip().lstrip("v").split(".")[0]
        return Runtime(f"node{major}", Path(shutil.which("node") or "node"))

    def node24() -> Runtime:
        env = ctx.make(NpmPrefix, "runtime", "node", "24")
        ctx.ensure(env)
        return Runtime("node24", env.location / "node_modules" / "node" / "bin" / "node")

    return [RuntimeSource("node-system", lambda: ctx.memo(("runtime", "node-system"), system)),
            RuntimeSource("node24", lambda: ctx.memo(("runtime", "node24"), node24))]


def prepared_cli(prefix: NpmPrefix, ctx: Context) -> CliInstall:
    """The CLI's runtime and unpacked tree, found once per install: a prefix evicted and
    installed again during the run is a new tree, prepared anew."""
    installed = (prefix.stored() or {}).get("created")
    return ctx.memo(("cli-prepare", prefix.version, installed),
                    lambda: prepare_cli(prefix, runtimes(ctx), ctx.scratch, timeout=ctx.settings.probe_timeout))


# How the heatmaps' marks read, and what the design they check promises of stop().
LEGEND_NOTE = (f"In the heatmaps, **{LEAK_MARK}** after a cell's number or letter: "
               f"{LEAK_TEXT.removeprefix(LEAK_MARK).strip()} (still alive `timeouts.leak` seconds after `stop()` "
               "returned, the application still running). The Copilot SDK's version negotiation design promises "
               "that stopping the client closes its pipes and leaves no CLI process behind: a cell that connected but "
               "leaked is `degraded`; a failed start that leaked keeps its outcome and says so on the version pages.")
# A session cell's outcomes, as what an application holding one conversation met.
SESSION_MEANINGS: tuple[tuple[Outcome, str], ...] = (
    (Outcome.COMPATIBLE, "Every scripted turn did what it says (a reply, the application's tool, a command it "
                         "approved, one it denied), every event the CLI sent reached the application typed, and "
                         "stop() left nothing running."),
    (Outcome.SURFACED, "As compatible, but some event the CLI sent reached the application only as the SDK's "
                       "unknown event (readable raw, not typed)."),
    (Outcome.DEGRADED, "The conversation ran, but a turn did not hold (the model never saw the tool's result, an "
                       "approval or a denial did not hold), or stop() left the CLI running."),
    (Outcome.LOST, "The conversation ran, but an event the CLI sent never reached the application."),
    (Outcome.HANG, "A turn never reached idle before its deadline, or a call never settled."),
    (Outcome.CRASHED, "The SDK raised an exception in the middle of the conversation."),
    (Outcome.NOT_APPLICABLE, "That version has no session API, or no way to keep the model call on this machine."),
)
SESSION_NOTE = ("A session cell is measured for every pair whose handshake connected: one conversation through "
                "the SDK's own session API, the CLI's model a scripted stand-in on 127.0.0.1, and its verdict "
                "the worst of what the application met.")
GUIDE = ("[Tolerance](tolerance/index.md): what each SDK version does with unknown fields, event types and\n"
         "  enum values, with the transcript of every check; and the failure contract after a failed handshake.")
PIN_GUIDE = """Ranges below are runs of **measured** versions that were `compatible` (connected, answered, and
left nothing running after `stop()`); a range spans only versions between two measured ones that
both worked, and the versions measured inside it are on each version's page. Pairs that work but
leave the CLI running after `stop()` are listed apart: prefer the first column. Each side is
written in its own ecosystem's syntax: pip specifiers, npm ranges, and for Go (which has no
ranges) the version to `go get`, its `require` line and `exclude` lines for measured-bad
versions inside the working span. Anything not listed was not measured."""


@dataclass(frozen=True, kw_only=True)
class CopilotFamily(Family):
    cli_ecosystem: str = "npm"
    cli_package: str = "@github/copilot"
    phases: tuple[str, ...] = ("handshake", "session", "tolerance", "contract")
    pair_probe: str | None = "handshake"
    caveat: str = "stop() leaves the CLI running"
    caveat_with: str = "leaves the CLI running with"
    vocabularies: tuple[Vocabulary, ...] = (Vocabulary("Handshake cells", HANDSHAKE_OUTCOMES, LEGEND_NOTE),
                                            Vocabulary("Session cells", SESSION_OUTCOMES, SESSION_NOTE,
                                                       meanings=SESSION_MEANINGS),
                                            Vocabulary("Tolerance checks", TOLERANCE_OUTCOMES,
                                                       kind="Tolerance: "))
    guide: str = GUIDE
    pin_guide: str = PIN_GUIDE
    cell_columns: tuple[str, ...] = ("protocol", "leaked", "stops")
    refined_by: tuple[str, ...] = (SESSION,)
    rules: Rules = COPILOT_RULES
    # Its tolerance agent measures several rules of one kind in one relay (``tolerance.run_batch``).
    batches: bool = False

    # -- what its rows are -------------------------------------------------------------

    def payload_model(self, probe: str) -> type[Payload]:
        return payload_model(probe)

    def per_sdk(self, probe: str, mutation: str) -> bool:
        """A handshake, a session and a check's control stand for their pair; a check, for its SDK
        release."""
        return probe not in (self.pair_probe, SESSION) and mutation not in CONTROL_DESCRIPTIONS

    # -- reading what was measured ----------------------------------------------------

    def check_pages(self, view: SiteView) -> dict[str, str] | None:
        return {}  # its tolerance pages (``pages``)

    def works(self, cells: pd.DataFrame) -> pd.Series:
        """Connected, answered, left nothing running, and its session (where measured) worked."""
        return super().works(cells) & session_clean(cells) & ~session_leaks(cells)

    def works_but(self, cells: pd.DataFrame) -> pd.Series:
        """Works, but stop() left the CLI running: after the handshake, or after the session."""
        handshake_ok = (cells["outcome"] == Outcome.COMPATIBLE) | leaves_running(cells)
        return handshake_ok & (leaves_running(cells) | session_leaks(cells)) & (session_clean(cells)
                                                                                  | session_leaks(cells))

    def cell_label(self, rec: Mapping[Any, Any]) -> str:
        """The negotiated protocol when it connected, else the outcome's letter; marked when
        the SDK left a process running after stop() (every time, or only sometimes)."""
        proto: Any = rec.get("protocol")
        connected = rec["outcome"] in (Outcome.COMPATIBLE.value, Outcome.DEGRADED.value)
        text = str(int(proto)) if connected and proto is not None and proto == proto else LETTERS.get(
            str(rec["outcome"]), "")
        return text + {"always": LEAK_MARK, "race": RACE_MARK}.get(leak_kind(rec), "")

    def cell_note(self, rec: Mapping[Any, Any]) -> str:
        proto = rec.get("protocol")
        return f"protocol {int(proto)}" if isinstance(proto, (int, float)) and proto == proto else first_line(rec)

    def aside(self, rec: Mapping[Any, Any]) -> str | None:
        """A failed start that also left the CLI running: the user hits both; a session that
        did not work, and at which step, or none measured yet for a pair that connects."""
        said = []
        leaked = rec.get("leaked")
        if isinstance(leaked, list) and leaked and "running after stop()" not in str(rec.get("error_message") or ""):
            said.append(f"left {', '.join(map(str, leaked))} running after stop()")
        session = rec.get(refined(SESSION, "outcome"))
        if not isinstance(session, str) and rec.get("outcome") in CONNECTED:
            # A pair that connects is not yet a pair that works: say its turn is still unmeasured.
            said.append("session not measured yet")
        elif isinstance(session, str) and session not in SESSION_WORKS:
            error = rec.get(refined(SESSION, "error_message"))
            first = error.strip().splitlines()[0][:200] if isinstance(error, str) and error.strip() else ""
            said.append(f"session {session}{': ' + first if first else ''}")
        return "; ".join(said) or None

    def marks(self, cells: pd.DataFrame) -> list[str]:
        columns = [c for c in ("leaked", "stops") if c in cells]
        kinds = {leak_kind(rec) for rec in cells[columns].to_dict("records")} if columns else set()
        return [text for kind, text in (("always", LEAK_TEXT), ("race", RACE_TEXT)) if kind in kinds]

    # -- planning ----------------------------------------------------------------------

    def reproduction(self, sdk_version: str, cli_version: str, api: Mapping[str, Any], name: str) -> str | None:
        return repro.script(self.name, self.sdk_package, sdk_version, self.cli_package, cli_version, api, name)

    def plan(self, phase: str, planning: Planning) -> list[Cell]:
        if phase not in planning.probes:
            return []
        if phase == "handshake":
            return [Cell(self.name, s, c, "handshake") for s in planning.sdk_versions for c in planning.cli_versions]
        if phase == SESSION:
            return self._session_cells(planning)
        if phase == "tolerance":
            return self._tolerance_cells(planning)
        if phase == "contract":
            return self._contract_cells(planning)
        return []

    def _tolerance_cells(self, planning: Planning) -> list[Cell]:
        """Per SDK version and kind of rule, its control first (the same steps with nothing
        mutated), then the rules against the CLI where the control passed. The CLI tried first
        is the one its tolerance was measured with before (the history keeps its cells), else
        the newest CLI that SDK version works with; where the control fails, the next newest,
        one per round (the phase is planned again after each; every control is kept). Where the
        family's agent can (``batches``), the rules of one kind that this SDK release never
        failed are measured together, in one relay (a rule that failed before would only make
        the batch measure it twice); a fresh release is all batched. An SDK
        version with no CLI, or none whose control passes, gets its rules against ``NO_CLI``,
        recorded not-applicable with the reason."""
        working: dict[str, list[str]] = {}
        before: dict[str, str] = {}
        controls: dict[tuple[str, str], dict[str, Row]] = {}
        failed_before: set[tuple[str, str]] = set()
        for r in planning.rows:
            if r.family != self.name:
                continue
            if r.probe == "handshake" and works(r) and r.cli_version in planning.cli_versions:
                working.setdefault(r.sdk_version, []).append(r.cli_version)
            elif r.probe == "tolerance" and r.mutation in CONTROL_DESCRIPTIONS:
                controls.setdefault((r.sdk_version, r.mutation), {})[r.cli_version] = r
            elif r.probe == "tolerance" and r.cli_version != NO_CLI:
                before[r.sdk_version] = max(before.get(r.sdk_version, r.cli_version), r.cli_version, key=sort_key)
                if r.outcome not in BATCH_STANDS:
                    failed_before.add((r.sdk_version, r.mutation))
        cells: list[Cell] = []
        for sdk in planning.sdk_versions:
            newest_first = sorted(working.get(sdk, []), key=sort_key, reverse=True)
            order = list(dict.fromkeys([*([before[sdk]] if before.get(sdk) in newest_first else []), *newest_first]))
            for control in CONTROL_DESCRIPTIONS:
                rules = [r for r in RULES if control_of(r) == control]
                batch = tuple(r for r in rules if (sdk, r) not in failed_before) if self.batches else ()

                def together_of(rule: str, batch: tuple[str, ...] = batch) -> tuple[str, ...]:
                    return batch if rule in batch and len(batch) > 1 else ()

                cli, why = control_target(order, controls.get((sdk, control), {}))
                if cli is None:
                    cells += [Cell(self.name, sdk, NO_CLI, "tolerance", rule, why=why or "") for rule in rules]
                    continue
                cells.append(Cell(self.name, sdk, cli, "tolerance", control))
                if why is None:  # passed there
                    cells += [Cell(self.name, sdk, cli, "tolerance", rule, together=together_of(rule))
                              for rule in rules]
        return cells

    def _session_cells(self, planning: Planning) -> list[Cell]:
        """Every pair of the selection whose handshake connected: a session needs a client that
        started (one that did not is the handshake's verdict, not the session's)."""
        connected = {(r.sdk_version, r.cli_version) for r in planning.rows
                     if r.family == self.name and r.probe == HANDSHAKE and r.outcome in CONNECTED}
        return [Cell(self.name, s, c, SESSION) for s in planning.sdk_versions for c in planning.cli_versions
                if (s, c) in connected]

    def _contract_cells(self, planning: Planning) -> list[Cell]:
        """One cell per SDK version: the newest CLI its handshake failed against as it should
        (refused or launch-failed), to check what the SDK leaves behind."""
        failed: dict[str, list[str]] = {}
        for r in planning.rows:
            if (r.family == self.name and r.probe == HANDSHAKE and r.outcome in (Outcome.REFUSED, Outcome.LAUNCH_FAILED)
                    and r.cli_version in planning.cli_versions):
                failed.setdefault(r.sdk_version, []).append(r.cli_version)
        return [Cell(self.name, sdk, max(failed[sdk], key=sort_key), "contract")
                for sdk in planning.sdk_versions if sdk in failed]

    # -- measuring ---------------------------------------------------------------------

    @abstractmethod
    def sdk_environment(self, cell: Cell, make: MakeEnv) -> Environment:
        """The SDK release's environment (a uv venv, an npm prefix, a built agent)."""

    def environments(self, cell: Cell, make: MakeEnv) -> tuple[Environment, Environment | None]:
        sdk = self.sdk_environment(cell, make)
        if cell.cli_version == NO_CLI:
            return sdk, None
        return sdk, make(NpmPrefix, "cli", self.cli_package, cell.cli_version)

    def prepare(self, cell: Cell, env: Environment, ctx: Context) -> None:
        if isinstance(env, NpmPrefix) and env.package == self.cli_package:
            prepared_cli(env, ctx)
        else:
            self.prepare_sdk(env, ctx)

    def prepare_sdk(self, env: Environment, ctx: Context) -> None:
        """What the SDK's environment needs before its cells (a warm import, a runtime)."""

    def measure(self, cell: Cell, sdk: Environment, other: Environment | None, ctx: Context) -> Row:
        if other is None:
            raise UserError(f"{cell.family} {cell.probe} needs a CLI")  # planned only with NO_CLI, never measured
        assert isinstance(other, NpmPrefix)
        cli = prepared_cli(other, ctx)
        dead = does_not_start(cli, self.cli_package)
        if dead is not None:
            return cli_does_not_start_row(cell, cli, dead)
        runtime = cli.runtime or runtimes(ctx)[-1].get()
        hs = HandshakeCell(cell.family, cell.sdk_version, cell.cli_version, ctx.settings.probe_timeout,
                           ctx.settings.call_timeout, ctx.settings.grace, ctx.scratch, use_shim=ctx.through_shim,
                           warm=ctx.warm, ahead=ctx.ahead, dead_cli=ctx.settings.dead_cli, leak=ctx.settings.leak,
                           launcher=not ctx.direct_cli, preload=self.preload,
                           cli_says=functools.partial(self._cli_says, cli, runtime, ctx),
                           stops=ctx.settings.stops, stops_max=ctx.settings.stops_max, working=ctx.working,
                           waiting=ctx.waiting)
        return self.run(cell, hs, sdk, cli, runtime, ctx)

    @abstractmethod
    def run(self, cell: Cell, hs: HandshakeCell, sdk: Environment, cli: CliInstall, runtime: Runtime,
            ctx: Context) -> Row:
        """Run the cell's probe with this SDK's agent."""

    @staticmethod
    def _cli_says(cli: CliInstall, runtime: Runtime, ctx: Context) -> str | None:
        """What ``cli`` reports as its version to a client with no SDK: asked once per install,
        and only when a cell's SDK saw another version than the one installed."""
        return ctx.memo(("cli-says", cli.version, id(cli)),
                        lambda: self_reported_version(cli, runtime, ctx.scratch, ctx.settings.probe_timeout))

    # -- its pages ------------------------------------------------------------------------

    def pair_pages(self, view: SiteView) -> dict[str, str]:
        """Its matrix, every cell, and a page (with a reproduction script) per release."""
        pages = matrix_pages(view, self)
        sub = view.rows.pairs(self.name)
        for sdk in sorted_versions(sub["sdk_version"]):
            pages.update(sdk_pages(view, self, sdk))
        for cli in sorted_versions(sub["cli_version"]):
            pages[f"versions/{self.name}/{cli_slug(cli)}.md"] = cli_page(view, self, cli)
        return pages

    # The pages every Copilot family shares (the same text whichever family writes it) are
    # made once per build: each family is asked for its pages, and four made them four times.
    def side_by_side(self, view: SiteView) -> dict[str, tuple[str, str]]:
        pages = view.rows.once(("copilot", "side-by-side"), lambda: compare.compare_pages(view, CopilotFamily))
        return {rel: (text, compare.WHAT) for rel, text in pages.items()}

    def pages(self, view: SiteView) -> dict[str, str]:
        return {**tolerance_pages(view, self, CopilotFamily), **session_pages(view, self),
                "drift.md": view.rows.once(("copilot", "drift"), lambda: drift_page(view, CopilotFamily))}

    def pictures(self, view: SiteView) -> list[Picture]:
        own = Picture(f"heatmap-{self.name}.png", view.rows.pairs(self.name),
                      f"{self.name}: handshake (number: negotiated protocol)")
        return [own, *view.rows.once(("copilot", "side-by-side pictures"),
                                     lambda: compare.compare_pictures(view, CopilotFamily))]
