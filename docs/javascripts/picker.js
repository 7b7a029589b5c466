// The home page's picker: choose a family and your SDK (or CLI) release; it reads the site's
// own JSON API (api/v1/) and answers with the measured working range of the other side as
// install commands, the recommended pair, and what fails outside the range and how.
// Written for this site; Material's instant navigation re-runs it through document$.
(function () {
  const INSTALL = { pypi: (s) => `pip install "${s}"`, npm: (s) => `npm install "${s}"`, go: (s) => s };
  const esc = (t) => String(t).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
  async function json(url) {
    const res = await fetch(url);
    if (!res.ok) throw new Error(`${url}: ${res.status}`);
    return res.json();
  }
  function answer(fam, side, doc) {
    const other = side === "sdk" ? fam.other : fam.sdk;
    const install = INSTALL[other.ecosystem] || ((s) => s);
    const lines = [];
    // A release whose every cell is not-applicable for one reason (a CLI that does not start on
    // this platform for any SDK): that reason is the answer, once, not a failure per release.
    const reasons = new Set(doc.cells.map((c) => (c.outcome === "not-applicable" ? c.error : null)));
    if (doc.cells.length && reasons.size === 1 && !reasons.has(null) && !reasons.has(undefined)) {
      lines.push(`<p><strong>${esc([...reasons][0])}</strong></p>`);
    }
    if (doc.works_with.length) {
      const any = doc.works_with_spans.length > 1 ? " (any one of these ranges)" : "";
      lines.push(`<p>Measured to work with <strong>${esc(other.package)}</strong>${any}:</p><pre><code>${doc.works_with.map((s) => esc(install(s))).join("\n")}</code></pre>`);
      const last = doc.works_with_spans[doc.works_with_spans.length - 1];
      lines.push(`<p>Recommended pair: <strong>${esc(doc.package)} ${esc(doc.version)}</strong> with <strong>${esc(other.package)} ${esc(last.last)}</strong> (the newest measured to work, nothing left running after stop()).</p>`);
    } else {
      lines.push(`<p><strong>No measured release of ${esc(other.package)} works cleanly with it.</strong></p>`);
    }
    if (doc.works_but_leaves_cli_running.length) {
      lines.push(`<p>Works, but stop() leaves the CLI running (prefer the above):</p><pre><code>${doc.works_but_leaves_cli_running.map((s) => esc(install(s))).join("\n")}</code></pre>`);
    }
    const good = new Set(doc.works_with_spans.flatMap((s) => s.versions).concat(doc.leaves_cli_running_spans.flatMap((s) => s.versions)));
    const fails = {};
    doc.cells.forEach((c, i) => {
      if (good.has(c.other)) return;
      (fails[c.outcome] = fails[c.outcome] || []).push({ ...c, at: i });
    });
    // Runs of releases next to each other in the measured order: "0.0.343–0.0.401, 1.0.77".
    const spans = (cs) => {
      const out = [];
      cs.forEach((c, i) => {
        if (i && cs[i - 1].at === c.at - 1) out[out.length - 1][1] = c.other;
        else out.push([c.other, c.other]);
      });
      return out.map(([a, b]) => (a === b ? a : `${a}–${b}`)).join(", ");
    };
    const kinds = Object.keys(fails);
    if (kinds.length) {
      const items = kinds.map((k) => {
        const cs = fails[k];
        const example = cs.find((c) => c.error);
        return `<li><strong>${esc(k)}</strong> with ${cs.length} release(s) (${esc(spans(cs))})${example ? `: <code>${esc(example.error)}</code>` : ""}</li>`;
      });
      lines.push(`<p>Outside that range:</p><ul>${items.join("")}</ul>`);
    }
    const page = `versions/${encodeURIComponent(doc.family)}/${side}-${encodeURIComponent(doc.version)}/`;
    lines.push(`<p><a href="${page}">Every cell of ${esc(doc.package)} ${esc(doc.version)}, with its evidence</a></p>`);
    return lines.join("");
  }
  async function setup(root) {
    if (root.dataset.cmReady) return;
    root.dataset.cmReady = "1";
    const api = root.dataset.api;
    const famSel = root.querySelector("[data-cm-family]"), sideSel = root.querySelector("[data-cm-side]");
    const verSel = root.querySelector("[data-cm-version]"), out = root.querySelector("[data-cm-answer]");
    let index;
    try { index = await json(api + "index.json"); } catch (e) { out.textContent = `The API could not be read (${e.message}).`; return; }
    const families = index.families.filter((f) => f.other_kind === "cli");
    famSel.innerHTML = families.map((f) => `<option value="${esc(f.name)}">${esc(f.name)}</option>`).join("");
    const fam = () => families.find((f) => f.name === famSel.value);
    const fillVersions = () => {
      const side = sideSel.value === "sdk" ? fam().sdk : fam().other;
      verSel.innerHTML = side.releases.slice().reverse().map((r) => `<option value="${esc(r.version)}">${esc(r.version)}${r.released ? " (" + esc(r.released.slice(0, 10)) + ")" : ""}</option>`).join("");
      show();
    };
    // Answers arrive in any order: only the one for the latest choice is shown.
    let asked = 0;
    const show = async () => {
      const f = fam(), side = sideSel.value, v = verSel.value;
      if (!v) return;
      const ticket = ++asked;
      try {
        const doc = await json(`${api}${encodeURIComponent(f.name)}/${side}/${encodeURIComponent(v)}.json`);
        if (ticket === asked) out.innerHTML = answer(f, side, doc);
      } catch (e) { if (ticket === asked) out.textContent = `No answer for ${v} (${e.message}).`; }
    };
    famSel.addEventListener("change", fillVersions);
    sideSel.addEventListener("change", fillVersions);
    verSel.addEventListener("change", show);
    fillVersions();
  }
  function run() { document.querySelectorAll("[data-cm-picker]").forEach(setup); }
  if (typeof document$ !== "undefined") document$.subscribe(run); else document.addEventListener("DOMContentLoaded", run);
})();
