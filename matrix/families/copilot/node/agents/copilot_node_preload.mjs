// What a Node agent started ahead of its cell loads first (matrix/execute/aheadstart.py): the
// SDK release, by the URL the agent will import it by. Nothing else: the agent's own modules
// read the cell's configuration when they are evaluated.
import { entryUrl } from "./copilot_node_entry.mjs";

export async function preload(sdkDir) {
  await import(entryUrl(sdkDir));
}
