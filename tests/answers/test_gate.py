"""The release gate's own logic, on rows and files of our own: artifacts, fleet files, ignored
pairs, how a build differs from the published release, and the CI formats."""

from __future__ import annotations

import io
import json
import tarfile
import zipfile
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from matrix.answers.gate import differences, ignoring, load_fleet, to_junit, to_markdown
from matrix.answers.ship import can_i_ship
from matrix.ecosystems.artifacts import read_artifact
from matrix.errors import UserError
from matrix.pipeline.candidates import candidate
from matrix.store.results import frame_of
from tests.conftest import make_row

LABEL = "1.0.28+candidate.abcdef0123"


def wheel(tmp_path: Path, name: str = "github_copilot_sdk", version: str = "1.0.28") -> Path:
    path = tmp_path / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(f"{name}-{version}.dist-info/METADATA", f"Metadata-Version: 2.1\nName: {name.replace('_', '-')}\n"
                                                            f"Version: {version}\n")
    return path


def npm_tarball(tmp_path: Path, name: str = "@github/copilot-sdk", version: str = "1.0.15") -> Path:
    path = tmp_path / "sdk.tgz"
    blob = json.dumps({"name": name, "version": version}).encode()
    with tarfile.open(path, "w:gz") as t:
        info = tarfile.TarInfo("package/package.json")
        info.size = len(blob)
        t.addfile(info, io.BytesIO(blob))
    return path


def test_an_artifact_says_what_it_is_and_gets_a_label_of_its_own(tmp_path: Path) -> None:
    a = read_artifact(wheel(tmp_path))
    assert (a.ecosystem, a.package, a.version) == ("pypi", "github-copilot-sdk", "1.0.28")
    assert a.label.startswith("1.0.28+candidate.") and len(a.label) == len("1.0.28+candidate.") + 10
    n = read_artifact(npm_tarball(tmp_path))
    assert (n.ecosystem, n.package, n.version) == ("npm", "@github/copilot-sdk", "1.0.15")
    assert candidate("copilot-node", "sdk", npm_tarball(tmp_path)).label == n.label


def test_a_go_module_directory_is_a_candidate_whose_label_follows_its_files(tmp_path: Path) -> None:
    module = tmp_path / "go"
    module.mkdir()
    (module / "go.mod").write_text("module github.com/github/copilot-sdk/go\n\ngo 1.24\n")
    (module / "client.go").write_text("package copilot\n")
    first = candidate("copilot-go", "sdk", module)
    assert (first.artifact.ecosystem, first.artifact.package) == ("go", "github.com/github/copilot-sdk/go")
    assert first.label.startswith("0.0.0+candidate.")
    (module / "client.go").write_text("package copilot // changed\n")
    assert candidate("copilot-go", "sdk", module).label != first.label


def crate(tmp_path: Path, name: str = "github-copilot-sdk", version: str = "1.0.28") -> Path:
    """What `cargo package` makes: a gzipped tar of ``<name>-<version>/`` with its manifest."""
    path = tmp_path / f"{name}-{version}.crate"
    blob = f'[package]\nedition = "2021"\nname = "{name}"\nversion = "{version}"\n'.encode()
    with tarfile.open(path, "w:gz") as t:
        info = tarfile.TarInfo(f"{name}-{version}/Cargo.toml")
        info.size = len(blob)
        t.addfile(info, io.BytesIO(blob))
    return path


def jar(tmp_path: Path, group: str = "com.github", artifact: str = "copilot-sdk-java",
        version: str = "0.3.0-java.2", pom: bool = True) -> Path:
    """What `mvn package` makes: a jar carrying its POM and pom.properties."""
    path = tmp_path / f"{artifact}-{version}.jar"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(f"META-INF/maven/{group}/{artifact}/pom.properties",
                   f"#Created by Apache Maven\nartifactId={artifact}\ngroupId={group}\nversion={version}\n")
        if pom:
            z.writestr(f"META-INF/maven/{group}/{artifact}/pom.xml", "<project/>")
        z.writestr("com/github/copilot/CopilotClient.class", b"\xca\xfe")
    return path


def test_a_crate_and_a_jar_are_candidates_of_the_rust_and_java_families(tmp_path: Path) -> None:
    c = candidate("copilot-rust", "sdk", crate(tmp_path))
    assert (c.artifact.ecosystem, c.artifact.package, c.artifact.version) == ("crates", "github-copilot-sdk", "1.0.28")
    assert c.label.startswith("1.0.28+candidate.")
    j = candidate("copilot-java", "sdk", jar(tmp_path))
    assert (j.artifact.ecosystem, j.artifact.package, j.artifact.version) == (
        "maven", "com.github:copilot-sdk-java", "0.3.0-java.2")
    with pytest.raises(UserError, match=r"github-copilot-sdk 1\.0\.28 \(crates\), not of copilot-java's sdk"):
        candidate("copilot-java", "sdk", crate(tmp_path))
    bare = tmp_path / "bare.jar"
    with zipfile.ZipFile(bare, "w") as z:
        z.writestr("A.class", b"\xca\xfe")
    with pytest.raises(UserError, match="not a readable package"):
        read_artifact(bare)


