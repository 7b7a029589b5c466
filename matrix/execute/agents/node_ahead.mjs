// An agent started before its cell (matrix/execute/aheadstart.py): Node cannot fork, so the
// cost a cell would pay first (the runtime's own start, the SDK's import) is paid while the
// cell before it runs.
//
//   node node_ahead.mjs STATUS PRELOAD [ARGS...]
//
// Imports PRELOAD and awaits its `preload(...ARGS)`, writes STATUS ({"ready": true} or why
// not), then reads its cell from stdin: {"argv": [script, ...], "env": {...}, "cwd": dir}.
// From then on it is that cell's agent: the cell's environment and directory, the script run
// as if Node had started it with those arguments. Nothing is written to stdout or stderr
// before the cell: they are the cell's.
import { readFileSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [status, preloadPath, ...args] = process.argv.slice(2);
const warnings = [];
const onWarning = (w) => warnings.push(`${w.name}: ${w.message}`.slice(0, 300));
process.on("warning", onWarning);
let why = null;
try {
  const mod = await import(pathToFileURL(preloadPath).href);
  if (typeof mod.preload === "function") await mod.preload(...args);
} catch (e) {
  why = `the preload failed: ${e?.stack || e}`.slice(0, 2000);
}
// A warning is emitted on the next tick: one the import caused has arrived by now. The agent
// records the runtime's warnings; one given before it listens would be lost, so none may be.
await new Promise((resolve) => setImmediate(resolve));
process.off("warning", onWarning);
if (why === null && warnings.length) why = `the preload warned: ${warnings.join("; ")}`;
writeFileSync(status, JSON.stringify({ ready: why === null, why }));

let cell;
try {
  cell = JSON.parse(readFileSync(0, "utf8"));
} catch {
  process.exit(0); // closed with no cell: the run ended first
}
for (const name of Object.keys(process.env)) delete process.env[name];
Object.assign(process.env, cell.env);
process.chdir(cell.cwd);
process.argv = [process.argv[0], ...cell.argv];
await import(pathToFileURL(cell.argv[0]).href);
