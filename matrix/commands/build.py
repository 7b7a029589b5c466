"""`compat-matrix build`: the static site from the history and local results."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from matrix.commands.command import Command
from matrix.commands.common import add_data_argument, sources_of, warn
from matrix.errors import UserError
from matrix.execute.cache import cache_root

__all__ = ["COMMAND"]


def cmd_build(args: argparse.Namespace, console: Console) -> int:
    from matrix.site.build import build_site  # heavy imports (matplotlib, nbclient) only when building

    root = Path(args.root)
    if not (root / "mkdocs.yml").exists():
        raise UserError(f"{root} has no mkdocs.yml; run from the repository root or pass --root DIR")
    result = build_site(root, sources_of(args), Path(args.site), cache_root())
    for w in result.warnings:
        warn(w)
    ran = [k for k, v in result.notebooks_executed.items() if v]
    console.print(f"built {result.site}/ ({result.pages} generated pages; notebooks executed: "
                  f"{', '.join(ran) or 'none, all cached'}) in {result.seconds:.1f}s")
    return 0


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--results", default=None, help="results directory (default: results)")
    add_data_argument(parser)
    parser.add_argument("--site", default="site", help="output directory (default: site)")
    parser.add_argument("--root", default=".", help="repository root with mkdocs.yml, docs/, notebooks/")


COMMAND = Command("build", "write the static site (MkDocs Material) from the stored results", _arguments, cmd_build)
