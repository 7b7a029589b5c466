"""Our logic for the Java family: Maven's metadata and version order, Maven and Gradle range
syntax, a release the agent does not compile against, and how each probe reaches the agent
(fakes; real builds: the integration suite)."""

from __future__ import annotations

import os
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from matrix.ecosystems.base import Run
from matrix.errors import InfraError, UserError
from matrix.execute import proc
from matrix.execute.environment import make_env
from matrix.families.copilot import compiled
from matrix.families.copilot.cli import CliInstall, Runtime
from matrix.families.copilot.handshake import HandshakeCell
from matrix.families.copilot.java import ecosystem as maven
from matrix.families.copilot.java import environment as java_environment
from matrix.families.copilot.java.ecosystem import ECOSYSTEM, fetch_maven, maven_key, metadata_versions
from matrix.families.copilot.java.environment import JavaAgent
from matrix.families.registry import FAMILIES
from matrix.model import Cell

METADATA = """<?xml version="1.0" encoding="UTF-8"?>
<metadata><groupId>com.github</groupId><artifactId>copilot-sdk-java</artifactId>
<versioning><latest>1.0.0</latest><release>1.0.0</release>
<versions><version>0.3.0-java.2</version><version>1.0.0-beta.2</version><version>1.0.0</version></versions>
</versioning></metadata>"""


def test_maven_orders_a_release_after_its_betas_and_before_other_qualifiers() -> None:
    versions = ["1.0.10", "1.0.0", "0.3.0-java.2", "1.0.0-beta.2", "0.3.0", "1.0.0-rc.1", "1.0.9"]
    assert sorted(versions, key=maven_key) == ["0.3.0", "0.3.0-java.2", "1.0.0-beta.2", "1.0.0-rc.1", "1.0.0",
                                               "1.0.9", "1.0.10"]
    assert ECOSYSTEM.is_prerelease("1.0.0-beta.2") and not ECOSYSTEM.is_prerelease("0.3.0-java.2")


