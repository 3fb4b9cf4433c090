"""What each caller sees (DESIGN §10): `agent-host serve --oauth-issuer
--policies` with Python's official MCP client (the `mcp` package, pinned in
requirements.txt), two access tokens whose groups differ. Run by
examples/agent-host/tests/mcp_py.rs, which writes the policies, signs the
tokens with the fixture keys and writes them, the issuer, the resource and
the issuer's keys to <scratch dir>/views.json:

    python views_e2e.py <agent-host binary> <scratch dir>

The policies (written by the test): `shell.*` only for the group `ops`;
`notes.delete_note` for nobody; writes in plan mode for nobody (hides
nothing: some mode allows them). Checked here, on the tools surface: each
token lists its own tools, the same ones in the same order each time, and a
capability left out is answered exactly as a name that never existed; on
the code surface: `execute_code`'s description and the catalog resource per
token, and an action of the support token that lists and calls `shell`. The
last line printed is a JSON summary.
"""

import asyncio
import json
import os
import sys

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from mcp_e2e import start

# What a caller shown every module runs (it imports `shell`).
ACTION = """
import shell from "@capspec/host/shell";
export default async () => {
  const listed = capabilities().map((c) => c.module + "." + c.name);
  const found = (await capabilities.search("run a shell command", 10)).map((m) => m.name);
  let called;
  try {
    await shell.which_program({ program: "sh" });
    called = "ran";
  } catch (e) {
    called = e.code + ": " + e.message;
  }
  return { shell: listed.filter((n) => n.startsWith("shell.")), notes: listed.filter((n) => n.startsWith("notes.")), found, called };
};
"""

# What a caller not shown `shell` runs: the same, with no import of it.
ACTION_WITHOUT_SHELL = """
export default async () => {
  const listed = capabilities().map((c) => c.module + "." + c.name);
  const found = (await capabilities.search("run a shell command", 10)).map((m) => m.name);
  return { shell: listed.filter((n) => n.startsWith("shell.")), notes: listed.filter((n) => n.startsWith("notes.")), found };
};
"""

# An action that imports one module, hidden or unknown.
IMPORT = """import m from "@capspec/host/{module}";
export default async () => Object.keys(m).length;
"""


def answer_text(result):
    """An execute_code answer as the caller reads it."""
    return "\n".join(c.text for c in result.content if c.type == "text")


def serve(binary, scratch, views, surface):
    """agent-host serving `surface` behind the issuer, with the test's policies."""
    workspace = os.path.join(scratch, surface + "-ws")
    os.makedirs(workspace, exist_ok=True)
    return start(binary, ["--http", "127.0.0.1:0", "--oauth-issuer", views["issuer"], "--resource", views["resource"],
                          "--jwks-file", views["jwks"], "--surface", surface, "--mode", "auto", "--workspace", workspace,
                          "--policies", views["policies"]])


async def as_caller(url, token, work, mode="auto"):
    async with httpx2.AsyncClient(headers={"Authorization": "Bearer " + token}, timeout=30) as http:
        async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:
            return await work(client)


async def refusal(client, name):
    try:
        await client.call_tool(name, {"program": "sh"})
    except MCPError as e:
        return str(e)
    raise AssertionError(f"{name} was called")


async def tools_surface(binary, scratch, views):
    server, url = serve(binary, scratch, views, "tools")
    out = {}
    try:
        for who in ["support", "ops", "support_read"]:
            async def work(client):
                listed = await client.list_tools()
                first = [t.name for t in listed.tools]
                again = [t.name for t in (await client.list_tools()).tools]
                assert first == again, (first, again)
                seen = {"tools": first, "cache_scope": listed.cache_scope}
                if who == "support":
                    # Left out, and never there: the same answer but the name.
                    hidden = await refusal(client, "which_program")
                    unknown = await refusal(client, "no_such_tool")
                    seen["hidden_call"] = hidden
                    seen["same_as_unknown"] = hidden.replace("which_program", "NAME") == unknown.replace("no_such_tool", "NAME")
                    seen["catalog"] = (await client.read_resource("capspec://catalog")).contents[0].text
                    caps = json.loads((await client.read_resource("capspec://capabilities")).contents[0].text)
                    seen["modules"] = [m["name"] for m in caps["modules"]]
                if who == "ops":
                    ran = await client.call_tool("which_program", {"program": "sh"})
                    seen["ops_call"] = "error" if ran.is_error else "ok"
                return seen
            out[who] = await as_caller(url, views[who], work)
    finally:
        server.kill()
        server.wait()
    return out


async def code_surface(binary, scratch, views):
    server, url = serve(binary, scratch, views, "code")
    out = {}
    try:
        for who in ["support", "ops"]:
            async def work(client):
                tools = (await client.list_tools()).tools
                described = next(t.description for t in tools if t.name == "execute_code")
                ran = await client.call_tool("execute_code", {"code": ACTION if who == "ops" else ACTION_WITHOUT_SHELL})
                assert not ran.is_error, ran
                # Hidden is unknown: the import of a module the caller is not
                # shown is refused at load as an unknown one is.
                hidden = await client.call_tool("execute_code", {"code": IMPORT.format(module="shell")})
                unknown = await client.call_tool("execute_code", {"code": IMPORT.format(module="ghost")})
                imports = {"hidden": [hidden.is_error, answer_text(hidden)], "unknown": [unknown.is_error, answer_text(unknown)]}
                return {"description": described, "action": ran.structured_content["result"], "imports": imports, "protocol": client.protocol_version}
            out[who] = await as_caller(url, views[who], work)
        # The same on 2025-11-25.
        async def legacy(client):
            hidden = await client.call_tool("execute_code", {"code": IMPORT.format(module="shell")})
            unknown = await client.call_tool("execute_code", {"code": IMPORT.format(module="ghost")})
            return {"hidden": [hidden.is_error, answer_text(hidden)], "unknown": [unknown.is_error, answer_text(unknown)], "protocol": client.protocol_version}
        out["support_legacy"] = await as_caller(url, views["support"], legacy, mode="legacy")
    finally:
        server.kill()
        server.wait()
    return out


async def main(binary, scratch):
    views = json.load(open(os.path.join(scratch, "views.json")))
    summary = {"tools": await tools_surface(binary, scratch, views), "code": await code_surface(binary, scratch, views)}
    print(json.dumps(summary))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
