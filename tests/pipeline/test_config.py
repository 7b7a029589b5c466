from __future__ import annotations

from pathlib import Path

import pytest

from matrix.commands.cli import main
from matrix.errors import ConfigError
from matrix.families.registry import FAMILIES
from matrix.pipeline.config import Plan, load_plan
from tests.conftest import ROOT

PROBES = {name: list(f.probes) for name, f in FAMILIES.items()}


def plan_of(path: Path) -> Plan:
    """``path`` loaded against every registered family, as the command line loads a config."""
    return load_plan(path, list(FAMILIES), PROBES, [n for n, f in FAMILIES.items() if f.standin])
GOOD = """
[run]
jobs = 2
[families.copilot-python]
sdk.select = ["latest:2"]
cli.select = [">=1.0,<2"]
"""


def load(tmp_path: Path, text: str):
    path = tmp_path / "m.toml"
    path.write_text(text)
    return load_plan(path, list(FAMILIES), PROBES)


def test_good_config_loads(tmp_path: Path) -> None:
    plan = load(tmp_path, GOOD)
    fam = plan.families["copilot-python"]
    assert fam.sdk.select == ["latest:2"]
    assert fam.probes == []  # none named: the family's own default, when the run is planned
    assert plan.run.jobs == 2


def test_a_family_measures_its_pair_probe_or_every_probe_when_a_config_names_none() -> None:
    assert FAMILIES["copilot-python"].default_probes == ("handshake",)
    assert FAMILIES["cosmo-python"].default_probes == FAMILIES["cosmo-python"].probes


def test_repository_default_matrix_is_valid() -> None:
    plan = plan_of(ROOT / "matrix.toml")
    assert set(plan.families) == set(FAMILIES)  # the whole history: every family
    # Every release ("all"), and where a family says so the pre-releases newer than its newest one.
    assert all(f.sdk.select[0] == "all" and set(f.sdk.select) <= {"all", "preview"}
               and set(f.probes) == set(FAMILIES[n].probes) for n, f in plan.families.items())


@pytest.mark.parametrize("path", sorted((ROOT / "configs").glob("copilot-*.toml")), ids=lambda p: p.stem)
def test_a_family_config_measures_that_family_as_the_whole_history_does(path: Path) -> None:
    whole = plan_of(ROOT / "matrix.toml").families[path.stem]
    alone = plan_of(path)
    assert set(alone.families) == {path.stem}
    mine = alone.families[path.stem]
    assert (mine.sdk.select, mine.cli.select, mine.probes) == (whole.sdk.select, whole.cli.select, whole.probes)


@pytest.mark.parametrize(
    ("text", "needles"),
    [
        (GOOD + "\n[bogus]\n", ["bogus", "unknown key", "families", "timeouts"]),
        (GOOD.replace("sdk.select", "sdk.selct"), ["families.copilot-python.sdk.selct", "select", "exclude"]),
        (GOOD.replace("copilot-python", "copilot-dotnet"), ["copilot-dotnet", "copilot-python"]),
        (GOOD.replace('"latest:2"', '"latest:two"'), ["latest:two", "latest:N"]),
        (GOOD.replace('">=1.0,<2"', '">=1.0,<<2"'), [">=1.0,<<2", "range"]),
        (GOOD.replace('"latest:2"', '"latest:0"'), ["latest:0", "selects nothing"]),
        (GOOD.replace('["latest:2"]', "[]"), ["sdk.select", "empty"]),
        (GOOD.replace("jobs = 2", 'jobs = "two"'), ["run.jobs", "two"]),
        (GOOD.replace("jobs = 2", "jobs = 0"), ["run.jobs"]),
        (GOOD + 'probes = ["teleport"]\n', ["teleport", "handshake"]),
        ("[families]\n", ["no family", "copilot-python"]),
        ("this is = = not toml", ["not valid TOML"]),
    ],
)
def test_bad_config_names_the_problem(tmp_path: Path, text: str, needles: list[str]) -> None:
    with pytest.raises(ConfigError) as exc:
        load(tmp_path, text)
    message = str(exc.value)
    for needle in needles:
        assert needle in message, f"{needle!r} missing from {message!r}"


def test_missing_config_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="file not found"):
        load_plan(tmp_path / "nope.toml", list(FAMILIES), PROBES)


def test_cli_exits_2_with_one_line_and_touches_no_results(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "m.toml"
    cfg.write_text(GOOD + "\n[bogus]\n")
    results = tmp_path / "results"
    results.mkdir()
    rows = results / "rows.jsonl"
    rows.write_text('{"stored": "row"}\n')
    code = main(["run", "--config", str(cfg), "--results", str(results)])
    err = capsys.readouterr().err
    assert code == 2
    assert len(err.strip().splitlines()) == 1, err
    assert "bogus" in err
    assert rows.read_text() == '{"stored": "row"}\n'


@pytest.mark.parametrize("argv", [["run", "--jobs", "0"], ["run", "--jobs", "x"], ["report", "--format", "xml"]])
def test_bad_arguments_exit_2(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2


def test_unwritable_results_dir_is_a_user_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "m.toml"
    cfg.write_text(GOOD)
    blocker = tmp_path / "file"
    blocker.write_text("")
    code = main(["run", "--config", str(cfg), "--results", str(blocker / "sub")])
    assert code == 2
    assert "not writable" in capsys.readouterr().err


def test_a_stand_in_family_takes_no_cli_selection(tmp_path: Path) -> None:
    path = tmp_path / "m.toml"
    path.write_text('[families.cosmo-python]\nprobes = ["tolerance"]\nsdk.select = ["all"]\ncli.select = ["1.0"]\n')
    with pytest.raises(ConfigError, match=r"families\.cosmo-python\.cli.*stand-in"):
        plan_of(path)
    path.write_text('[families.cosmo-python]\nprobes = ["strictness"]\nsdk.select = ["all"]\n')
    assert plan_of(path).families["cosmo-python"].probes == ["strictness"]


def test_the_sample_config_is_valid() -> None:
    plan = plan_of(ROOT / "configs" / "sample.toml")
    assert plan.families["copilot-python"].sdk.select[-1] == "latest:1"
