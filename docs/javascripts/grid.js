// The HTML matrices: order rows and columns by version (as built) or by release date.
// Written for this site; Material's instant navigation re-runs it through document$.
(function () {
  function setup(tools) {
    if (tools.dataset.cmReady) return;
    tools.dataset.cmReady = "1";
    const table = tools.nextElementSibling.querySelector("table.cm-grid");
    const head = table.tHead.rows[0];
    // Each column's place in version order, kept on the header for every later reorder.
    Array.from(head.cells).slice(1).forEach((th, i) => { th.dataset.k = String(i); });
    Array.from(table.tBodies[0].rows).forEach((r, i) => { r.dataset.v = String(i); });
    tools.querySelectorAll("button[data-cm-order]").forEach((button) => {
      button.addEventListener("click", () => {
        tools.querySelectorAll("button").forEach((b) => b.setAttribute("aria-pressed", String(b === button)));
        reorder(table, button.dataset.cmOrder);
      });
    });
  }
  function reorder(table, by) {
    const head = table.tHead.rows[0];
    const headers = Array.from(head.cells).slice(1);
    const want = headers.map((th, pos) => ({ pos, k: Number(th.dataset.k), date: th.dataset.date || "~" }));
    const sortKey = (x) => (by === "date" ? x.date + String(x.k).padStart(6, "0") : String(x.k).padStart(6, "0"));
    want.sort((a, b) => sortKey(a).localeCompare(sortKey(b)));
    const permute = (row) => {
      const cells = Array.from(row.cells);
      const frag = document.createDocumentFragment();
      frag.appendChild(cells[0]);
      want.forEach((w) => frag.appendChild(cells[w.pos + 1]));
      row.appendChild(frag);
    };
    permute(head);
    const body = table.tBodies[0];
    const rows = Array.from(body.rows).map((r) => ({ r, k: Number(r.dataset.v), date: r.dataset.date || "~" }));
    rows.sort((a, b) => sortKey(a).localeCompare(sortKey(b)));
    rows.forEach((x) => { permute(x.r); body.appendChild(x.r); });
  }
  function run() { document.querySelectorAll("[data-cm-grid-tools]").forEach(setup); }
  if (typeof document$ !== "undefined") document$.subscribe(run); else document.addEventListener("DOMContentLoaded", run);
})();
