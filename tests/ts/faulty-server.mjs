// A stdio MCP server written with the official TypeScript SDK for
// capspec's upstream fault tests (cli/tests/upstream.rs): `echo` answers,
// `hang` never does (and writes CAPSPEC_FIXTURE_CANCELLED when the client
// cancels it), `exit` ends the process in the middle of the call, `fail`
// answers with an error result, `picture` with an image beside its text.
import { writeFileSync } from "node:fs";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const server = new McpServer({ name: "faulty", version: "1.0.0" });
const read = { readOnlyHint: true, openWorldHint: false };
server.registerTool("echo", { description: "Say it back.", inputSchema: { text: z.string() }, annotations: read }, async ({ text }) => ({
  content: [{ type: "text", text }],
}));
server.registerTool("hang", { description: "Never answer.", inputSchema: {}, annotations: read }, async (_args, extra) =>
  new Promise((resolve) => {
    extra.signal.addEventListener("abort", () => {
      if (process.env.CAPSPEC_FIXTURE_CANCELLED) writeFileSync(process.env.CAPSPEC_FIXTURE_CANCELLED, "cancelled");
      resolve({ content: [{ type: "text", text: "cancelled" }] });
    });
  }),
);
server.registerTool("exit", { description: "Exit mid-call.", inputSchema: {}, annotations: read }, async () => {
  // Coloured, as a real server's logger writes it.
  process.stderr.write("\x1b[31mfaulty: exiting mid-call\x1b[0m\n");
  process.exit(7);
});
server.registerTool("fail", { description: "Answer with an error result.", inputSchema: {}, annotations: read }, async () => ({
  content: [{ type: "text", text: "the fixture fails on purpose" }],
  isError: true,
}));
server.registerTool("picture", { description: "A one-pixel PNG.", inputSchema: {}, annotations: read }, async () => ({
  content: [
    { type: "text", text: "one pixel" },
    { type: "image", mimeType: "image/png", data: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==" },
  ],
}));
await server.connect(new StdioServerTransport());
