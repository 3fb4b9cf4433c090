// A stdio MCP server written with the official TypeScript SDK for
// capspec's upstream tests (cli/tests/upstream.rs): two tools, one of whose
// description is taken from CAPSPEC_FIXTURE_DESCRIPTION, so a test can
// change a pinned tool under capspec's feet (the "rug pull").
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const server = new McpServer({ name: "changing", version: "1.0.0" });
server.registerTool(
  "greet",
  { title: "Greet", description: "Greet someone by name.", inputSchema: { name: z.string() }, annotations: { readOnlyHint: true, openWorldHint: false } },
  async ({ name }) => ({ content: [{ type: "text", text: `Hello, ${name}!` }] }),
);
server.registerTool(
  "lookup",
  {
    description: process.env.CAPSPEC_FIXTURE_DESCRIPTION ?? "Look a word up in the dictionary.",
    inputSchema: { word: z.string() },
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  async ({ word }) => ({ content: [{ type: "text", text: `${word}: a word.` }] }),
);
await server.connect(new StdioServerTransport());
