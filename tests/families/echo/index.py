"""A package index on a local port, serving wheels written here: the test family's SDK and
CLI releases and its plugin are installed by uv from it as real packages, and listed by the
harness through the same simple API (PEP 691) it asks of any Python index."""

from __future__ import annotations

import base64
import hashlib
import http.server
import json
import threading
import zipfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

JSON = "application/vnd.pypi.simple.v1+json"


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def write_wheel(out: Path, name: str, version: str, files: Mapping[str, str],
                entry_points: Mapping[str, Mapping[str, str]] | None = None) -> Path:
    """A pure-Python wheel of ``files`` (path in the wheel -> text), as any build backend writes one."""
    dist = f"{name.replace('-', '_')}-{version}"
    content = {path: text.encode() for path, text in files.items()}
    content[f"{dist}.dist-info/METADATA"] = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode()
    content[f"{dist}.dist-info/WHEEL"] = (b"Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\n"
                                          b"Tag: py3-none-any\n")
    if entry_points:
        content[f"{dist}.dist-info/entry_points.txt"] = "".join(
            f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in items.items()) + "\n"
            for group, items in entry_points.items()).encode()
    record = f"{dist}.dist-info/RECORD"
    content[record] = "".join(f"{p},{_record_hash(d)},{len(d)}\n" for p, d in content.items()).encode() + \
        f"{record},,\n".encode()
    out.mkdir(parents=True, exist_ok=True)
    wheel = out / f"{dist}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        for path, data in content.items():
            z.writestr(path, data)
    return wheel


class _Handler(http.server.BaseHTTPRequestHandler):
    wheels: Path

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, body: bytes, kind: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_GET(self) -> None:
        parts = [p for p in self.path.split("?")[0].split("/") if p]
        if parts[:1] == ["files"] and len(parts) == 2 and (self.wheels / parts[1]).is_file():
            return self._send((self.wheels / parts[1]).read_bytes(), "application/octet-stream")
        if parts[:1] == ["simple"] and len(parts) == 2:
            name = parts[1].replace("_", "-").lower()
            mine = sorted(w for w in self.wheels.glob("*.whl") if w.name.split("-")[0].replace("_", "-") == name)
            if mine:
                files = [{"filename": w.name, "url": f"/files/{w.name}", "upload-time": "2026-01-01T00:00:00Z",
                          "hashes": {"sha256": hashlib.sha256(w.read_bytes()).hexdigest()}} for w in mine]
                if JSON in self.headers.get("Accept", ""):
                    body = {"meta": {"api-version": "1.1"}, "name": name, "files": files,
                            "versions": sorted({w.name.split("-")[1] for w in mine})}
                    return self._send(json.dumps(body).encode(), JSON)
                links = "".join(f'<a href="{f["url"]}#sha256={f["hashes"]["sha256"]}">{f["filename"]}</a>\n'
                                for f in files)
                return self._send(f"<html><body>{links}</body></html>".encode(), "text/html")
        self.send_error(404)

    do_HEAD = do_GET  # uv asks for a wheel's size first


@contextmanager
def serving(wheels: Path) -> Iterator[str]:
    """The index URL (``.../simple``) of ``wheels``, served until the block ends."""
    handler = type("Handler", (_Handler,), {"wheels": wheels})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/simple"
    finally:
        server.shutdown()
        server.server_close()
