// Sort (click a header) and filter (type in the box) for tables marked data-cm-sortable.
// Written for this site; Material's instant navigation re-runs it through document$.
(function () {
  function versionKey(text) {
    const m = text.trim().match(/^(\d+)\.(\d+)\.(\d+)/);
    return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : null;
  }
  function compare(a, b) {
    const va = versionKey(a), vb = versionKey(b);
    if (va && vb) {
      for (let i = 0; i < 3; i++) if (va[i] !== vb[i]) return va[i] - vb[i];
      return a.localeCompare(b);
    }
    const na = parseFloat(a), nb = parseFloat(b);
    if (!isNaN(na) && !isNaN(nb) && /^[\d.]+$/.test(a.trim()) && /^[\d.]+$/.test(b.trim())) return na - nb;
    return a.localeCompare(b);
  }
  function cellText(row, i) {
    const cell = row.cells[i];
    return cell ? (cell.dataset.sort || cell.textContent) : "";
  }
  function setup(table) {
    if (table.dataset.cmReady) return;
    table.dataset.cmReady = "1";
    const body = table.tBodies[0];
    const input = document.createElement("input");
    input.type = "search";
    input.placeholder = "Filter rows…";
    input.className = "cm-filter";
    input.setAttribute("aria-label", "Filter rows");
    const count = document.createElement("span");
    count.className = "cm-count";
    const wrap = table.closest(".cm-table-wrap") || table;
    wrap.parentNode.insertBefore(input, wrap);
    wrap.parentNode.insertBefore(count, wrap);
    function update() {
      const q = input.value.trim().toLowerCase();
      let shown = 0;
      for (const row of body.rows) {
        const hit = !q || row.textContent.toLowerCase().includes(q);
        row.hidden = !hit;
        if (hit) shown++;
      }
      count.textContent = " " + shown + " of " + body.rows.length + " rows";
    }
    input.addEventListener("input", update);
    Array.from(table.tHead.rows[0].cells).forEach(function (th, i) {
      th.classList.add("cm-sortable");
      th.addEventListener("click", function () {
        const dir = th.dataset.dir === "asc" ? "desc" : "asc";
        Array.from(th.parentNode.cells).forEach(function (o) { delete o.dataset.dir; });
        th.dataset.dir = dir;
        const rows = Array.from(body.rows);
        rows.sort(function (r1, r2) {
          const c = compare(cellText(r1, i), cellText(r2, i));
          return dir === "asc" ? c : -c;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
    update();
  }
  function init() { document.querySelectorAll("table[data-cm-sortable]").forEach(setup); }
  if (typeof document$ !== "undefined") document$.subscribe(init);
  else document.addEventListener("DOMContentLoaded", init);
})();
