"""What a command is: its name, its one line of help, the arguments it takes and the handler
that answers them. Every command module declares one ``COMMAND``; ``cli.py`` registers them in
one table, builds the parser from it, and turns every typed error into its exit code."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass

from rich.console import Console

__all__ = ["Command"]


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    arguments: Callable[[argparse.ArgumentParser], None]
    # Answers the parsed arguments on ``console`` (stdout); returns the exit code.
    handler: Callable[[argparse.Namespace, Console], int]
