"""A fresh, private place for one probe: temporary HOME with every XDG dir and TMPDIR
inside it, and an environment built from an allowlist (never a copy of os.environ)."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from matrix.execute.proc import MARKER_VAR, new_marker

__all__ = ["Sandbox", "install_env", "is_secret_name", "sandbox"]

# Harmless, locale/TLS-only variables a probe may see. Nothing that can carry a credential.
PROBE_PASS = ("LANG", "LC_ALL", "LC_CTYPE", "TZ", "SSL_CERT_FILE", "SSL_CERT_DIR",
              "NODE_EXTRA_CA_CERTS")
# Installers also need the package clients' configuration and proxies (their own config,
# the "configured index"); names that look like credentials are still dropped.
INSTALL_PASS_PREFIXES = ("PIP_", "UV_", "NPM_CONFIG_", "npm_config_", "GOPROXY", "GOFLAGS",
                         "GONOSUMDB", "GOPRIVATE", "GOSUMDB", "GOPATH", "GOMODCACHE")
INSTALL_PASS = (*PROBE_PASS, "HOME", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy",
                "https_proxy", "no_proxy", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE")
SYSTEM_PATH = ("/usr/local/bin", "/usr/bin", "/bin")

_SECRET = re.compile(r"(TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|_KEY$|^AWS_|AUTH)", re.I)


def is_secret_name(name: str) -> bool:
    return bool(_SECRET.search(name))


def _path(dirs: Sequence[Path]) -> str:
    return os.pathsep.join([*(str(d) for d in dirs), *SYSTEM_PATH])


@dataclass(frozen=True)
class Sandbox:
    root: Path
    home: Path
    env: Mapping[str, str]
    marker: str


@contextmanager
def sandbox(
    parent: Path,
    path_dirs: Sequence[Path] = (),
    extra: Mapping[str, str] | None = None,
) -> Iterator[Sandbox]:
    parent.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix="cell-", dir=parent))
    home = root / "home"
    dirs = {
        "XDG_CONFIG_HOME": home / ".config",
        "XDG_CACHE_HOME": home / ".cache",
        "XDG_DATA_HOME": home / ".local" / "share",
        "XDG_STATE_HOME": home / ".local" / "state",
        "XDG_RUNTIME_DIR": root / "run",
        "TMPDIR": root / "tmp",
    }
    for d in [home, *dirs.values()]:
        d.mkdir(parents=True, exist_ok=True)
    (root / "run").chmod(0o700)
    marker = new_marker()
    env = {k: os.environ[k] for k in PROBE_PASS if k in os.environ}
    env.update({k: str(v) for k, v in dirs.items()})
    env.update(
        HOME=str(home),
        USERPROFILE=str(home),
        PATH=_path(path_dirs),
        TEMP=str(dirs["TMPDIR"]),
        TMP=str(dirs["TMPDIR"]),
        NO_COLOR="1",
        PYTHONUNBUFFERED="1",
        PYTHONDONTWRITEBYTECODE="1",
        # Stop the CLI's self-update and telemetry from trying a network we do not have.
        COPILOT_AUTO_UPDATE="false",
        DO_NOT_TRACK="1",
    )
    env.setdefault("LANG", "C.UTF-8")
    env[MARKER_VAR] = marker
    if extra:
        env.update(extra)
    try:
        yield Sandbox(root=root, home=home, env=env, marker=marker)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def install_env(path_dirs: Sequence[Path] = (), extra: Mapping[str, str] | None = None,
                passing: tuple[str, ...] = ()) -> dict[str, str]:
    """Environment for our installers (uv, npm): their configuration passes, credentials
    in plain variables do not (postinstall scripts are third-party code too). ``passing``: the
    prefixes of another installer's own settings (a family's build tool)."""
    prefixes = (*INSTALL_PASS_PREFIXES, *passing)
    env = {k: v for k, v in os.environ.items()
           if (k in INSTALL_PASS or k.startswith(prefixes)) and not is_secret_name(k)}
    env["PATH"] = _path(path_dirs)
    env.setdefault("HOME", str(Path.home()))
    if extra:
        env.update(extra)
    return env
