"""Candidate builds made from published releases, as a release manager's CI would have them:
the same wheel or npm tarball with one file changed (hashes in a wheel's RECORD kept right)."""

from __future__ import annotations

import base64
import hashlib
import io
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path


def download_wheel(package: str, version: str, dest: Path) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "--only-binary", ":all:",
                    f"{package}=={version}", "-d", str(dest)], check=True, capture_output=True, timeout=600)
    return next(dest.glob("*.whl"))


def edit_wheel(src: Path, dest: Path, edits: dict[str, tuple[str, str]]) -> Path:
    """``src`` with ``edits`` (member -> (old text, new text)) applied and its RECORD rewritten."""
    out = io.BytesIO()
    with zipfile.ZipFile(src) as z, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as w:
        files = {n: z.read(n) for n in z.namelist()}
        for name, (old, new) in edits.items():
            text = files[name].decode()
            assert old in text, f"{name}: {old!r} not found"
            files[name] = text.replace(old, new).encode()
        record = next(n for n in files if n.endswith(".dist-info/RECORD"))
        lines = []
        for name, blob in files.items():
            if name == record:
                continue
            digest = base64.urlsafe_b64encode(hashlib.sha256(blob).digest()).rstrip(b"=").decode()
            lines.append(f"{name},sha256={digest},{len(blob)}")
        files[record] = ("\n".join([*lines, f"{record},,"]) + "\n").encode()
        for name, blob in files.items():
            w.writestr(name, blob)
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(out.getvalue())
    return dest


def npm_pack(package: str, version: str, dest: Path) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    res = subprocess.run(["npm", "pack", f"{package}@{version}", "--silent", "--pack-destination", str(dest)],
                         check=True, capture_output=True, text=True, timeout=600)
    return dest / res.stdout.strip().splitlines()[-1]


def edit_tarball(src: Path, dest: Path, edits: dict[str, tuple[str, str]]) -> Path:
    """An npm tarball with ``edits`` (member -> (old text, new text)) applied."""
    out = io.BytesIO()
    with tarfile.open(src) as t, tarfile.open(fileobj=out, mode="w:gz") as w:
        for m in t.getmembers():
            f = t.extractfile(m) if m.isfile() else None
            blob = f.read() if f else b""
            if m.name in edits:
                old, new = edits[m.name]
                text = blob.decode()
                assert old in text, f"{m.name}: {old!r} not found"
                blob = text.replace(old, new).encode()
                m.size = len(blob)
            w.addfile(m, io.BytesIO(blob) if m.isfile() else None)
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(out.getvalue())
    return dest
