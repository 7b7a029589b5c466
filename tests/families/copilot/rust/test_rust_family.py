"""Our logic for the Rust family: reading cargo's cached index entry, Cargo's requirement
syntax, and what a build failure is (fakes of cargo's output; the real builds are in the
integration suite)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from matrix.ecosystems.base import Run
from matrix.errors import InfraError, UninstallableError
from matrix.execute import proc
from matrix.families.copilot import compiled
from matrix.families.copilot import rust as rust_family
from matrix.families.copilot.cli import CliInstall, Runtime
from matrix.families.copilot.handshake import HandshakeCell
from matrix.families.copilot.rust import environment as rust_env
from matrix.families.copilot.rust.ecosystem import ECOSYSTEM, _index_path, fetch_crate, index_entries
from matrix.families.copilot.rust.environment import RUST_BUILD_ERRORS, RustAgent
from matrix.families.copilot.rust.measure import run_rust_handshake, run_rust_session, run_rust_tolerance
from matrix.families.registry import FAMILIES
from matrix.model import Cell, Outcome


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


NO_RUNTIME = (101, "error: failed to select a version for `github-copilot-sdk`.\n"
                   "package `agent` depends on `github-copilot-sdk` with feature `runtime` but "
                   "`github-copilot-sdk` does not have that feature.")
AGENT_FAILS = (101, "error[E0432]: unresolved import `github_copilot_sdk::Client`\n"
                    "error: could not compile `agent-9_9_9` (bin \"agent-9_9_9\") due to 1 previous error")
NO_PREPARE = (101, "error[E0599]: no method named `prepare_session` found for reference `&Client`\n"
                   "error: could not compile `agent-9_9_9` (bin \"agent-9_9_9\") due to 1 previous error")


def built(a: RustAgent) -> tuple[int, str]:
    """cargo succeeding: the binary where cargo leaves it."""
    out = a.target_dir / "debug" / "agent-9_9_9"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("")
    return (0, "")


def test_a_release_without_the_runtime_feature_is_built_without_it(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    a = agent(tmp_path)
    a.location.mkdir()
    # runtime: no such feature; no features with every probe (prepared or not), then the handshake
    # alone: the agent fails.
    calls = fake_cargo(monkeypatch, NO_RUNTIME, AGENT_FAILS, AGENT_FAILS, AGENT_FAILS)
    a._install()
    assert len([c for c in calls if "build" in c]) == 4
    errors = a.build_errors or ""
    assert "the agent does not compile against this release" in errors and "E0432" in errors
    assert errors.rstrip().endswith("(its client API differs)")
    manifest = (a.location / "Cargo.toml").read_text()
    assert '"runtime"' not in manifest and "default = []" in manifest


def test_a_release_before_prepare_session_is_built_without_the_agents_prepared_variant(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a = agent(tmp_path)
    a.location.mkdir()
    calls = fake_cargo(monkeypatch, NO_PREPARE, built(a), (101, "error: metadata not available offline"),
                       (101, "error: no registry here"))
    a._install()
    assert [c[1] for c in calls] == ["build", "build", "metadata", "metadata"]
    assert a.sdk_dir == "" and a.healthy()  # asked offline, then of the registry: unknown, not asked again
    assert a.build_errors is None and a.binary.exists() and a.probes_build_errors is None
    manifest = (a.location / "Cargo.toml").read_text()
    assert 'features = ["runtime"]' in manifest and 'default = ["probes"]' in manifest
    assert (a.location / "variant.txt").read_text() == "runtime"


NO_SESSION_API = (101, "error[E0599]: no method named `with_handler` found for struct `github_copilot_sdk::Tool`\n"
                       "error: could not compile `agent-9_9_9` (bin \"agent-9_9_9\") due to 16 previous errors")


def test_a_release_whose_session_api_differs_is_built_for_the_handshake_and_its_other_probes_say_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a = agent(tmp_path)
    a.location.mkdir()
    calls = fake_cargo(monkeypatch, NO_SESSION_API, NO_SESSION_API, built(a), (101, "error: offline"),
                       (101, "error: none"))
    a._install()
    builds = [c for c in calls if "build" in c]
    assert len(builds) == 3 and a.build_errors is None and a.binary.exists()
    assert "default = []" in (a.location / "Cargo.toml").read_text()  # the handshake alone
    assert "with_handler" in (a.probes_build_errors or "")
    monkeypatch.setattr(rust_env.proc, "run", lambda req: pytest.fail("no CLI is started for a probe not built"))
    cell = HandshakeCell("copilot-rust", "9.9.9", "1.0.102", 60, 30, 5, tmp_path / "scratch")
    cli, runtime = cli_and_runtime(tmp_path)
    for row in (run_rust_session(cell, a, cli, runtime, tmp_path / "r"),
                run_rust_tolerance(cell, "event.unknown-type", a, cli, runtime, tmp_path / "r")):
        assert (row.outcome, row.error_type) == (Outcome.NOT_APPLICABLE.value, "AgentApiDiffers")
        assert "session code does not compile" in (row.error_message or "")
        assert "with_handler" in (row.error_message or "")


def test_the_agent_asks_for_prepare_session_first_and_the_crates_own_dependencies(tmp_path: Path) -> None:
    manifest = agent(tmp_path)._manifest(("runtime",), ("prepared",))
    assert 'default = ["prepared"]\nprobes = []\nprepared = []' in manifest
    for dep in ('async-trait = "0.1"', 'tracing = "0.1"', 'serde = "1"'):
        assert dep in manifest
    assert "default = []" in agent(tmp_path)._manifest(("runtime",))


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


def cli_and_runtime(tmp_path: Path) -> tuple[CliInstall, Runtime]:
    return CliInstall("1.0.102", tmp_path / "entry.js", None, "", {}), Runtime("node20", tmp_path / "node")


@pytest.mark.parametrize(("probe", "mutation"), [("tolerance", "event.unknown-type"), ("session", "")])
def test_a_build_error_is_the_verdict_of_every_probe(tmp_path: Path, probe: str, mutation: str) -> None:
    a = agent(tmp_path)
    a.location.mkdir()
    (a.location / RUST_BUILD_ERRORS).write_text("error[E0599]: no method named `prepare_session`\n"
                                                "the agent does not compile against this release")
    cell = HandshakeCell("copilot-rust", "9.9.9", "1.0.102", 60, 30, 5, tmp_path / "scratch")
    cli, runtime = cli_and_runtime(tmp_path)
    if probe == "tolerance":
        row = run_rust_tolerance(cell, mutation, a, cli, runtime, tmp_path / "results")
    else:
        row = run_rust_session(cell, a, cli, runtime, tmp_path / "results")
    assert (row.probe, row.mutation, row.outcome, row.error_type) == (probe, mutation, Outcome.CRASHED.value,
                                                                      "CompileError")
    assert "E0599" in (row.error_message or "")
    (a.location / RUST_BUILD_ERRORS).write_text(f"error: unlinked crate\n{rust_env.NO_LIBRARY}")
    row = run_rust_session(cell, a, cli, runtime, tmp_path / "results")
    assert (row.probe, row.outcome, row.error_type) == ("session", Outcome.NOT_APPLICABLE.value, "NoLibrary")


def test_a_built_agent_runs_the_shared_probes_with_its_crates_directory(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    a = agent(tmp_path)
    a.location.mkdir()
    (a.location / "sdk-dir.txt").write_text("/registry/github-copilot-sdk-9.9.9\n")
    seen: dict[str, tuple[Any, ...]] = {}

    def fake(name: str) -> Any:
        def run(*args: Any) -> str:
            seen[name] = args
            return name
        return run

    monkeypatch.setattr(compiled, "run_tolerance", fake("tolerance"))
    monkeypatch.setattr(compiled, "run_session", fake("session"))
    cell = HandshakeCell("copilot-rust", "9.9.9", "1.0.102", 60, 30, 5, tmp_path / "scratch")
    cli, runtime = cli_and_runtime(tmp_path)
    assert run_rust_tolerance(cell, "history.extra-field", a, cli, runtime, tmp_path / "r") == "tolerance"  # type: ignore[comparison-overlap]
    agent_arg, command, cfg, _cell, rule = seen["tolerance"][:5]
    assert agent_arg is None and command.prefix == (str(a.binary),) and rule == "history.extra-field"
    assert cfg == {"sdk_dir": "/registry/github-copilot-sdk-9.9.9"}
    assert run_rust_session(cell, a, cli, runtime, tmp_path / "r") == "session"  # type: ignore[comparison-overlap]
    assert seen["session"][2] == {"sdk_dir": "/registry/github-copilot-sdk-9.9.9", "probe": "session"}


def test_the_family_dispatches_each_probe_to_its_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fam = FAMILIES["copilot-rust"]
    assert fam.probes == ("handshake", "session", "tolerance") and fam.phases == fam.probes
    calls: list[tuple[str, str]] = []
    for name in ("run_rust_handshake", "run_rust_session", "run_rust_tolerance"):
        monkeypatch.setattr(rust_family, name, lambda *args, _n=name: calls.append((_n, str(args[1]))) or _n)
    ctx = SimpleNamespace(results=tmp_path / "r", reaper=None)
    cell = HandshakeCell("copilot-rust", "9.9.9", "1.0.102", 60, 30, 5, tmp_path / "scratch")
    cli, runtime = cli_and_runtime(tmp_path)
    for probe, mutation in (("tolerance", "event.control"), ("session", ""), ("handshake", "")):
        fam.run(Cell("copilot-rust", "9.9.9", "1.0.102", probe, mutation), cell, agent(tmp_path), cli, runtime,
                ctx)  # type: ignore[arg-type]
    assert [c[0] for c in calls] == ["run_rust_tolerance", "run_rust_session", "run_rust_handshake"]
    assert calls[0][1] == "event.control"
