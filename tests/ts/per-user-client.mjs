// A person's MCP client for a `per-user` upstream (cli/tests/upstream_oauth.rs):
// the official TypeScript SDK's client, declaring URL elicitation, on
// 2025-11-25 over Streamable HTTP with a bearer token.
//
//   node per-user-client.mjs MCP_URL TOKEN CONTROL_URL LOGIN TOOL ARGUMENTS_JSON [decline|nourl]
//
// When the server asks it to open a URL (`elicitation/create`, mode `url`),
// it plays the person's browser there (the fixture's `POST CONTROL/walk`,
// signing in as LOGIN) and accepts; with `decline` it declines instead;
// with `nourl` it declares no elicitation at all.
// It calls TOOL with ARGUMENTS_JSON and prints one JSON line: the elicitations it
// was given (with where the browser ended), the elicitation ids the server
// said were complete, and the call's result, or the JSON-RPC error it
// ended with ({code, message, data}).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema, ElicitationCompleteNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const [mcpUrl, token, control, login, tool, args, mode] = process.argv.slice(2);
const decline = mode === "decline";
const elicitations = [];
const completed = [];
const client = new Client({ name: "per-user-client", version: "1.0.0" }, { capabilities: mode === "nourl" ? {} : { elicitation: { url: {} } } });
if (mode !== "nourl") client.setRequestHandler(ElicitRequestSchema, async (request) => {
  const { mode, message, url, elicitationId } = request.params;
  const asked = { mode, message, url, elicitationId };
  elicitations.push(asked);
  if (decline) return { action: "decline" };
  const response = await fetch(`${control}/walk`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ url, login }) });
  asked.walked = await response.json();
  return { action: "accept" };
});
client.setNotificationHandler(ElicitationCompleteNotificationSchema, (notification) => {
  completed.push(notification.params.elicitationId);
});
const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
await client.connect(transport);
let result = null;
let error = null;
try {
  result = await client.callTool({ name: tool, arguments: JSON.parse(args) }, undefined, { timeout: 120_000 });
} catch (e) {
  error = { code: e.code, message: e.message, data: e.data };
}
// A notification sent just before the result may still be on its way.
await new Promise((resolve) => setTimeout(resolve, 200));
console.log(JSON.stringify({ protocol: transport.protocolVersion, elicitations, completed, result, error }));
await client.close();