def test_releases_are_what_the_metadata_maven_fetched_lists(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert metadata_versions(METADATA) == ["0.3.0-java.2", "1.0.0-beta.2", "1.0.0"]
    folder = tmp_path / "com" / "github" / "copilot-sdk-java"
    monkeypatch.setattr(maven.proc, "run", lambda req: proc.Result(req.argv, 1, "", "", 0.1, 0.0, False))
    monkeypatch.setattr(maven, "mvn_command", lambda repo, *a: (("mvn", *a), {}))
    with pytest.raises(InfraError):  # Maven answered nothing it kept: ours, not the registry's
        fetch_maven("com.github:copilot-sdk-java", tmp_path)
    folder.mkdir(parents=True)
    stale = folder / "maven-metadata-central.xml"
    stale.write_text(METADATA)
    os.utime(stale, (time.time() - 60, time.time() - 60))
    with pytest.raises(InfraError, match="from an earlier call"):  # mvn exited 0, and said nothing new
        fetch_maven("com.github:copilot-sdk-java", tmp_path)

    def answers(req: proc.Request) -> proc.Result:
        assert "-U" in req.argv  # asked again even within Maven's update interval
        stale.write_text(METADATA)
        return proc.Result(req.argv, 0, "", "", 0.1, 0.0, False)

    monkeypatch.setattr(maven.proc, "run", answers)
    got = fetch_maven("com.github:copilot-sdk-java", tmp_path)
    assert [(r.version, r.prerelease) for r in got] == [("0.3.0-java.2", False), ("1.0.0-beta.2", True),
                                                        ("1.0.0", False)]
    said = "[ERROR] ... Could not find metadata com.github:nope/maven-metadata.xml in local"
    monkeypatch.setattr(maven.proc, "run", lambda req: proc.Result(req.argv, 1, said, "", 0.1, 0.0, False))
    with pytest.raises(UserError, match=r"no artifact 'com\.github:nope'"):
        fetch_maven("com.github:nope", tmp_path)


def test_pins_are_maven_and_gradle_ranges() -> None:
    pkg = "com.github:copilot-sdk-java"
    assert ECOSYSTEM.pin(pkg, [Run("1.0.0", "1.0.5")], []) == [
        "<version>[1.0.0,1.0.5]</version>", 'implementation("com.github:copilot-sdk-java:[1.0.0,1.0.5]")']
    assert ECOSYSTEM.pin(pkg, [Run("0.3.0", "0.3.0"), Run("1.0.2", "1.0.2")], [])[0] == "<version>[1.0.2]</version>"


def test_a_maven_coordinate_makes_a_directory_a_class_path_can_name(tmp_path: Path) -> None:
    env = make_env(JavaAgent, "com.github:copilot-sdk-java", "0.3.0-java.2", tmp_path)
    assert ":" not in str(env.location) and env.location.name == "com.github__copilot-sdk-java-0.3.0-java.2"


def test_the_family_is_registered_with_its_ecosystem() -> None:
    fam = FAMILIES["copilot-java"]
    assert (fam.sdk_ecosystem, fam.sdk_package, fam.pair_probe) == ("maven", "com.github:copilot-sdk-java",
                                                                    "handshake")


def test_a_candidate_jar_is_installed_into_a_local_repository_of_its_own_under_its_own_version(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from matrix.errors import UserError
    from matrix.families.copilot.java import environment as java_env
    from tests.answers.test_gate import jar
    calls: list[tuple[str, ...]] = []

    def mvn(repo: Path, *a: str) -> tuple[tuple[str, ...], dict[str, str]]:
        calls.append((str(repo), *a))
        return ("mvn", *a), {}

    def run(req: proc.Request) -> proc.Result:
        if "dependency:build-classpath" in req.argv:
            (req.cwd / "classpath.txt").write_text("/deps.jar")
        return proc.Result(req.argv, 0, "", "", 0.1, 0.0, False)

    monkeypatch.setattr(java_env, "mvn_command", mvn)
    monkeypatch.setattr(java_env.proc, "run", run)
    monkeypatch.setattr(java_env, "_tool", lambda name: name)
    env = JavaAgent(package="com.github:copilot-sdk-java", version="0.3.0-java.2+candidate.abcdef0123",
                    location=tmp_path / "envs" / "candidate", artifact=jar(tmp_path))
    env.location.mkdir(parents=True)
    env._install()
    assert calls[0][0] == str(env.location / "_m2") and calls[0][1] == "install:install-file"
    assert "<version>0.3.0-java.2</version>" in (env.location / "pom.xml").read_text()
    published = JavaAgent(package="com.github:copilot-sdk-java", version="0.3.0-java.2",
                          location=tmp_path / "envs" / "published")
    assert published.local_repo == tmp_path / "envs" / "_m2"
    no_pom = JavaAgent(package="com.github:copilot-sdk-java", version="x", location=tmp_path / "envs" / "bad",
                       artifact=jar(tmp_path / "envs", pom=False))
    no_pom.location.mkdir(parents=True)
    with pytest.raises(UserError, match=r"pom\.xml"):
        no_pom._install()


# -- the tolerance and session probes: what the Python side does around the agent -------------

def _built_agent(tmp_path: Path, errors: str | None = None) -> JavaAgent:
    agent = JavaAgent(package="com.github:copilot-sdk-java", version="0.3.0-java.2", location=tmp_path / "env")
    agent.location.mkdir()
    (agent.location / "classpath.txt").write_text("/m2/copilot-sdk-java.jar:/m2/jackson.jar\n")
    if errors is not None:
        (agent.location / "build-errors.txt").write_text(errors)
    return agent


def _cell(tmp_path: Path) -> HandshakeCell:
    return HandshakeCell("copilot-java", "0.3.0-java.2", "1.0.50", 60, 30, 5, tmp_path / "scratch")


def test_the_family_runs_the_three_probes_the_other_copilot_families_run() -> None:
    fam = FAMILIES["copilot-java"]
    assert set(fam.probes) == set(fam.phases) == {"handshake", "session", "tolerance"}


@pytest.mark.parametrize(("probe", "mutation", "expected"), [
    ("tolerance", "event.unknown-type", "tolerance"), ("session", "", "session"), ("handshake", "", "handshake")])
def test_run_hands_each_probe_to_its_own_measurement(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, probe: str,
                                                     mutation: str, expected: str) -> None:
    import matrix.families.copilot.java as java_family
    called: list[tuple[str, tuple[object, ...]]] = []
    for name in ("handshake", "session", "tolerance"):
        monkeypatch.setattr(java_family, f"run_java_{name}",
                            lambda *a, _n=name: called.append((_n, a)) or "row")  # type: ignore[func-returns-value]
    ctx = SimpleNamespace(results=tmp_path / "results", reaper=proc.Reaper())
    cli = CliInstall("1.0.50", tmp_path / "entry.js", None, "", {})
    cell = Cell("copilot-java", "0.3.0-java.2", "1.0.50", probe, mutation)
    got = java_family.family.run(cell, _cell(tmp_path), _built_agent(tmp_path), cli,
                                 Runtime("node20", tmp_path / "node"), ctx)  # type: ignore[arg-type]
    assert got == "row" and [name for name, _ in called] == [expected]
    if expected == "tolerance":
        assert called[0][1][1] == "event.unknown-type"  # the rule, as the cell names it


@pytest.mark.parametrize(("probe", "mutation"), [("handshake", ""), ("tolerance", "event.unknown-type"),
                                                 ("session", "")])
def test_a_release_the_agent_does_not_compile_against_is_crashed_for_every_probe(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, probe: str, mutation: str) -> None:
    from matrix.families.copilot.java import measure
    from matrix.model import Outcome

    def never(*_a: object, **_k: object) -> None:
        raise AssertionError("the agent was run though it never compiled")

    monkeypatch.setattr(compiled, "run_tolerance", never)
    monkeypatch.setattr(compiled, "run_session", never)
    agent = _built_agent(tmp_path, "Session.java:42: error: cannot find symbol SessionConfig.setOnEvent")
    cli = CliInstall("1.0.50", tmp_path / "entry.js", None, "", {})
    runtime = Runtime("node20", tmp_path / "node")
    cell, results = _cell(tmp_path), tmp_path / "results"
    if probe == "handshake":
        row = measure.run_java_handshake(cell, agent, cli, runtime)
    elif probe == "tolerance":
        row = measure.run_java_tolerance(cell, mutation, agent, cli, runtime, results)
    else:
        row = measure.run_java_session(cell, agent, cli, runtime, results)
    assert (row.probe, row.mutation) == (probe, mutation)
    assert row.outcome == Outcome.CRASHED.value and row.error_type == "CompileError"
    assert "cannot find symbol SessionConfig.setOnEvent" in (row.error_message or "")


def test_the_probes_run_the_compiled_agent_with_what_selects_them(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from matrix.families.copilot.java import measure
    seen: dict[str, tuple[object, ...]] = {}
    monkeypatch.setattr(compiled, "run_tolerance", lambda *a: seen.setdefault("tolerance", a) and "tolerance row")
    monkeypatch.setattr(compiled, "run_session", lambda *a: seen.setdefault("session", a) and "session row")
    monkeypatch.setattr(java_environment, "_tool", lambda name: f"/jdk/bin/{name}")
    agent = _built_agent(tmp_path)
    cli = CliInstall("1.0.50", tmp_path / "entry.js", None, "", {})
    runtime, results = Runtime("node20", tmp_path / "node"), tmp_path / "results"
    assert measure.run_java_tolerance(_cell(tmp_path), "event.unknown-type", agent, cli, runtime,
                                      results) == "tolerance row"
    assert measure.run_java_session(_cell(tmp_path), agent, cli, runtime, results) == "session row"
    t_agent, t_command, t_cfg, _, t_rule = seen["tolerance"][:5]
    s_agent, s_command, s_cfg = seen["session"][:3]
    assert t_agent is None and s_agent is None  # the command is the whole agent: no script to add
    for command in (t_command, s_command):
        argv = command.prefix  # type: ignore[attr-defined]
        assert argv[0] == "/jdk/bin/java" and argv[-1] == "Agent"
        assert f"{agent.classes}:/m2/copilot-sdk-java.jar:/m2/jackson.jar" in argv
    assert t_rule == "event.unknown-type" and "probe" not in t_cfg  # type: ignore[operator]
    assert s_cfg["probe"] == "session"  # type: ignore[index]


def test_the_agent_is_every_java_source_compiled_together_and_fingerprinted_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sources = tmp_path / "agent"
    sources.mkdir()
    for name in ("Agent.java", "Session.java", "Tolerance.java"):
        (sources / name).write_text(f"final class {name[:-5]} {{}}\n")
    monkeypatch.setattr(java_environment, "AGENT_DIR", sources)
    before = java_environment.agent_digest()
    (sources / "Session.java").write_text("final class Session { int changed; }\n")
    assert java_environment.agent_digest() != before  # a change to any source rebuilds the agent

    compiled: list[tuple[str, ...]] = []

    def run(req: proc.Request) -> proc.Result:
        if "dependency:build-classpath" in req.argv:
            (req.cwd / "classpath.txt").write_text("/deps.jar")
        if req.argv[0] == "javac":
            compiled.append(req.argv)
        return proc.Result(req.argv, 0, "", "", 0.1, 0.0, False)

    monkeypatch.setattr(java_environment, "mvn_command", lambda repo, *a: (("mvn", *a), {}))
    monkeypatch.setattr(java_environment.proc, "run", run)
    monkeypatch.setattr(java_environment, "_tool", lambda name: name)
    env = JavaAgent(package="com.github:copilot-sdk-java", version="0.3.0-java.2", location=tmp_path / "env")
    env.location.mkdir()
    env._install()
    assert compiled and compiled[0][-3:] == ("Agent.java", "Session.java", "Tolerance.java")
    assert {p.name for p in env.location.glob("*.java")} == {"Agent.java", "Session.java", "Tolerance.java"}


# The keys the harness's classifications read from an agent's report (tolerance_verdict.py,
# session/verdict.py, session/probe.py): the Java agent must print each of them.
_TOLERANCE_KEYS = ("ping_unknown_field", "status_unknown_field", "client_has_unknown_capability",
                   "client_has_unknown_value", "canary", "mutated", "events", "loop_errors", "type", "raw_type",
                   "id", "has_unknown_field", "has_unknown_value", "message", "role", "name")
_SESSION_KEYS = ("turns", "live", "history", "unknown", "tool_ran", "asked", "reply", "idle", "after_stop")
_STEPS = ("start", "ping", "get_status", "create_session", "get_history", "close_session", "stop", "turn:")


def test_the_agent_prints_every_key_and_step_the_classifications_read() -> None:
    agent = {p.name: p.read_text() for p in java_environment.agent_sources()}
    assert {"Agent.java", "Tolerance.java", "Session.java"} <= set(agent)
    for key in _TOLERANCE_KEYS:
        assert f'"{key}"' in agent["Tolerance.java"], key
    for key in _SESSION_KEYS:
        assert f'"{key}"' in agent["Session.java"] + agent["Agent.java"], key
    for name in _STEPS:
        assert f'"{name}"' in agent["Tolerance.java"] + agent["Session.java"], name
