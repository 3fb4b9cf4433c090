// Start `<binary> serve ARGS` (agent-host's, or cargo-capspec's) and wait
// until it prints `serving MCP at URL` on stderr: the child and the URL.
// Used by the scripts that serve over HTTP (mcp-e2e.mjs, oauth-e2e.mjs).
import { spawn } from "node:child_process";

export async function serve(binary, args) {
  const child = spawn(binary, ["serve", ...args], { stdio: ["ignore", "ignore", "pipe"] });
  const url = await new Promise((resolve, reject) => {
    let text = "";
    child.stderr.on("data", (chunk) => {
      text += chunk;
      // The whole line: stderr may arrive cut anywhere, mid-address too.
      const found = text.match(/serving MCP at (http:\/\/\S+)\r?\n/);
      if (found) resolve(found[1]);
    });
    child.on("exit", (code) => reject(new Error(`${binary} serve exited (${code}): ${text}`)));
  });
  return { child, url };
}
