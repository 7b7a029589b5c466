"""Our logic for the Rust family: reading cargo's cached index entry, Cargo's requirement
syntax, and what a build failure is (fakes of cargo's output; the real builds are in the
integration suite)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from matrix.ecosystems.base import Run
from matrix.errors import InfraError, UninstallableError
from matrix.execute import proc
from matrix.families.copilot.cli import CliInstall, Runtime
from matrix.families.copilot.handshake import HandshakeCell
from matrix.families.copilot.rust import environment as rust_env
from matrix.families.copilot.rust.ecosystem import ECOSYSTEM, _index_path, fetch_crate, index_entries
from matrix.families.copilot.rust.environment import RUST_BUILD_ERRORS, RustAgent
from matrix.families.copilot.rust.measure import run_rust_handshake
from matrix.families.registry import FAMILIES
from matrix.model import Outcome


def entry(*versions: tuple[str, bool]) -> bytes:
    """An index entry as cargo caches it: a header, then each version and its JSON line."""
    parts = [b"\x03\x02", b"etag", b""]
    for v, yanked in versions:
        parts += [v.encode(), json.dumps({"name": "github-copilot-sdk", "vers": v, "yanked": yanked}).encode()]
    return b"\0".join(parts) + b"\0"


def test_the_cached_index_entry_gives_every_version_and_which_are_yanked() -> None:
    got = index_entries(entry(("0.1.0", False), ("1.0.0-beta.4", False), ("1.0.1", True)))
    assert [(e["vers"], e["yanked"]) for e in got] == [("0.1.0", False), ("1.0.0-beta.4", False), ("1.0.1", True)]
    assert index_entries(b"\x03\x02\0garbage\0{not json\0") == []


def test_the_index_path_follows_cargos_layout() -> None:
    assert _index_path("github-copilot-sdk") == "gi/th/github-copilot-sdk"
    assert (_index_path("ab"), _index_path("abc"), _index_path("Serde")) == ("2/ab", "3/a/abc", "se/rd/serde")


def test_releases_are_read_where_cargo_left_the_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "cargo"
    cached = home / "registry" / "index" / "some-registry-0123" / ".cache" / "gi" / "th" / "github-copilot-sdk"
    cached.parent.mkdir(parents=True)
    cached.write_bytes(entry(("1.0.28", False), ("1.0.29-preview.4", False), ("1.0.2", True)))
    monkeypatch.setattr(proc, "run", lambda req: proc.Result(req.argv, 0, "", "", 0.1, 0.0, False))
    releases = {r.version: r for r in fetch_crate("github-copilot-sdk", home)}
    assert releases["1.0.29-preview.4"].prerelease and not releases["1.0.28"].prerelease
    assert releases["1.0.2"].yanked
    monkeypatch.setattr(proc, "run", lambda req: proc.Result(req.argv, 101, "", "error: timed out", 0.1, 0.0, False))
    with pytest.raises(InfraError):
        fetch_crate("github-copilot-sdk", home)


def test_pins_are_cargo_requirements_with_the_newest_span_first() -> None:
    assert ECOSYSTEM.pin("github-copilot-sdk", [Run("1.0.9", "1.0.9")], []) == ['github-copilot-sdk = "=1.0.9"']
    assert ECOSYSTEM.pin("github-copilot-sdk", [Run("1.0.0", "1.0.5"), Run("1.0.9", "1.0.28")], ["1.0.7"]) == [
        'github-copilot-sdk = ">=1.0.9, <=1.0.28"', '# also works: ">=1.0.0, <=1.0.5"']
    assert ECOSYSTEM.install("github-copilot-sdk", "1.0.28") == "cargo add github-copilot-sdk@=1.0.28"


def test_the_family_is_registered_with_its_ecosystem() -> None:
    fam = FAMILIES["copilot-rust"]
    assert (fam.sdk_ecosystem, fam.sdk_package, fam.cli_package, fam.pair_probe) == (
        "crates", "github-copilot-sdk", "@github/copilot", "handshake")


def agent(tmp_path: Path) -> RustAgent:
    return RustAgent(package="github-copilot-sdk", version="9.9.9", location=tmp_path / "env")


def fake_cargo(monkeypatch: pytest.MonkeyPatch, *answers: tuple[int, str]) -> list[tuple[str, ...]]:
    """cargo answering each build in turn."""
    calls: list[tuple[str, ...]] = []
    queue = list(answers)

    def run(req: proc.Request) -> proc.Result:
        calls.append(tuple(req.argv))
        code, err = queue.pop(0)
        return proc.Result(req.argv, code, "", err, 1.0, 0.0, False)

    monkeypatch.setattr(rust_env.proc, "run", run)
    monkeypatch.setattr(rust_env, "cargo_command", lambda *a: (("cargo", *a), {"PATH": "/usr/bin"}))
    return calls


def test_a_release_without_the_runtime_feature_is_built_without_it(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    a = agent(tmp_path)
    a.location.mkdir()
    calls = fake_cargo(monkeypatch, (101, "error: failed to select a version for `github-copilot-sdk`.\n"
                                         "package `agent` depends on `github-copilot-sdk` with feature `runtime` but "
                                         "`github-copilot-sdk` does not have that feature."),
                       (101, "error[E0432]: unresolved import `github_copilot_sdk::Client`\n"
                             "error: could not compile `agent-9_9_9` (bin \"agent-9_9_9\") due to 1 previous error"))
    a._install()
    assert len([c for c in calls if "build" in c]) == 2
    errors = a.build_errors or ""
    assert "the agent does not compile against this release" in errors and "E0432" in errors
    assert '"runtime"' not in (a.location / "Cargo.toml").read_text()


def test_a_candidate_crate_is_unpacked_and_built_in_place_of_the_registry_version(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.answers.test_gate import crate
    a = RustAgent(package="github-copilot-sdk", version="1.0.28+candidate.abcdef0123", location=tmp_path / "env",
                  artifact=crate(tmp_path))
    a.location.mkdir()
    fake_cargo(monkeypatch, (101, "error: could not compile `github-copilot-sdk` (lib) due to 1 previous error"))
    a._install()
    manifest = (a.location / "Cargo.toml").read_text()
    unpacked = a.location / "crate" / "github-copilot-sdk-1.0.28"
    assert f'path = "{unpacked}"' in manifest and 'version = "=' not in manifest
    assert (unpacked / "Cargo.toml").is_file()


def test_the_crate_itself_failing_to_compile_is_said(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a = agent(tmp_path)
    a.location.mkdir()
    fake_cargo(monkeypatch, (101, "error[E0599]: no method named `x`\n"
                                  "error: could not compile `github-copilot-sdk` (lib) due to 1 previous error"))
    a._install()
    assert "the crate github-copilot-sdk itself does not compile here" in (a.build_errors or "")


def test_a_version_the_registry_does_not_have_is_uninstallable_and_a_network_failure_is_ours(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a = agent(tmp_path)
    a.location.mkdir()
    fake_cargo(monkeypatch, (101, "error: failed to select a version for the requirement `github-copilot-sdk = "
                                  "\"=9.9.9\"`\ncandidate versions found which didn't match: 1.0.28"))
    with pytest.raises(UninstallableError):
        a._install()
    fake_cargo(monkeypatch, (101, "error: failed to download from registry: [28] Timeout was reached"))
    with pytest.raises(InfraError):
        a._install()
    assert a.build_errors is None


def test_a_build_error_is_the_release_verdict(tmp_path: Path) -> None:
    a = agent(tmp_path)
    a.location.mkdir()
    (a.location / RUST_BUILD_ERRORS).write_text("the crate github-copilot-sdk itself does not compile here")
    cell = HandshakeCell("copilot-rust", "9.9.9", "1.0.102", 60, 30, 5, tmp_path / "scratch")
    row = run_rust_handshake(cell, a, CliInstall("1.0.102", tmp_path / "entry.js", None, "", {}),
                             Runtime("node20", tmp_path / "node"))
    assert row.outcome == Outcome.CRASHED.value and row.error_type == "CompileError"
    assert "itself does not compile" in (row.error_message or "")


def test_a_release_with_no_library_is_not_applicable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a = agent(tmp_path)
    a.location.mkdir()
    fake_cargo(monkeypatch, (101, "src/main.rs:20:5: error[E0432]: unresolved import `github_copilot_sdk`: use of "
                                  "unresolved module or unlinked crate `github_copilot_sdk`\n"
                                  "error: could not compile `agent-9_9_9` due to 1 previous error"))
    a._install()
    cell = HandshakeCell("copilot-rust", "9.9.9", "1.0.102", 60, 30, 5, tmp_path / "scratch")
    row = run_rust_handshake(cell, a, CliInstall("1.0.102", tmp_path / "entry.js", None, "", {}),
                             Runtime("node20", tmp_path / "node"))
    assert row.outcome == Outcome.NOT_APPLICABLE.value and row.error_type == "NoLibrary"
