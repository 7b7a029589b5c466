"""`compat-matrix can-i-ship`: a published release or a candidate build (a local artifact,
measured on demand into a results set of its own), against what the other side runs (the
supported releases, the newest N, all, or a fleet file), as a terminal answer, JSON, a
Markdown job summary and JUnit."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from matrix.answers.gate import Difference, differences, ignoring, load_fleet, to_junit, to_markdown
from matrix.answers.ship import can_i_ship, targets_of
from matrix.commands.command import Command
from matrix.commands.common import (
    add_data_argument,
    check_released,
    data_of,
    err_console,
    known_releases,
    load,
    pair_family,
)
from matrix.commands.run import RichReporter
from matrix.ecosystems import get
from matrix.ecosystems.artifacts import CANDIDATE
from matrix.ecosystems.discovery import Discovery
from matrix.errors import UserError
from matrix.execute.cache import cache_root
from matrix.execute.storage import write_atomic
from matrix.families.registry import FAMILIES, open_sources
from matrix.model import Row
from matrix.pipeline.candidates import Candidate, candidate
from matrix.pipeline.workflow import RunRequest, execute
from matrix.versions import apply_selection, newest_release

__all__ = ["COMMAND"]


def _fleet_targets(args: argparse.Namespace, family: str, other: str) -> list[str]:
    """The other side's releases the fleet file selects, resolved against the registry."""
    fleet = load_fleet(Path(args.fleet))
    fam = FAMILIES[family]
    eco, package = (fam.cli_ecosystem, fam.cli_package) if other == "cli" else (fam.sdk_ecosystem, fam.sdk_package)
    plan = load(args)
    releases = Discovery(cache_root() / "discovery", plan.run.discovery_ttl_hours * 3600, False).releases(eco, package)
    chosen = apply_selection(package, releases, fleet.other, [], False, get(eco).key)
    if not chosen:
        raise UserError(f"--fleet {args.fleet}: other = {fleet.other} selects no released {package}")
    return chosen


def _measure(args: argparse.Namespace, cand: Candidate, targets: list[str], results: Path,
             baseline: str | None) -> None:
    """The candidate, and the newest published release of its side (to compare with), against
    each target not measured yet (a run skips what it has)."""

    class Progress(RichReporter):
        """A run's progress, on stderr (stdout is the answer's), without the family's matrix."""

        def report(self, rows: list[Row]) -> None:
            pass

    kept = data_of(args)
    others = {"sdk": targets if cand.side == "cli" else [], "cli": targets if cand.side == "sdk" else []}
    probes = [str(FAMILIES[cand.family].pair_probe)]
    requests = [RunRequest(plan=load(args), results=results, data=kept, families=[cand.family], probes=probes,
                           candidates=[cand], sdk=others["sdk"], cli=others["cli"])]
    if baseline is not None:
        sdk, cli = ([baseline], others["cli"]) if cand.side == "sdk" else (others["sdk"], [baseline])
        requests.append(RunRequest(plan=load(args), results=results, data=kept, families=[cand.family],
                                   probes=probes, sdk=sdk, cli=cli))
    for request in requests:
        ui = Progress(err_console, err_console)
        with ui.progress:
            code = execute(request, ui)
        if code not in (0, 3):  # 3: some cells were infrastructure errors: unknown, said so below
            raise UserError(f"measuring the candidate ended with exit {code}; see the messages above")