def test_an_artifact_of_another_package_is_refused_naming_both(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"github-copilot-sdk 1\.0\.28 \(pypi\), not of copilot-node's sdk"):
        candidate("copilot-node", "sdk", wheel(tmp_path))
    bad = tmp_path / "x.whl"
    bad.write_bytes(b"not a zip")
    with pytest.raises(UserError, match="not a readable package"):
        read_artifact(bad)


def test_a_fleet_file_with_a_mistake_names_it(tmp_path: Path) -> None:
    path = tmp_path / "fleet.toml"
    path.write_text('other = [">=1.0.60"]\n[[ignore]]\nother = "1.0.61"\nreason = "withdrawn"\n')
    fleet = load_fleet(path)
    assert fleet.other == [">=1.0.60"] and fleet.ignore[0].reason == "withdrawn"
    path.write_text('others = ["1.0.60"]\n')
    with pytest.raises(UserError, match=r"--fleet .*fleet\.toml: other: Field required"):
        load_fleet(path)
    path.write_text("other = [\n")
    with pytest.raises(UserError, match="not TOML"):
        load_fleet(path)


@pytest.fixture
def frame():  # type: ignore[no-untyped-def]
    rows = [make_row("1.0.27", "1.0.90", "compatible"), make_row("1.0.27", "1.0.92", "compatible"),
            make_row(LABEL, "1.0.90", "compatible"),
            make_row(LABEL, "1.0.92", "refused", error_message="SDK supports versions 4-4, but server reports 3")]
    return frame_of(rows)


def test_a_fleet_gate_is_no_naming_the_pair_and_ignores_what_the_fleet_says(frame, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    decision = can_i_ship(frame, "copilot-python", sdk=LABEL, against="the fleet", targets=["1.0.90", "1.0.92",
                                                                                             "1.0.99"])
    assert decision.answer == "no"
    assert [(c.cli_version, c.verdict) for c in decision.cells] == [("1.0.90", "yes"), ("1.0.92", "no"),
                                                                    ("1.0.99", "unknown")]
    path = tmp_path / "fleet.toml"
    path.write_text('other = ["1.0.90"]\n[[ignore]]\nother = "1.0.92"\nreason = "no user runs it"\n'
                    '[[ignore]]\nother = "1.0.99"\nreason = "yanked"\n')
    kept = ignoring(decision, load_fleet(path))
    assert kept.answer == "yes" and kept.cells[1].reason == "ignored: no user runs it"


def test_the_build_is_compared_with_the_newest_published_release(frame) -> None:  # type: ignore[no-untyped-def]
    diffs = differences(frame, "copilot-python", "sdk", LABEL, "1.0.27", ["1.0.90", "1.0.92"])
    assert [(d.other, d.kind, d.was, d.now) for d in diffs] == [("1.0.92", "regression", "compatible", "refused")]
    assert diffs[0].now_error == "SDK supports versions 4-4, but server reports 3"


def test_junit_has_a_failed_case_per_incompatible_pair_and_markdown_says_why(frame) -> None:  # type: ignore[no-untyped-def]
    decision = can_i_ship(frame, "copilot-python", sdk=LABEL, against="fleet", targets=["1.0.90", "1.0.92", "1.0.99"])
    suite = ET.fromstring(to_junit(decision, f"github-copilot-sdk {LABEL}").split("\n", 1)[1])
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("3", "1", "1")
    failed = [c for c in suite.iter("testcase") if c.find("failure") is not None]
    assert [c.get("name") for c in failed] == [f"sdk {LABEL} × cli 1.0.92"]
    assert "SDK supports versions 4-4" in failed[0].find("failure").get("message")
    md = to_markdown(decision, differences(frame, "copilot-python", "sdk", LABEL, "1.0.27", ["1.0.90", "1.0.92"]),
                     f"github-copilot-sdk {LABEL}")
    assert md.startswith(f"### ❌ can I ship github-copilot-sdk {LABEL}? **no**")
    assert md.index("| no |") < md.index("| unknown |") < md.index("| yes |")
    assert "| 1.0.92 | **regression** | compatible | refused: SDK supports versions 4-4" in md


def test_a_candidate_is_compared_with_the_newest_release_not_a_newer_preview() -> None:
    from matrix.versions import newest_release

    assert newest_release(["1.0.9", "1.0.15-unstable.3.gfc4", "1.0.14", "1.0.15-preview.0"]) == "1.0.14"
    assert newest_release(["0.1.0-beta.1", "0.1.0-beta.2"]) == "0.1.0-beta.2"
    assert newest_release([]) is None
