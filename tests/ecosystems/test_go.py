"""The Go ecosystem's release listing when the module proxy refuses the version list (a fake
go command)."""

from __future__ import annotations

import pytest

from matrix.ecosystems import go as registry


def test_a_refused_version_list_falls_back_to_the_sibling_sdks_numbers(monkeypatch: pytest.MonkeyPatch) -> None:
    class Res:
        def __init__(self, ok: bool, stdout: str = "", stderr: str = "") -> None:
            self.ok, self.stdout, self.stderr, self.timed_out = ok, stdout, stderr, False

    served = {"1.0.0", "0.3.0"}

    def fake_run(req: object, reaper: object = None) -> Res:
        argv = req.argv  # type: ignore[attr-defined]
        if "-versions" in argv:
            return Res(False, stderr="reading .../@v/list: 403 Forbidden\n\tserver response: not available")
        version = argv[-1].rsplit("@v", 1)[1]
        if version in served:
            return Res(True, stdout=f'{{"Version": "v{version}", "Time": "2026-06-02T14:31:31Z"}}')
        return Res(False, stderr=f"reading .../@v/v{version}.info: 403 Forbidden")

    monkeypatch.setattr(registry.proc, "run", fake_run)
    monkeypatch.setattr(registry, "go_command", lambda *a: (("go", *a), {}))
    found, note = registry.fetch_go("example.com/m/go", ["1.0.0", "0.3.0", "0.2.9", "1.0.0"])
    assert sorted(r.version for r in found) == ["0.3.0", "1.0.0"] and found[0].released_at
    assert note is not None and "2 of 3" in note
    with pytest.raises(registry.InfraError):
        registry.fetch_go("example.com/m/go", [])  # nothing to ask for: the refusal is the answer
