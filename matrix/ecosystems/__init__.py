"""Package ecosystems: how each registry orders its versions and how its users pin them.

An ecosystem owns its release listing, its version order (PEP 440 for PyPI, SemVer 2 precedence for npm and Go,
each through a well-kept library), what counts as a prerelease, the command that installs one
release, and the syntax of a working range. Families name their SDK's and their other side's
ecosystem; nothing else matches ecosystem names as strings. Each is a plugin
(``registry.py``), implementing the protocol of ``base.py``."""

from matrix.ecosystems.base import Ecosystem, Listing, Run
from matrix.ecosystems.registry import ECOSYSTEMS, get, version_key

__all__ = ["ECOSYSTEMS", "Ecosystem", "Listing", "Run", "get", "version_key"]
