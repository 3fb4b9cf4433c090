// End-to-end checks of `agent-host serve` with the official MCP TypeScript
// SDK as the client, over stdio and Streamable HTTP. Run by
// examples/agent-host/tests/mcp_sdk.rs:
//
//   node mcp-e2e.mjs <agent-host binary> <scratch dir>
//
// Every check asserts; the first failure exits non-zero with its message.
// The last line printed is a JSON summary (load figures included).
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { serve } from "./serving.mjs";

const [binary, scratch] = process.argv.slice(2);
assert.ok(binary && scratch, "usage: node mcp-e2e.mjs <agent-host> <scratch dir>");
const summary = {};

function workspace(name) {
  const dir = join(scratch, name);
  mkdirSync(dir, { recursive: true });
  return dir;
}

// A client; with `answer` it declares elicitation and answers every ask
// with it (a function of the request), counting the asks.
function client(answer) {
  const options = answer ? { capabilities: { elicitation: {} } } : {};
  const c = new Client({ name: "capspec-e2e", version: "1.0.0" }, options);
  c.asked = 0;
  if (answer) {
    c.setRequestHandler(ElicitRequestSchema, async (request) => {
      c.asked += 1;
      return answer(request);
    });
  }
  return c;
}

async function stdio(args, answer) {
  const c = client(answer);
  await c.connect(new StdioClientTransport({ command: binary, args: ["serve", ...args], stderr: "ignore" }));
  return c;
}

// A refused call's error object: in _meta, and the same as its text.
function errorOf(result) {
  assert.equal(result.isError, true, JSON.stringify(result));
  const error = result._meta["io.capspec/error"];
  assert.deepEqual(JSON.parse(result.content[0].text), error);
  return error;
}

const names = (listed) => listed.tools.map((t) => t.name).sort();

