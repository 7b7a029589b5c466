"""`compat-matrix discover`: the releases each side has, and what the config selects."""

from __future__ import annotations

import argparse

from rich.console import Console

from matrix.commands.command import Command
from matrix.commands.common import add_config_arguments, load, warn
from matrix.ecosystems.discovery import Discovery
from matrix.execute.cache import cache_root
from matrix.families.registry import FAMILIES
from matrix.pipeline.planning import resolve
from matrix.versions import sort_key

__all__ = ["COMMAND"]


def cmd_discover(args: argparse.Namespace, console: Console) -> int:
    plan = load(args)
    disc = Discovery(cache_root() / "discovery", plan.run.discovery_ttl_hours * 3600, args.refresh)
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
        warn(w)
    return 0


def _arguments(parser: argparse.ArgumentParser) -> None:
    add_config_arguments(parser)
    parser.add_argument("--refresh", action="store_true", help="ignore the cached release lists")


COMMAND = Command("discover", "list released versions and what the config selects", _arguments, cmd_discover)
