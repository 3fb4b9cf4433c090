// `node --import ./node20/register.mjs …`: lets the MCP conformance suite,
// which imports `fs.globSync` (Node 22+), run on Node 20. Its imports of
// `fs` resolve to fs-glob.mjs: every export of node:fs, plus a globSync for
// the one pattern shape the suite uses. Other modules are untouched.
import { register } from "node:module";
register("./glob-hook.mjs", import.meta.url);
