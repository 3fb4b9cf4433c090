// The official MCP conformance suite (@modelcontextprotocol/conformance)
// against `agent-host serve --http`. Run by
// examples/agent-host/tests/conformance.rs:
//
//   node conformance.mjs <agent-host binary> <scratch dir> [more serve flags…]
//
// (`--app` serves the endpoint inside an axum app with routes of its own.)
//
// The suite's client sends no bearer token, and capspec's HTTP server has
// no unscoped session, so a loopback proxy adds `Authorization` the way a
// client's configuration does — and nothing else: Host and Origin pass
// through as the suite sent them. Runs every server scenario whose feature
// capspec offers; the last line printed is a JSON summary.
import { spawn } from "node:child_process";
import { writeFileSync, mkdirSync } from "node:fs";
import http from "node:http";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const [binary, scratch, ...extra] = process.argv.slice(2);
mkdirSync(scratch, { recursive: true });

// The scenarios of features capspec's server has: the lifecycle, ping,
// tools, resources, concurrent POST streams, DNS-rebinding protection.
// (Logging, completions, prompts, subscriptions and the suite's fixture
// tools are features capspec does not offer.)
const SCENARIOS = ["server-initialize", "ping", "tools-list", "resources-list", "server-sse-multiple-streams", "dns-rebinding-protection"];

const token = `t-${Math.random().toString(36).slice(2)}`;
const tokenFile = join(scratch, "token");
writeFileSync(tokenFile, `${token}\n`);
const server = spawn(binary, ["serve", "--http", "127.0.0.1:0", "--token-file", tokenFile, "--surface", "tools", "--mode", "plan", "--workspace", join(scratch, "ws"), ...extra], { stdio: ["ignore", "ignore", "pipe"] });
const target = await new Promise((resolve, reject) => {
  let text = "";
  server.stderr.on("data", (chunk) => {
    text += chunk;
    // The whole line: stderr may arrive cut anywhere, mid-address too.
    const found = text.match(/serving MCP at (http:\/\/\S+)\r?\n/);
    if (found) resolve(new URL(found[1]));
  });
  server.on("exit", (code) => reject(new Error(`agent-host serve exited (${code}): ${text}`)));
});

const proxy = http.createServer((req, res) => {
  const headers = { ...req.headers, authorization: `Bearer ${token}` };
  const up = http.request({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers }, (answer) => {
    res.writeHead(answer.statusCode, answer.headers);
    answer.pipe(res);
  });
  up.on("error", (e) => {
    res.writeHead(502);
    res.end(String(e));
  });
  req.pipe(up);
});
await new Promise((resolve) => proxy.listen(0, "127.0.0.1", resolve));
const url = `http://127.0.0.1:${proxy.address().port}/mcp`;

const suite = join(here, "node_modules/@modelcontextprotocol/conformance/dist/index.js");
const summary = {};
let failed = 0;
try {
  const run = (scenario) =>
    new Promise((resolve) => {
      const child = spawn(process.execPath, ["--import", join(here, "node20/register.mjs"), suite, "server", "--url", url, "--scenario", scenario], { stdio: ["ignore", "pipe", "pipe"] });
      let text = "";
      child.stdout.on("data", (c) => (text += c));
      child.stderr.on("data", (c) => (text += c));
      child.on("exit", (code) => resolve({ code, text }));
    });
  for (const scenario of SCENARIOS) {
    const out = await run(scenario);
    const result = out.text.match(/Passed: (\d+)\/(\d+), (\d+) failed/);
    const ok = out.code === 0 && result && result[3] === "0" && result[1] === result[2];
    summary[scenario] = result ? `${result[1]}/${result[2]}` : "no result";
    if (!ok) {
      failed += 1;
      console.log(`FAILED ${scenario}:\n${out.text.replace(/\x1b\[[0-9;]*m/g, "")}`);
    }
  }
} finally {
  proxy.close();
  server.kill();
}
console.log(JSON.stringify({ failed, scenarios: summary }));
process.exit(failed === 0 ? 0 : 1);
