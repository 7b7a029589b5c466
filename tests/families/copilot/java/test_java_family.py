"""Our logic for the Java family: Maven's metadata and version order, Maven and Gradle range
syntax, and a release the agent does not compile against (fakes; real builds: the
integration suite)."""

from __future__ import annotations

from pathlib import Path

import pytest

from matrix.ecosystems.base import Run
from matrix.errors import InfraError
from matrix.execute import proc
from matrix.execute.environment import make_env
from matrix.families.copilot.java import ecosystem as maven
from matrix.families.copilot.java.ecosystem import ECOSYSTEM, fetch_maven, maven_key, metadata_versions
from matrix.families.copilot.java.environment import JavaAgent
from matrix.families.registry import FAMILIES

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
    (folder / "maven-metadata-central.xml").write_text(METADATA)
    got = fetch_maven("com.github:copilot-sdk-java", tmp_path)
    assert [(r.version, r.prerelease) for r in got] == [("0.3.0-java.2", False), ("1.0.0-beta.2", True),
                                                        ("1.0.0", False)]


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
