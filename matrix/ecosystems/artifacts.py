"""Local build artifacts standing in for a release not published yet (a candidate): a Python
wheel or sdist, an npm tarball (`npm pack`), a Go module's directory. What package and version each says it is, read
from its own metadata, and the label its cells carry: ``<version>+candidate.<hash>``, a
local/build suffix both PEP 440 and semver accept, so it sorts beside the release it would be
and can never be mistaken for a published one."""

from __future__ import annotations

import email.parser
import hashlib
import json
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from matrix.errors import UserError

__all__ = ["CANDIDATE", "Artifact", "read_artifact"]

CANDIDATE = "+candidate."


@dataclass(frozen=True)
class Artifact:
    path: Path
    ecosystem: str  # "pypi" | "npm" | "go"
    package: str
    version: str  # what its metadata says
    digest: str  # sha256 of the file

    @property
    def label(self) -> str:
        return f"{self.version}{CANDIDATE}{self.digest[:10]}"


def _pkg_info(text: str) -> tuple[str, str]:
    meta = email.parser.Parser().parsestr(text)
    return str(meta.get("Name", "")), str(meta.get("Version", ""))


def _go_module(path: Path) -> Artifact:
    """A Go module's directory: its module path from go.mod; its version is unknown (a module
    is versioned by its tag), so 0.0.0; the digest covers every file but version control's."""
    module = next((line.split()[1] for line in (path / "go.mod").read_text().splitlines()
                   if line.startswith("module ") and len(line.split()) > 1), "")
    digest = hashlib.sha256()
    for f in sorted(p for p in path.rglob("*") if p.is_file() and ".git" not in p.relative_to(path).parts):
        digest.update(f.relative_to(path).as_posix().encode() + b"\0" + f.read_bytes() + b"\0")
    return Artifact(path, "go", module, "0.0.0", digest.hexdigest())


def read_artifact(path: Path) -> Artifact:
    """The artifact at ``path``; a file that is none of the kinds we install is an error naming it."""
    if path.is_dir() and (path / "go.mod").is_file():
        return _go_module(path)
    if not path.is_file():
        raise UserError(f"{path}: no such file; pass a wheel (.whl), an sdist (.tar.gz), an npm tarball (.tgz) "
                        "or a Go module's directory")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    try:
        if path.name.endswith(".whl"):
            with zipfile.ZipFile(path) as z:
                meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
                name, version = _pkg_info(z.read(meta).decode())
            return Artifact(path, "pypi", name, version, digest)
        if path.name.endswith(".tgz"):
            with tarfile.open(path) as t:
                member = t.extractfile("package/package.json")
                doc = json.loads(member.read()) if member else {}
            return Artifact(path, "npm", str(doc.get("name", "")), str(doc.get("version", "")), digest)
        if path.name.endswith(".tar.gz"):
            with tarfile.open(path) as t:
                info = next(m for m in t.getmembers() if m.name.count("/") == 1 and m.name.endswith("/PKG-INFO"))
                member = t.extractfile(info)
                name, version = _pkg_info(member.read().decode() if member else "")
            return Artifact(path, "pypi", name, version, digest)
    except (StopIteration, KeyError, OSError, ValueError, zipfile.BadZipFile, tarfile.TarError) as err:
        raise UserError(f"{path}: not a readable package ({type(err).__name__}: {err}); pass a wheel, an sdist "
                        "or an npm tarball as built by its tools") from None
    raise UserError(f"{path}: not a wheel (.whl), an sdist (.tar.gz) or an npm tarball (.tgz)")
