// A person's MCP client for a `per-user` upstream on 2026-07-28
// (cli/tests/upstream_oauth.rs): the official TypeScript SDK v2 client
// (@modelcontextprotocol/client), pinned to that revision, declaring URL
// elicitation, over Streamable HTTP with a bearer token.
//
//   node per-user-client-v2.mjs MCP_URL TOKEN CONTROL_URL LOGIN TOOL ARGUMENTS_JSON [decline]
//
// The server's `input_required` asks it to open a URL: the SDK calls the
// elicitation handler, which plays the person's browser there (the
// fixture's `POST CONTROL/walk`, signing in as LOGIN) and accepts, and the
// SDK retries the call (with `decline`, the person declines instead, and
// the SDK retries with that answer). Prints one JSON line: the elicitations it was given
// (with where the browser ended) and the call's result.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const [mcpUrl, token, control, login, tool, args, answer] = process.argv.slice(2);
const elicitations = [];
const client = new Client({ name: "per-user-client-v2", version: "1.0.0" }, { capabilities: { elicitation: { url: {} } }, versionNegotiation: { mode: { pin: "2026-07-28" } } });
client.setRequestHandler("elicitation/create", async (request) => {
  const { mode, message, url } = request.params;
  const asked = { mode, message, url };
  elicitations.push(asked);
  if (answer === "decline") return { action: "decline" };
  const response = await fetch(`${control}/walk`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ url, login }) });
  asked.walked = await response.json();
  return { action: "accept" };
});
await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
const result = await client.callTool({ name: tool, arguments: JSON.parse(args) });
console.log(JSON.stringify({ protocol: client.getNegotiatedProtocolVersion(), elicitations, result }));
await client.close();
