"""compat-matrix command line: wiring only. Errors become one line and an exit code here."""

from __future__ import annotations

import argparse
import signal
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

from matrix import HARNESS_VERSION, __version__
from matrix.answers.report import print_report, to_csv, to_json
from matrix.commands.answers import add_parsers, cmd_can_i_ship, cmd_diff, cmd_pins, sources_of
from matrix.ecosystems.discovery import Discovery
from matrix.errors import InfraError, MatrixError, UserError
from matrix.execute import proc
from matrix.execute.cache import cache_root
from matrix.execute.lock import holding
from matrix.execute.storage import StorageError, write_atomic
from matrix.families.registry import FAMILIES
from matrix.pipeline.config import Plan, load_plan
from matrix.pipeline.planning import resolve
from matrix.pipeline.runner import Cell, Runner
from matrix.pipeline.shard import merge
from matrix.store.dataset import Dataset
from matrix.store.results import Store
from matrix.versions import sort_key

__all__ = ["main"]

EXIT_USER = 2
EXIT_INFRA = 3
err_console = Console(stderr=True, soft_wrap=True)


def _load(args: argparse.Namespace) -> Plan:
    probes = {name: list(f.probes) for name, f in FAMILIES.items()}
    return load_plan(Path(args.config), list(FAMILIES), probes, [n for n, f in FAMILIES.items() if f.standin])


def _discovery(plan: Plan, refresh: bool = False) -> Discovery:
    return Discovery(cache_root() / "discovery", plan.run.discovery_ttl_hours * 3600, refresh)


def _results(args: argparse.Namespace, plan: Plan | None) -> Path:
    if args.results:
        return Path(args.results)
    return Path(plan.run.results if plan else "results")


def cmd_discover(args: argparse.Namespace, console: Console) -> int:
    plan = _load(args)
    disc = _discovery(plan, refresh=args.refresh)
    for r in resolve(plan, disc, args.family, [], [], []):
        fam = FAMILIES[r.family]
        sides = [("sdk", fam.sdk_package, r.sdk_releases, r.sdk_versions)]
        if fam.standin:
            console.print(f"[bold]{r.family}[/] server: the local stand-in, contract {fam.standin}")
        else:
            sides.append(("cli", fam.cli_package, r.cli_releases, r.cli_versions))
        for side, pkg, rel, chosen in sides:
            final = sorted((x.version for x in rel if not x.prerelease), key=sort_key)
            console.print(f"[bold]{r.family}[/] {side} {pkg}: {len(rel)} releases "
                          f"({len(final)} final), newest {final[-1] if final else '-'}")
            console.print(f"  selected ({len(chosen)}): {' '.join(chosen)}")
    for w in disc.warnings:
        err_console.print(f"[yellow]warning:[/] {w}")
    return 0


def _dataset(args: argparse.Namespace) -> Path | None:
    """The committed history (``--data``, default ``data``), if there is one."""
    data = Path(getattr(args, "data", None) or "data")
    return data if Dataset(data).exists() else None


