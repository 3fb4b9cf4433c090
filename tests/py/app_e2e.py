"""The MCP endpoint inside a host's own HTTP app (`agent-host serve --app`:
an axum app with its own `GET /health` and capspec's `capspec::mcp::router`
merged in), driven by Python's official MCP client. Run by
examples/agent-host/tests/mcp_py.rs:

    python app_e2e.py <agent-host binary> <scratch dir>

Prints a JSON summary as its last line.
"""

import asyncio
import json
import os
import subprocess
import sys
from urllib.request import Request, urlopen
from urllib.error import HTTPError

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


async def main(binary, scratch):
    workspace = os.path.join(scratch, "ws")
    os.makedirs(workspace, exist_ok=True)
    token_file = os.path.join(scratch, "token")
    with open(token_file, "w") as f:
        f.write("app-token\n")
    server = subprocess.Popen(
        [binary, "serve", "--http", "127.0.0.1:0", "--token-file", token_file, "--app", "--surface", "tools", "--mode", "plan", "--workspace", workspace],
        stderr=subprocess.PIPE,
        text=True,
    )
    summary = {}
    try:
        url = None
        for line in server.stderr:
            if "serving MCP at " in line:
                url = line.split("serving MCP at ", 1)[1].strip()
                break
        assert url, "the server printed no address"
        base = url.rsplit("/mcp", 1)[0]
        # The app's own route, beside the endpoint.
        with urlopen(f"{base}/health") as answer:
            summary["health"] = answer.read().decode().strip()
        # The endpoint keeps its admission inside the app: no token, 401.
        try:
            urlopen(Request(url, data=b"{}", method="POST", headers={"Content-Type": "application/json"}))
            summary["without_token"] = 200
        except HTTPError as e:
            summary["without_token"] = e.code
        async with httpx2.AsyncClient(headers={"Authorization": "Bearer app-token"}) as http:
            async with Client(streamable_http_client(url, http_client=http)) as client:
                tools = await client.list_tools()
                names = {t.name for t in tools.tools}
                assert {"list_files", "read_file", "write_file", "tool_search"} <= names, names
                with open(os.path.join(workspace, "hello.txt"), "w") as f:
                    f.write("hi from the app\n")
                read = await client.call_tool("read_file", {"path": "hello.txt"})
                assert not read.is_error, read
                summary["read"] = read.structured_content["content"]
                # Plan mode: the gate holds inside the app as it does alone.
                write = await client.call_tool("write_file", {"path": "a.txt", "content": "x"})
                summary["write"] = write.meta["io.capspec/error"]["error"]
                summary["protocol"] = client.session.protocol_version
    finally:
        server.kill()
        server.wait()
    print(json.dumps(summary))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
