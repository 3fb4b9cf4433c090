// node:fs with globSync (see register.mjs); on Node 22+ the real one is used.
import * as fs from "node:fs";
import { join, relative } from "node:path";
export * from "node:fs";
export default fs.default ?? fs;
// Node 22's fs.globSync for the one pattern shape the suite uses, `**/<name>`.
export function globSync(pattern, options = {}) {
  if (fs.globSync) return fs.globSync(pattern, options);
  const cwd = options.cwd ?? process.cwd();
  const name = pattern.replace(/^\*\*\//, "");
  const found = [];
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name === name) found.push(relative(cwd, path));
    }
  };
  walk(cwd);
  return found.sort();
}