def cmd_can_i_ship(args: argparse.Namespace, console: Console) -> int:
    family = pair_family(args.family)
    artifact = args.sdk_artifact or args.cli_artifact
    if artifact and (args.sdk or args.cli):
        raise UserError("ship either a published release (--sdk/--cli) or a candidate (--sdk-artifact/--cli-artifact)")
    results = Path(args.results or ("candidates" if artifact else "results"))
    data = data_of(args)
    sources = open_sources(results, data)
    history, _ = sources.frame()
    cand = candidate(family, "sdk" if args.sdk_artifact else "cli", Path(artifact)) if artifact else None
    if not history.empty:
        known = known_releases(history, sources)
        for named_side, named in (("sdk", args.sdk), ("cli", args.cli)):
            if named is not None:
                check_released(family, named_side, named, known)
    side = cand.side if cand else ("sdk" if args.sdk else "cli")
    other = "cli" if side == "sdk" else "sdk"
    published = history[~history["sdk_version"].str.contains(CANDIDATE, regex=False)
                        & ~history["cli_version"].str.contains(CANDIDATE, regex=False)] if not history.empty \
        else history
    if args.fleet:
        targets, against = _fleet_targets(args, family, other), f"the fleet in {args.fleet}"
    elif cand is not None or (args.sdk is None) != (args.cli is None):
        if published.empty:
            raise UserError(f"no published history in {data} or {results} to judge against; pass --fleet FILE")
        targets, against = targets_of(published, family, side, args.against), args.against
    else:
        targets, against = None, args.against
    this = "sdk_version" if side == "sdk" else "cli_version"
    mine = [] if published.empty else list(published[published["family"] == family][this])
    baseline = newest_release(mine)
    if cand is not None:
        assert targets is not None
        _measure(args, cand, targets, results, baseline)
        history, _ = sources.frame()
    version = cand.label if cand else (args.sdk if side == "sdk" else args.cli)
    sdk, cli = (version, None) if side == "sdk" else (None, version)
    if targets is None:
        sdk, cli = args.sdk, args.cli
    decision = can_i_ship(history, family, sdk, cli, against, targets)
    if args.fleet:
        decision = ignoring(decision, load_fleet(Path(args.fleet)))
    diffs: list[Difference] = []
    if cand is not None and targets is not None and baseline is not None:
        diffs = differences(history, family, side, version, baseline, targets)
    label = f"{FAMILIES[family].sdk_package if side == 'sdk' else FAMILIES[family].cli_package} {version}"
    if args.markdown:
        write_atomic(Path(args.markdown), to_markdown(decision, diffs, label))
    if args.junit:
        write_atomic(Path(args.junit), to_junit(decision, label))
    if args.json:
        print(decision.to_json())
        return decision.exit_code
    console.print(f"{family}: can I ship {label} (against {decision.against})? [bold]{decision.answer}[/]",
                  highlight=False)
    for c in decision.cells:
        console.print(f"  sdk {c.sdk_version:>8} × cli {c.cli_version:>8}  {c.verdict:<8} {c.reason}",
                      highlight=False, soft_wrap=True)
    if diffs:
        console.print(f"where it differs from {diffs[0].baseline}, the newest published {side}:", highlight=False)
        for d in diffs:
            console.print(f"  {d.kind:<12} {other} {d.other}: {d.baseline} {d.was or 'not measured'}"
                          f"{' (' + d.was_error + ')' if d.was_error else ''} -> this build {d.now or 'not measured'}"
                          f"{' (' + d.now_error + ')' if d.now_error else ''}", highlight=False, soft_wrap=True)
    return decision.exit_code


def _arguments(s: argparse.ArgumentParser) -> None:
    s.add_argument("--family", required=True)
    s.add_argument("--sdk", default=None, metavar="V", help="the SDK release to ship")
    s.add_argument("--cli", default=None, metavar="V", help="the CLI release to ship (both: a proposed pin pair)")
    s.add_argument("--sdk-artifact", default=None, metavar="FILE",
                   help="a candidate SDK build not published yet: a wheel or sdist, an npm tarball (npm pack), a Go "
                        "module directory, a crate (cargo package) or a jar (mvn package)")
    s.add_argument("--cli-artifact", default=None, metavar="FILE", help="a candidate CLI build: an npm tarball")
    s.add_argument("--against", default="supported", metavar="supported|latest:N|all",
                   help="which versions of the other side (default: supported)")
    s.add_argument("--fleet", default=None, metavar="FILE",
                   help="a TOML file naming the other side's releases in use (and pairs to ignore)")
    s.add_argument("--config", default="matrix.toml", help="the matrix config (timeouts, for measuring)")
    s.add_argument("--results", default=None,
                   help="local results (default: results; candidates: candidates, never the dataset)")
    add_data_argument(s)
    s.add_argument("--json", action="store_true")
    s.add_argument("--markdown", default=None, metavar="FILE", help="also write a Markdown summary (GitHub's job "
                                                                   "summary)")
    s.add_argument("--junit", default=None, metavar="FILE", help="also write JUnit XML: one test case per pair")


COMMAND = Command("can-i-ship", "yes (0) / no (1) / unknown (2): does a release, or a candidate build, work with the "
                                "other side", _arguments, cmd_can_i_ship)
