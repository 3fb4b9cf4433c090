// A 2025-11-25 session whose caller's view changes (DESIGN §10): the
// official TypeScript SDK's client against `agent-host serve --oauth-issuer
// --policies`, run by examples/agent-host/tests/mcp_py.rs, which writes the
// policies and signs the tokens (tests/py/views_e2e.py's views.json):
//
//   node views-client.mjs <agent-host binary> <scratch dir>
//
// It lists the tools twice with a token of the group `support`, then, in
// the same session, with a refreshed token of the same person now in `ops`,
// and prints one JSON line: the server's `tools.listChanged`, the three
// lists, and the `notifications/tools/list_changed` it was sent before and
// after the change.
import { readFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { serve } from "./serving.mjs";

const [binary, scratch] = process.argv.slice(2);
const views = JSON.parse(readFileSync(join(scratch, "views.json"), "utf8"));
const workspace = join(scratch, "ts-ws");
mkdirSync(workspace, { recursive: true });
const { child, url } = await serve(binary, ["--http", "127.0.0.1:0", "--oauth-issuer", views.issuer, "--resource", views.resource,
  "--jwks-file", views.jwks, "--surface", "tools", "--mode", "auto", "--workspace", workspace, "--policies", views.policies]);
try {
  const headers = { authorization: `Bearer ${views.support}` };
  const client = new Client({ name: "views-client", version: "1.0.0" });
  let notified = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => { notified += 1; });
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  await client.connect(transport);
  const names = async () => (await client.listTools()).tools.map((t) => t.name);
  const before = await names();
  const again = await names();
  await new Promise((resolve) => setTimeout(resolve, 200));
  const unchanged = notified;
  headers.authorization = `Bearer ${views.support_now_ops}`;
  const after = await names();
  // The notification travels on the session's own stream; give it a moment.
  for (let i = 0; i < 50 && notified === unchanged; i++) await new Promise((resolve) => setTimeout(resolve, 100));
  const listChanged = client.getServerCapabilities()?.tools?.listChanged ?? false;
  console.log(JSON.stringify({ protocol: transport.protocolVersion, listChanged, before, again, after, unchanged, notified }));
  await client.close();
} finally {
  child.kill();
}
