"""compat-matrix command line: the table of commands, the parser built from it, and the one place
where errors become one line and an exit code."""

from __future__ import annotations

import argparse
import gc
import signal
import sys
from collections.abc import Sequence
from typing import NoReturn

from rich.console import Console
from rich.markup import escape

from matrix import HARNESS_VERSION, __version__
from matrix.commands import (
    build,
    changes,
    check,
    diff,
    discover,
    fold,
    merge,
    migrate,
    pins,
    report,
    run,
    ship,
    verify,
)
from matrix.commands.command import Command
from matrix.commands.common import err_console
from matrix.errors import EXIT_INTERRUPTED, InfraError, MatrixError, exit_code
from matrix.execute import proc

__all__ = ["COMMANDS", "main"]

COMMANDS: tuple[Command, ...] = tuple(m.COMMAND for m in (
    discover, run, report, build, ship, pins, diff, fold, changes, verify, merge, check, migrate))


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="compat-matrix", description=__doc__)
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__} (harness {HARNESS_VERSION})")
    sub = p.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.arguments(sub.add_parser(command.name, help=command.help))
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # A line is never broken at the terminal's width: people grep it and gates match it whole.
    console = Console(soft_wrap=True)
    handlers = {c.name: c.handler for c in COMMANDS}
    # SIGTERM ends a run like Ctrl-C does: every process group we started is killed.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        return handlers[args.command](args, console)
    except MatrixError as err:
        kind = "infrastructure error" if isinstance(err, InfraError) else "error"
        err_console.print(f"[red]{kind}:[/] {escape(str(err))}", highlight=False)
        return exit_code(err)
    except KeyboardInterrupt:
        # The run's threads are joined by now; whatever one of them started outside the run's
        # reaper, or was killed and is still exiting, is gone before we are.
        proc.end_all()
        err_console.print("interrupted: processes stopped; the rows already written are kept")
        return EXIT_INTERRUPTED


def entry() -> NoReturn:
    """The console script: ``main``, then an exit that skips the collector. What a command
    read (a verified history is millions of objects) lives until the end, and the collector's
    passes over it while the interpreter shuts down found nothing to free and took a second
    of every command; frozen, the objects are only freed."""
    code = main()
    gc.freeze()
    sys.exit(code)


if __name__ == "__main__":
    entry()
