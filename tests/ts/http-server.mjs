// A Streamable HTTP MCP server written with the official TypeScript SDK for
// capspec's upstream tests (cli/tests/upstream.rs): stateless, on
// 127.0.0.1 at a port the system picks (printed on stderr as
// `listening on http://127.0.0.1:PORT/mcp`), refusing any request without
// `Authorization: Bearer $CAPSPEC_FIXTURE_TOKEN`. One tool, `shout`.
// With CAPSPEC_FIXTURE_TLS_DIR set, it serves HTTPS with that directory's
// server.pem and server.key (`listening on https://…`).
import { readFileSync } from "node:fs";
import { createServer as createHttp } from "node:http";
import { createServer as createHttps } from "node:https";
import { join } from "node:path";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

const token = process.env.CAPSPEC_FIXTURE_TOKEN;

function server() {
  const mcp = new McpServer({ name: "remote", version: "1.0.0" });
  mcp.registerTool(
    "shout",
    { description: "Say it louder.", inputSchema: { text: z.string() }, annotations: { readOnlyHint: true, openWorldHint: false } },
    async ({ text }) => ({ content: [{ type: "text", text: text.toUpperCase() }] }),
  );
  return mcp;
}

const tls = process.env.CAPSPEC_FIXTURE_TLS_DIR;
const handle = async (req, res) => {
  if (req.headers.authorization !== `Bearer ${token}`) {
    res.writeHead(401).end("unauthorized");
    return;
  }
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : undefined;
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  const mcp = server();
  res.on("close", () => {
    transport.close();
    mcp.close();
  });
  await mcp.connect(transport);
  await transport.handleRequest(req, res, body);
};
const http = tls
  ? createHttps({ cert: readFileSync(join(tls, "server.pem")), key: readFileSync(join(tls, "server.key")) }, handle)
  : createHttp(handle);
http.listen(0, "127.0.0.1", () => {
  process.stderr.write(`listening on ${tls ? "https" : "http"}://127.0.0.1:${http.address().port}/mcp\n`);
});
