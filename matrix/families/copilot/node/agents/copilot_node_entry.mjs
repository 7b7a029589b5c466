// Where an installed @github/copilot-sdk release's ES module is: read by the agents before they
// import it and by the ahead start that imports it before the cell (copilot_node_preload.mjs),
// so both name the same module and the agent's import finds it loaded. No side effects: the
// preload imports this before any cell's configuration exists.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

export function esmEntry(pj) {
  let e = pj.exports?.["."] ?? pj.exports;
  if (e && typeof e === "object") e = e.import ?? e.default;
  if (e && typeof e === "object") e = e.default;
  return e || pj.module || pj.main || "index.js";
}

export function entryUrl(sdkDir) {
  const pj = JSON.parse(readFileSync(join(sdkDir, "package.json"), "utf8"));
  return pathToFileURL(join(sdkDir, esmEntry(pj))).href;
}