def cmd_report(args: argparse.Namespace, console: Console) -> int:
    sources = sources_of(args)
    frame, warnings = sources.frame()
    if frame.empty:
        raise UserError(f"no results in {sources.data or sources.results}; run `compat-matrix run` first or pass "
                        "--results DIR")
    for w in warnings:
        err_console.print(f"[yellow]warning:[/] {w}")
    if args.family:
        frame = frame[frame["family"].isin(args.family)]
    if args.format == "table":
        print_report(frame, console)
        return 0
    text = to_json(frame) if args.format == "json" else to_csv(frame)
    if args.output:
        write_atomic(Path(args.output), text)
        console.print(f"wrote {args.output}")
    else:
        sys.stdout.write(text)
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="compat-matrix", description=__doc__)
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__} (harness {HARNESS_VERSION})")
    sub = p.add_subparsers(dest="command", required=True)

    def common(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--config", default="matrix.toml", help="the matrix config (default: matrix.toml)")
        sp.add_argument("--family", action="append", default=[], help="only this family (repeatable)")

    d = sub.add_parser("discover", help="list released versions and what the config selects")
    common(d)
    d.add_argument("--refresh", action="store_true", help="ignore the cached release lists")

    r = sub.add_parser("run", help="measure the cells not yet measured")
    common(r)
    r.add_argument("--sdk", action="append", default=[], metavar="V", help="only this SDK version (repeatable)")
    r.add_argument("--cli", action="append", default=[], metavar="V", help="only this CLI version (repeatable)")
    r.add_argument("--probe", action="append", default=[], help="only this probe kind (repeatable)")
    r.add_argument("--jobs", type=_positive, default=None, help="cells measured at once")
    r.add_argument("--results", default=None, help="results directory (default from the config)")
    r.add_argument("--force", action="store_true", help="re-measure cells already measured")
    r.add_argument("--repeat", type=_positive, default=1, metavar="N",
                   help="measure every planned cell N times; one whose outcome differs is marked flaky")
    r.add_argument("--new", action="store_true",
                   help="ask the registries now and measure only cells of releases no earlier run selected")
    r.add_argument("--shard", default=None, metavar="i/n",
                   help="measure only shard i of n (whole SDK versions per shard; merge with `merge`)")
    r.add_argument("--data", default="data", help="the committed history: its cells are not measured again "
                                                  "(default: data)")
    r.add_argument("--stale", action="store_true",
                   help="also re-measure cells measured by older rules of their probe, and harness errors")
    r.add_argument("--refresh", action="store_true", help="ask the registries for their releases now")
    r.add_argument("--wait", action="store_true", help="wait for a run that holds the results directory")

    rp = sub.add_parser("report", help="print or export the stored results")
    rp.add_argument("--results", default=None, help="results directory (default: results)")
    rp.add_argument("--data", default="data", help="the committed history (default: data)")
    rp.add_argument("--family", action="append", default=[], help="only this family (repeatable)")
    rp.add_argument("--format", choices=["table", "json", "csv"], default="table")
    rp.add_argument("--output", default=None, help="write to this file (atomically) instead of stdout")
    b = sub.add_parser("build", help="write the static site (MkDocs Material) from the stored results")
    b.add_argument("--results", default=None, help="results directory (default: results)")
    b.add_argument("--data", default="data", help="the committed history (default: data)")
    b.add_argument("--site", default="site", help="output directory (default: site)")
    b.add_argument("--root", default=".", help="repository root with mkdocs.yml, docs/, notebooks/")
    add_parsers(sub)
    f = sub.add_parser("fold", help="fold local results into the committed history (data/)")
    f.add_argument("--results", default="results", help="the local results to fold (default: results)")
    f.add_argument("--data", default="data", help="the committed history (default: data)")
    f.add_argument("--wait", action="store_true", help="wait for a run that holds either directory")
    v = sub.add_parser("verify", help="re-measure a random sample of stored cells; exit 1 on any disagreement")
    common(v)
    v.add_argument("--sample", type=_positive, required=True, metavar="N", help="how many cells")
    v.add_argument("--seed", type=int, default=0, metavar="S", help="the random draw (default: 0)")
    v.add_argument("--results", default="results", help="local results (default: results)")
    v.add_argument("--data", default="data", help="the committed history (default: data)")
    v.add_argument("--jobs", type=_positive, default=None, help="cells measured at once")
    m = sub.add_parser("merge", help="merge the results of shards into one results directory")
    m.add_argument("out", help="the merged results directory (created; rows are appended)")
    m.add_argument("shards", nargs="+", help="the shards' results directories")
    return p


def _positive(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"{n} must be at least 1")
    return n


def cmd_build(args: argparse.Namespace, console: Console) -> int:
    from matrix.site.build import build_site  # heavy imports (matplotlib, nbclient) only when building

    root = Path(args.root)
    if not (root / "mkdocs.yml").exists():
        raise UserError(f"{root} has no mkdocs.yml; run from the repository root or pass --root DIR")
    result = build_site(root, sources_of(args), Path(args.site), cache_root())
    for w in result.warnings:
        err_console.print(f"[yellow]warning:[/] {w}")
    ran = [k for k, v in result.notebooks_executed.items() if v]
    console.print(f"built {result.site}/ ({result.pages} generated pages; notebooks executed: "
                  f"{', '.join(ran) or 'none, all cached'}) in {result.seconds:.1f}s")
    return 0


def cmd_fold(args: argparse.Namespace, console: Console) -> int:
    """Fold local measurements into the committed history; the diff is for a reviewer."""
    results, data = Path(args.results), Path(args.data)
    if not (results / "rows.jsonl").exists():
        raise UserError(f"no results in {results} to fold; run `compat-matrix run` first or pass --results DIR")
    with holding(results, wait=args.wait), holding(data, wait=args.wait):
        report = Dataset(data).fold(results)
    moved = report.moved
    console.print(f"folded {results}/ into {data}/: {len(report.added)} cells added, {len(report.replaced)} "
                  f"measured again ({len(moved)} changed outcome), {report.unchanged} unchanged, "
                  f"{len(report.skipped)} infra errors left out (not measurements); {len(report.files)} files "
                  "written", highlight=False)
    for was, now in moved:
        console.print(f"  {now.family} {now.probe} {now.mutation} sdk {now.sdk_version} × {now.cli_version}: "
                      f"{was.outcome} -> {now.outcome}", highlight=False)
    if report.files:
        console.print(f"review with `git diff --stat {data}` and commit what you keep", highlight=False)
    return 0


def cmd_verify(args: argparse.Namespace, console: Console) -> int:
    """Re-measure a stratified random sample of stored cells; exit 1 on any disagreement."""
    from matrix.answers.verify import Check, agreement, sample

    plan = _load(args)
    sources = sources_of(args)
    rows, _ = sources.rows()
    if args.family:
        rows = [r for r in rows if r.family in args.family]
    chosen = sample(rows, args.sample, args.seed)
    if not chosen:
        raise UserError(f"no stored verdicts to verify in {sources.data or sources.results}")
    console.print(f"verifying {len(chosen)} of {len(rows)} stored cells (seed {args.seed}), stratified by family "
                  "and outcome")
    with tempfile.TemporaryDirectory(prefix="compat-matrix-verify-") as tmp:
        runner = Runner(plan, Store(Path(tmp)), cache_root(), proc.Reaper())
        cells = [Cell(r.family, r.sdk_version, r.cli_version, r.probe, r.mutation) for r in chosen]
        measured = {r.key(): r for r in runner.run(cells, args.jobs or plan.run.jobs)}
    checks = [Check(r, measured.get(r.key())) for r in chosen]
    for c in sorted(checks, key=lambda c: (c.verdict != "disagree", c.stored.key())):
        r = c.stored
        now = c.now.outcome if c.now else "not measured"
        console.print(f"  {c.verdict:<9} {r.family} {r.probe} {r.mutation} sdk {r.sdk_version} × {r.cli_version}: "
                      f"stored {r.outcome}, now {now}", highlight=False, soft_wrap=True)
        if c.verdict == "disagree" and c.now is not None:
            for label, row in (("stored", r), ("now", c.now)):
                console.print(f"      {label:<6} {row.measured_at} harness {row.harness_version}: "
                              f"{(row.error_message or '').strip()[:300]}", highlight=False, soft_wrap=True)
    agree, disagree, unknown = agreement(checks)
    judged = agree + disagree
    share = f"{100 * agree / judged:.1f} %" if judged else "n/a"
    console.print(f"agreement: {agree} of {judged} ({share}); {disagree} disagree; {unknown} could not be "
                  "re-measured (infrastructure or harness errors: not counted)")
    return 1 if disagree else (EXIT_INFRA if unknown else 0)


def cmd_merge(args: argparse.Namespace, console: Console) -> int:
    count, warnings = merge(Path(args.out), [Path(p) for p in args.shards])
    for w in warnings:
        err_console.print(f"[yellow]warning:[/] {w}")
    console.print(f"merged {count} rows from {len(args.shards)} shard(s) into {args.out}")
    return 0


def cmd_pins_with_plan(args: argparse.Namespace, console: Console) -> int:
    return cmd_pins(args, console, _load(args) if args.bisect else None)


def cmd_run(args: argparse.Namespace, console: Console) -> int:
    from matrix.commands.run import cmd_run as run

    return run(args, console, err_console, lambda: _load(args))


COMMANDS = {"discover": cmd_discover, "run": cmd_run, "report": cmd_report, "build": cmd_build,
            "can-i-ship": cmd_can_i_ship, "pins": cmd_pins_with_plan, "diff": cmd_diff, "merge": cmd_merge,
            "fold": cmd_fold, "verify": cmd_verify}


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    console = Console()
    # SIGTERM ends a run like Ctrl-C does: every process group we started is killed.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        return COMMANDS[args.command](args, console)
    except UserError as err:
        err_console.print(f"[red]error:[/] {err}", highlight=False)
        return EXIT_USER
    except StorageError as err:  # a full disk under what we keep: our infrastructure, not the input
        err_console.print(f"[red]infrastructure error:[/] {err}", highlight=False)
        return EXIT_INFRA
    except InfraError as err:
        err_console.print(f"[red]infrastructure error:[/] {err}", highlight=False)
        return EXIT_INFRA
    except MatrixError as err:
        err_console.print(f"[red]error:[/] {err}", highlight=False)
        return EXIT_USER
    except KeyboardInterrupt:
        err_console.print("interrupted: processes stopped; the rows already written are kept")
        return 130


if __name__ == "__main__":
    sys.exit(main())
