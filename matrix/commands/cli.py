"""compat-matrix command line: arguments, the command that answers them, and one place where
errors become one line and an exit code."""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Sequence

from rich.console import Console
from rich.markup import escape

from matrix import HARNESS_VERSION, __version__
from matrix.commands.answers import add_parsers, cmd_diff, cmd_pins
from matrix.commands.build import cmd_build
from matrix.commands.common import add_data_argument, err_console, load
from matrix.commands.dataset import cmd_changes, cmd_check, cmd_fold, cmd_migrate, cmd_verify
from matrix.commands.discover import cmd_discover
from matrix.commands.merge import cmd_merge
from matrix.commands.report import cmd_report
from matrix.commands.run import cmd_run as run
from matrix.commands.ship import cmd_can_i_ship
from matrix.errors import InfraError, MatrixError, UserError
from matrix.execute.storage import StorageError
from matrix.pipeline.workflow import EXIT_INFRA

__all__ = ["main"]

EXIT_USER = 2


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
    add_data_argument(r, ": its cells are not measured again")
    r.add_argument("--stale", action="store_true",
                   help="also re-measure cells measured by older rules of their probe, and harness errors")
    r.add_argument("--refresh", action="store_true", help="ask the registries for their releases now")
    r.add_argument("--wait", action="store_true", help="wait for a run that holds the results directory")
    r.add_argument("--sdk-artifact", default=None, metavar="FILE",
                   help="measure a candidate SDK build (wheel, sdist, npm tarball) instead of the SDK selection; "
                        "its cells go to candidates/ (never the dataset)")
    r.add_argument("--cli-artifact", default=None, metavar="FILE", help="the same for a candidate CLI build")

    rp = sub.add_parser("report", help="print or export the stored results")
    rp.add_argument("--results", default=None, help="results directory (default: results)")
    add_data_argument(rp)
    rp.add_argument("--family", action="append", default=[], help="only this family (repeatable)")
    rp.add_argument("--format", choices=["table", "json", "csv"], default="table")
    rp.add_argument("--output", default=None, help="write to this file (atomically) instead of stdout")
    b = sub.add_parser("build", help="write the static site (MkDocs Material) from the stored results")
    b.add_argument("--results", default=None, help="results directory (default: results)")
    add_data_argument(b)
    b.add_argument("--site", default="site", help="output directory (default: site)")
    b.add_argument("--root", default=".", help="repository root with mkdocs.yml, docs/, notebooks/")
    add_parsers(sub)
    f = sub.add_parser("fold", help="fold local results into the committed history (data/)")
    f.add_argument("--results", default="results", help="the local results to fold (default: results)")
    add_data_argument(f)
    f.add_argument("--wait", action="store_true", help="wait for a run that holds either directory")
    c = sub.add_parser("changes", help="what a fold into the dataset changed: new releases, regressions first")
    add_data_argument(c)
    c.add_argument("--entry", type=_positive, default=1, metavar="N", help="the Nth newest fold (default: 1)")
    c.add_argument("--format", choices=["markdown", "text", "json", "title"], default="text",
                   help="markdown: a pull request's body; title: its one-line title")
    v = sub.add_parser("verify", help="re-measure a random sample of stored cells; exit 1 on any disagreement")
    common(v)
    v.add_argument("--sample", type=_positive, required=True, metavar="N", help="how many cells")
    v.add_argument("--seed", type=int, default=0, metavar="S", help="the random draw (default: 0)")
    v.add_argument("--results", default="results", help="local results (default: results)")
    add_data_argument(v)
    v.add_argument("--jobs", type=_positive, default=None, help="cells measured at once")
    ck = sub.add_parser("check", help="check every rule of the dataset; print every violation, exit 2 on any")
    add_data_argument(ck)
    mg = sub.add_parser("migrate", help="bring a dataset of an older dataset schema to this one, as a whole")
    add_data_argument(mg)
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


def cmd_pins_with_plan(args: argparse.Namespace, console: Console) -> int:
    return cmd_pins(args, console, load(args) if args.bisect else None)


def cmd_run(args: argparse.Namespace, console: Console) -> int:
    return run(args, console, err_console, lambda: load(args))


COMMANDS = {"discover": cmd_discover, "run": cmd_run, "report": cmd_report, "build": cmd_build,
            "can-i-ship": cmd_can_i_ship, "pins": cmd_pins_with_plan, "diff": cmd_diff, "merge": cmd_merge,
            "fold": cmd_fold, "changes": cmd_changes, "verify": cmd_verify, "check": cmd_check,
            "migrate": cmd_migrate}


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    console = Console()
    # SIGTERM ends a run like Ctrl-C does: every process group we started is killed.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        return COMMANDS[args.command](args, console)
    except UserError as err:
        err_console.print(f"[red]error:[/] {escape(str(err))}", highlight=False)
        return EXIT_USER
    except StorageError as err:  # a full disk under what we keep: our infrastructure, not the input
        err_console.print(f"[red]infrastructure error:[/] {escape(str(err))}", highlight=False)
        return EXIT_INFRA
    except InfraError as err:
        err_console.print(f"[red]infrastructure error:[/] {escape(str(err))}", highlight=False)
        return EXIT_INFRA
    except MatrixError as err:
        err_console.print(f"[red]error:[/] {escape(str(err))}", highlight=False)
        return EXIT_USER
    except KeyboardInterrupt:
        err_console.print("interrupted: processes stopped; the rows already written are kept")
        return 130


if __name__ == "__main__":
    sys.exit(main())
