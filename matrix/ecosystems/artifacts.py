"""Local build artifacts standing in for a release not published yet (a candidate): a Python
wheel or sdist, an npm tarball (`npm pack`), a Go module's directory, a Rust crate (`cargo
package`) or a Java jar built by Maven. What package and version each says it is, read from
its own metadata, and the label its cells carry: ``<version>+candidate.<hash>``, a
local/build suffix both PEP 440 and semver accept, so it sorts beside the release it would be
and can never be mistaken for a published one."""

from __future__ import annotations

import email.parser
import hashlib
import json
import tarfile
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path

from matrix.errors import UserError

__all__ = ["CANDIDATE", "Artifact", "read_artifact"]

CANDIDATE = "+candidate."
KINDS = ("made by `uv build`, `npm pack`, `cargo package` (target/package/*.crate) or `mvn package` "
         "(target/*.jar)")


@dataclass(frozen=True)
class Artifact:
    path: Path
    ecosystem: str  # "pypi" | "npm" | "go" | "crates" | "maven"
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


def _crate(path: Path, digest: str) -> Artifact:
    """A ``.crate`` (a gzipped tar of ``<name>-<version>/``): name and version from the manifest
    cargo normalised into it."""
    with tarfile.open(path) as t:
        info = next(m for m in t.getmembers() if m.name.count("/") == 1 and m.name.endswith("/Cargo.toml"))
        member = t.extractfile(info)
        package = tomllib.loads(member.read().decode() if member else "").get("package", {})
    return Artifact(path, "crates", str(package.get("name", "")), str(package.get("version", "")), digest)


def _jar(path: Path, digest: str) -> Artifact:
    """A jar Maven built: ``group:artifact`` and version from the ``pom.properties`` it puts in
    every jar (a jar without one says nothing of what it is a build of)."""
    with zipfile.ZipFile(path) as z:
        name = next(n for n in z.namelist() if n.startswith("META-INF/maven/") and n.endswith("/pom.properties"))
        props = dict(line.split("=", 1) for line in z.read(name).decode().splitlines()
                     if "=" in line and not line.startswith("#"))
    return Artifact(path, "maven", f"{props.get('groupId', '')}:{props.get('artifactId', '')}",
                    props.get("version", ""), digest)


def read_artifact(path: Path) -> Artifact:
    """The artifact at ``path``; a file that is none of the kinds we install is an error naming it."""
    if path.is_dir() and (path / "go.mod").is_file():
        return _go_module(path)
    if not path.is_file():
        raise UserError(f"{path}: no such file; pass a wheel (.whl), an sdist (.tar.gz), an npm tarball (.tgz), "
                        f"a Go module's directory, a crate (.crate) or a jar (.jar); {KINDS}")
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
        if path.name.endswith(".crate"):
            return _crate(path, digest)
        if path.name.endswith(".jar"):
            return _jar(path, digest)
    except (StopIteration, KeyError, OSError, ValueError, zipfile.BadZipFile, tarfile.TarError,
            tomllib.TOMLDecodeError) as err:
        raise UserError(f"{path}: not a readable package ({type(err).__name__}: {err}); pass one as built by its "
                        f"tools; {KINDS}") from None
    raise UserError(f"{path}: not a wheel (.whl), an sdist (.tar.gz), an npm tarball (.tgz), a crate (.crate) or a "
                    f"jar (.jar); {KINDS}")
