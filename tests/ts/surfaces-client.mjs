// Named surfaces (DESIGN §10) through the official TypeScript SDK client
// (2025-11-25), run by cli/tests/serve_oauth.rs against `cargo capspec
// serve --http` over two upstream servers, and on stdio:
//
//   node surfaces-client.mjs BASE_URL SUPPORT_TOKEN OPS_TOKEN CARGO_CAPSPEC PROJECT_DIR
//
// It connects to /mcp/support with a token outside its groups (the 403 it
// gets), lists each surface's tools as a member and calls `open_nodes`
// there (an error where the surface leaves it out), then serves
// `--surface-name support` on stdio with the code surface and runs an
// action importing `fs`, outside it. It prints one JSON line.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [base, support, ops, binary, project] = process.argv.slice(2);

async function connect(path, token) {
  const client = new Client({ name: "surfaces-client", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${base}${path}`), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
  await client.connect(transport);
  return client;
}

async function surface(path, token) {
  const client = await connect(path, token);
  const tools = (await client.listTools()).tools.map((t) => t.name);
  let openNodes;
  try {
    const result = await client.callTool({ name: "open_nodes", arguments: { names: ["x"] } });
    openNodes = result.isError ? "tool error" : "ok";
  } catch (e) {
    openNodes = `error ${e.code}: ${e.message}`;
  }
  await client.close();
  return { tools, openNodes };
}

const out = {};
try {
  await connect("/mcp/support", ops);
  out.outside = "admitted";
} catch (e) {
  out.outside = e.code;
}
out.support = await surface("/mcp/support", support);
out.ops = await surface("/mcp/ops", ops);
out.default = await surface("/mcp", support);

const stdio = new Client({ name: "surfaces-client", version: "1.0.0" });
await stdio.connect(new StdioClientTransport({ command: binary, args: ["capspec", "serve", "--surface", "code", "--surface-name", "support", "--root", project], stderr: "ignore" }));
const action = 'import fs from "@capspec/host/fs";\nexport default async () => fs.list_allowed_directories({});';
const ran = await stdio.callTool({ name: "execute_code", arguments: { code: action } });
out.stdio = { tools: (await stdio.listTools()).tools.map((t) => t.name), isError: ran.isError, error: ran.structuredContent?.error?.message ?? null };
await stdio.close();
console.log(JSON.stringify(out));
