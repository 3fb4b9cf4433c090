"""`agent-host serve` with Python's official MCP client (the `mcp` package,
pinned in requirements.txt), over stdio and over Streamable HTTP. Run by
examples/agent-host/tests/mcp_py.rs:

    python mcp_e2e.py <agent-host binary> <scratch dir>

The client negotiates the protocol itself (it probes `server/discover`, so it
speaks 2026-07-28 to capspec). Every check asserts; the last line printed is
a JSON summary.
"""

import asyncio
import json
import os
import subprocess
import sys

import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client


async def exercise(client, workspace):
    """The same checks over either transport; returns the protocol version."""
    tools = await client.list_tools()
    names = {t.name for t in tools.tools}
    assert {"list_files", "read_file", "write_file", "tool_search"} <= names, names
    with open(os.path.join(workspace, "hello.txt"), "w") as f:
        f.write("hi\n")
    read = await client.call_tool("read_file", {"path": "hello.txt"})
    assert not read.is_error, read
    assert read.structured_content["content"] == "hi\n", read
    assert read.meta["io.capspec/receipts"][0]["decision"] == "auto", read.meta
    # Plan mode: a write is refused with a named reason, as text and in _meta.
    write = await client.call_tool("write_file", {"path": "a.txt", "content": "x"})
    assert write.is_error, write
    error = write.meta["io.capspec/error"]
    assert error["error"] == "blocked_in_plan_mode" and error["capability"] == "workspace.write_file", error
    assert json.loads(write.content[0].text) == error
    assert not os.path.exists(os.path.join(workspace, "a.txt"))
    resources = await client.list_resources()
    assert [str(r.uri) for r in resources.resources] == ["capspec://capabilities", "capspec://catalog"], resources
    catalog = json.loads((await client.read_resource("capspec://capabilities")).contents[0].text)
    assert [m["name"] for m in catalog["modules"]] == ["memory", "notes", "plan", "shell", "web", "workspace"]
    return client.session.protocol_version


async def main(binary, scratch):
    summary = {}
    stdio_ws = os.path.join(scratch, "stdio")
    os.makedirs(stdio_ws, exist_ok=True)
    params = StdioServerParameters(command=binary, args=["serve", "--surface", "tools", "--mode", "plan", "--workspace", stdio_ws])
    async with Client(params) as client:
        summary["stdio"] = await exercise(client, stdio_ws)

    http_ws = os.path.join(scratch, "http")
    os.makedirs(http_ws, exist_ok=True)
    token_file = os.path.join(scratch, "token")
    with open(token_file, "w") as f:
        f.write("py-e2e-token\n")
    server = subprocess.Popen(
        [binary, "serve", "--http", "127.0.0.1:0", "--token-file", token_file, "--surface", "tools", "--mode", "plan", "--workspace", http_ws],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = None
        for line in server.stderr:
            if "serving MCP at " in line:
                url = line.split("serving MCP at ", 1)[1].strip()
                break
        assert url, "the server printed no address"
        async with httpx2.AsyncClient(headers={"Authorization": "Bearer py-e2e-token"}) as http:
            async with Client(streamable_http_client(url, http_client=http)) as client:
                summary["http"] = await exercise(client, http_ws)
    finally:
        server.kill()
        server.wait()
    print(json.dumps(summary))


asyncio.run(main(sys.argv[1], sys.argv[2]))
