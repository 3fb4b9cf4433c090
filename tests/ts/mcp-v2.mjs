// `agent-host serve` with the official TypeScript SDK v2 client
// (@modelcontextprotocol/client), pinned to protocol revision 2026-07-28
// (stateless: server/discover, per-request capabilities, input_required).
// Run by examples/agent-host/tests/mcp_sdk.rs:
//
//   node mcp-v2.mjs <agent-host binary> <scratch dir>
//
// Checks over stdio: the tools, a read call, an ask accepted and one
// declined through input_required, both resources, execute_code, and
// view_image returning an image block; then code mode's gate: an action that
// asks is resumed by replay (read → write → write → read with two approvals
// and each write once; an approval then a decline, caught as data; a file
// changed between rounds, the action keeping what it first read).
// Every check asserts; the last line printed is a JSON summary.
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const [binary, scratch] = process.argv.slice(2);
const summary = {};

async function connect(surface, answer, workspace) {
  const c = new Client({ name: "capspec-v2-e2e", version: "1" }, { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: "2026-07-28" } } });
  c.asked = 0;
  c.setRequestHandler("elicitation/create", async () => {
    c.asked += 1;
    return answer === "accept" ? { action: "accept", content: {} } : { action: "decline" };
  });
  await c.connect(new StdioClientTransport({ command: binary, args: ["serve", "--surface", surface, "--mode", "default", "--workspace", workspace], stderr: "ignore" }));
  return c;
}