// --- stdio, code surface, a client without elicitation -------------------
{
  const c = await stdio(["--workspace", workspace("stdio-code")]);
  assert.deepEqual(names(await c.listTools()), ["execute_code", "read_file", "view_image"]);
  const ok = await c.callTool({
    name: "execute_code",
    arguments: { code: 'import workspace from "@capspec/host/workspace";\nexport default async () => (await workspace.list_files({})).entries.length;' },
  });
  assert.equal(ok.isError, false);
  assert.equal(ok.structuredContent.result, 0);
  assert.deepEqual(ok.structuredContent.receipts.map((r) => [r.capability, r.decision, r.status]), [["workspace.list_files", "auto", "ok"]]);
  assert.deepEqual(JSON.parse(ok.content[0].text), ok.structuredContent);
  // A write in default mode, with nobody to ask: the action throws the refusal.
  const refused = await c.callTool({
    name: "execute_code",
    arguments: { code: 'import workspace from "@capspec/host/workspace";\nexport default () => workspace.write_file({ path: "a.txt", content: "x" });' },
  });
  assert.equal(refused.isError, true);
  assert.equal(refused.structuredContent.error.code, "permission_denied");
  assert.deepEqual(refused.structuredContent.receipts.map((r) => r.decision), ["denied"]);
  // Both resources.
  const resources = (await c.listResources()).resources.map((r) => [r.uri, r.mimeType]);
  assert.deepEqual(resources, [["capspec://capabilities", "application/json"], ["capspec://catalog", "text/markdown"]]);
  const json = JSON.parse((await c.readResource({ uri: "capspec://capabilities" })).contents[0].text);
  assert.deepEqual(json.modules.map((m) => m.name), ["memory", "notes", "plan", "shell", "web", "workspace"]);
  const catalog = (await c.readResource({ uri: "capspec://catalog" })).contents[0];
  assert.equal(catalog.mimeType, "text/markdown");
  assert.match(catalog.text, /## workspace/);
  // The direct tool is a capability call with its output schema honoured.
  writeFileSync(join(scratch, "stdio-code", "hello.txt"), "hi\n");
  const read = await c.callTool({ name: "read_file", arguments: { path: "hello.txt" } });
  assert.equal(read.structuredContent.content, "hi\n");
  await c.close();
  summary.stdio_code = "ok";
}

// --- stdio, tools surface, elicitation accepted and declined -------------
{
  const dir = workspace("stdio-tools");
  const accepting = await stdio(["--surface", "tools", "--workspace", dir], () => ({ action: "accept", content: { scope: "once" } }));
  const listed = await accepting.listTools();
  const write = listed.tools.find((t) => t.name === "write_file");
  assert.equal(write.annotations.readOnlyHint, false);
  assert.equal(write._meta["io.capspec/category"], "write");
  assert.ok(!listed.tools.some((t) => t.name === "execute_code"));
  const written = await accepting.callTool({ name: "write_file", arguments: { path: "ok.txt", content: "yes" } });
  assert.equal(written.isError, false, JSON.stringify(written));
  assert.equal(accepting.asked, 1);
  assert.equal(written._meta["io.capspec/receipts"][0].decision, "approved");
  await accepting.close();

  const declining = await stdio(["--surface", "tools", "--workspace", dir], () => ({ action: "decline" }));
  // write_file declares an output schema: its refusal is the error object as
  // text and in _meta, without structured content the SDK would check.
  const declined = await declining.callTool({ name: "write_file", arguments: { path: "no.txt", content: "no" } });
  assert.equal(declined.isError, true);
  assert.equal(declined.structuredContent, undefined);
  const error = errorOf(declined);
  assert.equal(error.error, "permission_denied");
  assert.equal(error.capability, "workspace.write_file");
  assert.match(error.message, /declined/);
  // Invalid arguments: a tool error naming what is wrong, not a protocol error.
  const invalid = await declining.callTool({ name: "read_file", arguments: { path: 7 } });
  assert.equal(errorOf(invalid).error, "invalid_arguments");
  await declining.close();
  summary.stdio_tools = "ok";
}

// --- HTTP ------------------------------------------------------------------
async function httpServer(args) {
  const tokenFile = join(scratch, `token-${args.join("-").replace(/[^a-z]/g, "")}`);
  const token = `t-${Math.random().toString(36).slice(2)}`;
  writeFileSync(tokenFile, `${token}\n`);
  const { child, url } = await serve(binary, ["--http", "127.0.0.1:0", "--token-file", tokenFile, ...args]);
  return { child, url, token };
}

async function httpClient(server, answer, token = server.token) {
  const c = client(answer);
  const transport = new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  await c.connect(transport);
  return c;
}

const initialize = JSON.stringify({
  jsonrpc: "2.0", id: 1, method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
});
const post = (server, body, headers = {}) =>
  fetch(server.url, { method: "POST", body, headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers } });

