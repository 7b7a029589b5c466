"""What the commands share: the console for errors and warnings, the plan a config gives,
and where the rows are read from."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import pandas as pd
from rich.console import Console
from rich.markup import escape

from matrix.ecosystems.artifacts import CANDIDATE
from matrix.ecosystems.discovery import Discovery
from matrix.errors import InfraError, UnknownVersionError, UserError
from matrix.execute.cache import cache_root
from matrix.families.registry import FAMILIES, open_sources
from matrix.pipeline.config import Plan, RunSettings, load_plan
from matrix.store.dataset import Dataset, Sources
from matrix.store.results import Releases
from matrix.versions import sorted_versions

__all__ = [
    "DATA_ENV",
    "add_config_arguments",
    "add_data_argument",
    "check_released",
    "data_of",
    "err_console",
    "known_releases",
    "load",
    "pair_family",
    "positive",
    "results_of",
    "sources_of",
    "warn",
]

# The committed history every command reads by default: data/ of the checkout, or where
# COMPAT_MATRIX_DATA says (a tool run outside the checkout); COMPAT_MATRIX_DATA="" reads none
# (tests that must not see it).
DATA_ENV = "COMPAT_MATRIX_DATA"

err_console = Console(stderr=True, soft_wrap=True)


def add_data_argument(parser: argparse.ArgumentParser, what: str = "") -> None:
    """``--data``, the committed history, as every command takes it; ``what``: what the
    command does with it, when more than reading it."""
    parser.add_argument("--data", default=None, help=f"the committed history{what} (default: data when it is "
                                                         "there, or $COMPAT_MATRIX_DATA)")


def add_config_arguments(parser: argparse.ArgumentParser) -> None:
    """``--config`` and ``--family``, as the commands that plan from a config take them."""
    parser.add_argument("--config", default="matrix.toml", help="the matrix config (default: matrix.toml)")
    parser.add_argument("--family", action="append", default=[], help="only this family (repeatable)")


def positive(text: str) -> int:
    """An argument that is a whole number of at least 1."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"{n} must be at least 1")
    return n


def warn(text: str) -> None:
    err_console.print(f"[yellow]warning:[/] {escape(text)}", highlight=False)


def load(args: argparse.Namespace) -> Plan:
    """The plan of ``--config``, checked against the families this installation has."""
    probes = {name: list(f.probes) for name, f in FAMILIES.items()}
    return load_plan(Path(args.config), list(FAMILIES), probes, [n for n, f in FAMILIES.items() if f.standin])


def results_of(args: argparse.Namespace, plan: Plan | None) -> Path:
    if args.results:
        return Path(args.results)
    return Path(plan.run.results if plan else "results")


def data_of(args: argparse.Namespace, create: bool = False) -> Path | None:
    """The committed history to read: ``--data`` or ``$COMPAT_MATRIX_DATA`` must name one that is
    there (a mistyped path is an error, never an empty history; ``create``: a fold may start a new
    one); by default ``data`` when it is there, else none."""
    named = getattr(args, "data", None)
    where = "--data"
    if named is None and DATA_ENV in os.environ:
        named, where = os.environ[DATA_ENV], f"${DATA_ENV}"
        if not named:
            return None
    if named is None:
        return Path("data") if Dataset(Path("data")).present() else None
    path = Path(named)
    if not Dataset(path).present() and not (create and (not path.exists() or not any(path.iterdir()))):
        raise UserError(f"{where} {named}: no dataset there (no {path / 'index.json'}); name the directory that holds "
                        "the committed history (e.g. data), or leave it out")
    return path


def sources_of(args: argparse.Namespace) -> Sources:
    """The committed history (``data_of``) and the local results (``--results``)."""
    return open_sources(Path(args.results or "results"), data_of(args))


def known_releases(frame: pd.DataFrame, sources: Sources) -> Releases:
    """The releases the history and the results name: their lists, and every measured version."""
    known = sources.releases()
    for family, part in frame.groupby("family"):
        for side in ("sdk", "cli"):
            known.setdefault(str(family), {}).setdefault(side, {}).update(
                dict.fromkeys(map(str, part[f"{side}_version"].unique()), None))
    return known


def check_released(family: str, side: str, version: str, known: Releases) -> None:
    """``version`` of ``side`` is one ``known`` (the dataset's and the results' release lists)
    names, or one its registry lists; else ``UnknownVersionError`` (exit 2). A registry that
    cannot be asked is said, and the answer comes from what was measured."""
    fam = FAMILIES[family]
    if CANDIDATE in version or version in known.get(family, {}).get(side, {}):
        return
    eco, package = (fam.sdk_ecosystem, fam.sdk_package) if side == "sdk" else (fam.cli_ecosystem, fam.cli_package)
    try:
        releases = Discovery(cache_root() / "discovery", RunSettings().discovery_ttl_hours * 3600).releases(
            eco, package, fam.version_hints)
    except InfraError as err:
        warn(f"cannot tell whether {package} {version} was released ({err}); answering from what was measured")
        return
    if version not in {r.version for r in releases}:
        raise UnknownVersionError(package, version, sorted_versions([r.version for r in releases]))


def pair_family(name: str) -> str:
    """``--family`` of a command that reads a family's pair matrix (``Family.pair_probe``; a
    family of checks alone has none)."""
    if name not in FAMILIES or not FAMILIES[name].pair_probe:
        valid = ", ".join(f for f, fam in FAMILIES.items() if fam.pair_probe)
        raise UserError(f"--family {name!r} has no matrix of pairs of releases; valid: {valid}")
    return name