// --- tools surface ----------------------------------------------------------
{
  const ws = join(scratch, "tools");
  mkdirSync(ws, { recursive: true });
  const c = await connect("tools", "accept", ws);
  assert.equal(c.getNegotiatedProtocolVersion(), "2026-07-28");
  const names = (await c.listTools()).tools.map((t) => t.name);
  assert.ok(names.includes("read_file") && names.includes("write_file") && names.includes("tool_search"), names.join(","));
  const listed = await c.callTool({ name: "list_files", arguments: {} });
  assert.equal(listed.isError, false, JSON.stringify(listed));
  assert.deepEqual(listed.structuredContent.entries, []);
  const written = await c.callTool({ name: "write_file", arguments: { path: "yes.txt", content: "yes" } });
  assert.equal(written.isError, false, JSON.stringify(written));
  assert.equal(written._meta["io.capspec/receipts"][0].decision, "approved");
  assert.equal(c.asked, 1, "asked through input_required once");
  assert.equal(readFileSync(join(ws, "yes.txt"), "utf8"), "yes");
  const resources = (await c.listResources()).resources.map((r) => r.uri);
  assert.deepEqual(resources, ["capspec://capabilities", "capspec://catalog"]);
  const catalog = (await c.readResource({ uri: "capspec://catalog" })).contents[0];
  assert.match(catalog.text, /## workspace/);
  await c.close();

  const d = await connect("tools", "decline", ws);
  const declined = await d.callTool({ name: "write_file", arguments: { path: "no.txt", content: "no" } });
  assert.equal(declined.isError, true);
  assert.equal(declined.structuredContent, undefined, "write_file declares an output schema: no structured error");
  const error = declined._meta["io.capspec/error"];
  assert.equal(error.error, "permission_denied");
  assert.match(error.message, /declined/);
  assert.deepEqual(JSON.parse(declined.content[0].text), error);
  assert.ok(!existsSync(join(ws, "no.txt")));
  await d.close();
  summary.tools = "ok";
}

// --- code surface -------------------------------------------------------------
{
  const ws = join(scratch, "code");
  mkdirSync(ws, { recursive: true });
  const c = await connect("code", "accept", ws);
  const names = (await c.listTools()).tools.map((t) => t.name).sort();
  assert.deepEqual(names, ["execute_code", "read_file", "view_image"]);
  // A 1×1 PNG named .gif: the block's type comes from the bytes.
  const png = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==", "base64");
  writeFileSync(join(ws, "pixel.gif"), png);
  const image = await c.callTool({ name: "view_image", arguments: { path: "pixel.gif" } });
  assert.equal(image.isError, false, JSON.stringify(image));
  const block = image.content.find((b) => b.type === "image");
  assert.ok(block, JSON.stringify(image.content));
  assert.equal(block.mimeType, "image/png");
  assert.deepEqual(Buffer.from(block.data, "base64"), png);
  summary.image = "ok";
  const ran = await c.callTool({
    name: "execute_code",
    arguments: { code: 'import workspace from "@capspec/host/workspace";\nexport default async () => (await workspace.list_files({})).entries.length;' },
  });
  assert.equal(ran.isError, false, JSON.stringify(ran));
  assert.equal(ran.structuredContent.result, 1, "the one file: pixel.gif");
  assert.deepEqual(ran.structuredContent.receipts.map((r) => [r.capability, r.status]), [["workspace.list_files", "ok"]]);
  await c.close();
  summary.code = "ok";
}
// --- code mode: an action that asks, resumed by replay ----------------------
{
  const ws = join(scratch, "replay");
  mkdirSync(ws, { recursive: true });
  // `answers` in order (then accept); `before` runs as each ask arrives.
  async function withClient(answers, before, body) {
    const c = new Client({ name: "capspec-v2-replay", version: "1" }, { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: "2026-07-28" } } });
    const asked = [];
    c.setRequestHandler("elicitation/create", async (request) => {
      asked.push(request.params.message);
      if (before) before(asked.length);
      const answer = answers[asked.length - 1] ?? "accept";
      return answer === "accept" ? { action: "accept", content: {} } : { action: "decline" };
    });
    await c.connect(new StdioClientTransport({ command: binary, args: ["serve", "--surface", "code", "--mode", "default", "--workspace", ws], stderr: "ignore" }));
    try {
      return await body(c, asked);
    } finally {
      await c.close();
    }
  }
  const action = (body) => ({ name: "execute_code", arguments: { code: `import workspace from "@capspec/host/workspace";\nexport default async () => { ${body} };` } });
  const steps = (ran) => ran.structuredContent.receipts.map((r) => [r.capability, r.decision, r.status]);

  writeFileSync(join(ws, "src.txt"), "source");
  await withClient([], null, async (c, asked) => {
    const ran = await c.callTool(action(`
      const before = (await workspace.read_file({ path: "src.txt" })).content;
      await workspace.write_file({ path: "one.txt", content: before, mode: "create_new" });
      await workspace.write_file({ path: "two.txt", content: before + "2", mode: "create_new" });
      return (await workspace.list_files({})).entries.map((e) => e.path).sort();`));
    assert.equal(ran.isError, false, JSON.stringify(ran));
    assert.deepEqual(ran.structuredContent.result, ["one.txt", "src.txt", "two.txt"]);
    assert.deepEqual(steps(ran), [
      ["workspace.read_file", "auto", "ok"],
      ["workspace.write_file", "approved", "ok"],
      ["workspace.write_file", "approved", "ok"],
      ["workspace.list_files", "auto", "ok"],
    ]);
    assert.equal(asked.length, 2, "two approvals");
  });
  assert.equal(readFileSync(join(ws, "one.txt"), "utf8"), "source");
  assert.equal(readFileSync(join(ws, "two.txt"), "utf8"), "source2");

  await withClient(["accept", "decline"], null, async (c, asked) => {
    const ran = await c.callTool(action(`
      await workspace.write_file({ path: "yes.txt", content: "y", mode: "create_new" });
      try { await workspace.write_file({ path: "no.txt", content: "n", mode: "create_new" }); return "wrote"; } catch (e) { return e.code; }`));
    assert.equal(ran.isError, false, JSON.stringify(ran));
    assert.equal(ran.structuredContent.result, "permission_denied");
    assert.deepEqual(steps(ran), [["workspace.write_file", "approved", "ok"], ["workspace.write_file", "denied", "refused"]]);
    assert.equal(asked.length, 2);
  });
  assert.ok(existsSync(join(ws, "yes.txt")) && !existsSync(join(ws, "no.txt")));

  writeFileSync(join(ws, "shared.txt"), "original");
  await withClient([], () => writeFileSync(join(ws, "shared.txt"), "changed"), async (c, asked) => {
    const ran = await c.callTool(action(`
      const first = (await workspace.read_file({ path: "shared.txt" })).content;
      await workspace.write_file({ path: "copy.txt", content: first, mode: "create_new" });
      return { first, again: (await workspace.read_file({ path: "shared.txt" })).content };`));
    assert.equal(ran.isError, false, JSON.stringify(ran));
    assert.deepEqual(ran.structuredContent.result, { first: "original", again: "changed" });
    assert.equal(asked.length, 1);
  });
  assert.equal(readFileSync(join(ws, "copy.txt"), "utf8"), "original");
  summary.replay = "ok";
}
console.log(JSON.stringify(summary));