{
  const server = await httpServer(["--surface", "tools", "--mode", "plan", "--workspace", workspace("http-plan")]);
  try {
    // No token, a wrong token: 401 and no session.
    const none = await post(server, initialize);
    assert.equal(none.status, 401, `no token: ${none.status} ${await none.clone().text()} from ${server.url}`);
    assert.equal(none.headers.get("mcp-session-id"), null);
    const wrong = await post(server, initialize, { authorization: "Bearer not-the-token" });
    assert.equal(wrong.status, 401);
    await assert.rejects(httpClient(server, undefined, "wrong"));
    // Malformed JSON-RPC: a JSON-RPC error, and the server keeps serving.
    const bad = await post(server, "{ this is not json", { authorization: `Bearer ${server.token}` });
    assert.ok(bad.status >= 400 && bad.status < 500, `status ${bad.status}`);
    const error = await bad.json();
    assert.equal(error.jsonrpc, "2.0");
    assert.equal(typeof error.error.code, "number");
    // A body over the limit: 413.
    const huge = await post(server, JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping", params: { pad: "x".repeat(5 * 1024 * 1024) } }), { authorization: `Bearer ${server.token}` });
    assert.equal(huge.status, 413);
    // Plan mode: reads run, everything else is blocked.
    const c = await httpClient(server);
    const blocked = await c.callTool({ name: "write_file", arguments: { path: "a.txt", content: "x" } });
    assert.equal(errorOf(blocked).error, "blocked_in_plan_mode");
    const listed = await c.callTool({ name: "list_files", arguments: {} });
    assert.equal(listed.isError, false);
    // The session's end as the SDK sends it (a DELETE): no error reaches
    // the client's error handler, and the session is gone (DESIGN §10).
    const ended = [];
    const previous = c.transport.onerror;
    c.transport.onerror = (e) => { ended.push(String(e)); previous?.(e); };
    const session = c.transport.sessionId;
    await c.transport.terminateSession();
    assert.deepEqual(ended, []);
    assert.equal(c.transport.sessionId, undefined);
    const after = await post(server, JSON.stringify({ jsonrpc: "2.0", id: 3, method: "ping" }), { authorization: `Bearer ${server.token}`, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" });
    assert.equal(after.status, 404, `a request in the ended session: ${after.status}`);
    // Answered 200, as the Python SDK's client requires (it warns on 202).
    const other = await httpClient(server);
    const end = await fetch(server.url, { method: "DELETE", headers: { authorization: `Bearer ${server.token}`, "mcp-session-id": other.transport.sessionId, "mcp-protocol-version": "2025-11-25" } });
    assert.equal(end.status, 200);
    await c.close();
  } finally {
    server.child.kill();
  }
  summary.http_plan = "ok";
}

// --- HTTP load: 32 sessions x 50 calls ---------------------------------------
{
  const SESSIONS = 32;
  const CALLS = 50;
  const server = await httpServer(["--surface", "tools", "--mode", "default", "--workspace", workspace("http-load")]);
  try {
    const started = performance.now();
    // Even sessions allow for the session (asked once), odd ones allow once
    // (asked on every call): a shared approval would show in the counts.
    const clients = await Promise.all(
      Array.from({ length: SESSIONS }, (_, s) => httpClient(server, () => ({ action: "accept", content: { scope: s % 2 === 0 ? "session" : "once" } }))),
    );
    const connected = performance.now();
    const latencies = [];
    const receipts = await Promise.all(
      clients.map(async (c, s) => {
        const mine = [];
        for (let i = 0; i < CALLS; i++) {
          const t0 = performance.now();
          const r = await c.callTool({ name: "write_file", arguments: { path: `s${s}/c${i}.txt`, content: `${s}:${i}` } });
          latencies.push(performance.now() - t0);
          assert.equal(r.isError, false, JSON.stringify(r));
          mine.push(...r._meta["io.capspec/receipts"]);
        }
        return mine;
      }),
    );
    const finished = performance.now();
    clients.forEach((c, s) => assert.equal(c.asked, s % 2 === 0 ? 1 : CALLS, `session ${s} was asked ${c.asked} times`));
    const all = receipts.flat();
    assert.equal(all.length, SESSIONS * CALLS, "one receipt per call");
    assert.ok(all.every((r) => r.capability === "workspace.write_file" && r.status === "ok" && r.decision === "approved"));
    await Promise.all(clients.map((c) => c.close()));
    latencies.sort((a, b) => a - b);
    const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
    summary.load = {
      sessions: SESSIONS,
      calls: SESSIONS * CALLS,
      sessions_per_second: Math.round(SESSIONS / ((connected - started) / 1000)),
      calls_per_second: Math.round((SESSIONS * CALLS) / ((finished - connected) / 1000)),
      p50_ms: Number(at(0.5).toFixed(2)),
      p99_ms: Number(at(0.99).toFixed(2)),
    };
  } finally {
    server.child.kill();
  }
}

console.log(JSON.stringify(summary));
