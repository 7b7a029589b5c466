"""The site page for release managers that sets declarations against measurements: drift, with
semver findings."""

from __future__ import annotations

from collections import defaultdict

import pandas as pd

from matrix.answers.analysis import handshake
from matrix.answers.drift import NO_PROTOCOL, DriftFinding, cli_protocols, declared_window, drift, semver_findings
from matrix.families.registry import FAMILIES
from matrix.markup import badge, esc
from matrix.versions import sorted_versions

__all__ = ["drift_page"]

# What a disagreement most often means, by (prediction, observation): the reader's key.
_MEANING = {
    ("refused", "launch-failed"): "the CLI rejected the SDK's launch flags before any protocol was compared",
    ("compatible", "launch-failed"): "the protocols match, but the CLI rejected the SDK's launch flags",
    ("refused", "hang"): "a refusal was due, but the SDK never noticed the CLI had gone: it waited",
    ("compatible", "hang"): "the protocols match, but start never settled",
    ("refused", "crashed"): "a refusal was due, but the SDK failed on something else first",
    ("compatible", "crashed"): "the protocols match, but the SDK failed on a message it could not read",
    ("compatible", "degraded"): "the protocols match and it connected, but a later call failed",
    ("compatible", "refused"): "the protocols match, yet the SDK refused",
    ("refused", "compatible"): "the declarations say no, yet it worked",
}


def drift_page(frame: pd.DataFrame) -> str:
    families = [f for f in sorted(handshake(frame)["family"].unique()) if f in FAMILIES and not FAMILIES[f].standin]
    lines = ["# Declared versus observed", "",
             "Every handshake cell is **predicted** from declarations alone: the protocol window each SDK release "
             "declares in its own source (`SDK_PROTOCOL_VERSION`, a `MIN_PROTOCOL_VERSION` or else an exact-match "
             "rule) and the protocol version each CLI release reports. The prediction is then set next to the "
             "**measurement**. Where they disagree, the declarations do not tell the whole story: those cells are "
             "listed with the evidence. Cells that say nothing (infra or harness errors, uninstallable versions) "
             "are not predicted.", ""]
    for family in families:
        findings, predicted, agree = drift(frame, family)
        protos = cli_protocols(frame, family)
        windows = declared_window(frame, family)
        lines += [f"## {esc(family)}", "",
                  f"{predicted} cells predicted, {agree} agree with the measurement, **{len(findings)} disagree**.", ""]
        lines += ["### What each side declares", "", "| CLI | reports protocol |", "|---|---|"]
        lines += [f"| {esc(c)} | {'none' if p == NO_PROTOCOL else p} |" for c, p in
                  sorted(protos.items(), key=lambda kv: sorted_versions(list(protos)).index(kv[0]))]
        lines += ["", "| SDK | declared window | pins or bundles a CLI |", "|---|---|---|"]
        for sdk in sorted_versions(list(windows)):
            d = windows[sdk]
            top, low = d.get("SDK_PROTOCOL_VERSION"), d.get("MIN_PROTOCOL_VERSION")
            window = "none" if top is None else (f"{low}..{top}" if low is not None else f"exactly {top}")
            pin = d.get("CLI_VERSION") or ("bundles one" if d.get("bundled_cli") else "no")
            lines.append(f"| [{esc(sdk)}](versions/{family}/sdk-{esc(sdk)}.md) | {window} | {esc(pin)} |")
        lines.append("")
        groups: dict[tuple[str, str], list[DriftFinding]] = defaultdict(list)
        for f in findings:
            groups[(f.predicted, f.observed)].append(f)
        lines += ["### Where prediction and measurement disagree", ""]
        if not findings:
            lines += ["None.", ""]
        for (pred, obs), items in sorted(groups.items(), key=lambda kv: -len(kv[1])):
            meaning = _MEANING.get((pred, obs), "")
            why = f": {meaning}" if meaning else ""
            lines += [f"**Predicted {pred}, measured {badge(obs)}** ({len(items)} cells){why}",
                      "", "| SDK | CLI | rule (prediction) | evidence (measurement) |", "|---|---|---|---|"]
            for f in items:
                lines.append(f"| {esc(f.sdk_version)} | {esc(f.cli_version)} | {esc(f.rule)} | "
                             f"{esc(f.evidence).replace('|', '&#124;')} |")
            lines.append("")
        semver = semver_findings(frame, family)
        lines += ["### Semver findings", "",
                  "A patch or minor release of one side after which a version of the other side that worked no "
                  "longer does (like oasdiff's api-version-not-bumped). Below 1.0.0 semver promises nothing; those "
                  "are marked.", ""]
        if not semver:
            lines += ["None.", ""]
        else:
            lines += ["| side | release | bump | breaks | was → now | evidence |", "|---|---|---|---|---|---|"]
            for s in semver:
                zero = " (0.x)" if s.initial_development else ""
                other = "CLI" if s.side == "sdk" else "SDK"
                lines.append(f"| {s.side} | {esc(s.before)} → **{esc(s.after)}** | {s.bump}{zero} | "
                             f"{other} {esc(s.other)} | {badge(s.was)} → {badge(s.now)} | "
                             f"{esc(s.evidence).replace('|', '&#124;')} |")
            lines.append("")
    return "\n".join(lines) + "\n"
