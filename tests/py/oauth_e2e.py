"""`agent-host serve --oauth-issuer` with Python's official MCP client (the
`mcp` package, pinned in requirements.txt) holding an access token. Run by
examples/agent-host/tests/mcp_py.rs, which signs the tokens with the fixture
keys and writes them, the issuer, the resource and the issuer's keys to
<scratch dir>/oauth.json:

    python oauth_e2e.py <agent-host binary> <scratch dir>

Checked here: without a token, a 401 naming the metadata; with a read-only
token, the tools, a read whose receipt names the token's subject, and a
write refused with 403 `insufficient_scope` before it runs; with a token
holding `capspec:write`, the write. The last line printed is a JSON summary.
"""

import asyncio
import json
import os
import sys
from urllib.request import Request, urlopen
from urllib.error import HTTPError

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from mcp_e2e import start


async def main(binary, scratch):
    oauth = json.load(open(os.path.join(scratch, "oauth.json")))
    workspace = os.path.join(scratch, "workspace")
    os.makedirs(workspace, exist_ok=True)
    server, url = start(binary, ["--http", "127.0.0.1:0", "--oauth-issuer", oauth["issuer"], "--resource", oauth["resource"],
                                 "--jwks-file", oauth["jwks"], "--surface", "tools", "--mode", "auto", "--workspace", workspace])
    summary = {}
    try:

        # No token: 401, and where to find out how to get one.
        try:
            urlopen(Request(url, data=b"{}", headers={"Content-Type": "application/json"}, method="POST"), timeout=10)
            raise AssertionError("a request without a token was admitted")
        except HTTPError as e:
            assert e.code == 401, e.code
            challenge = e.headers["WWW-Authenticate"]
            assert 'resource_metadata="' in challenge and 'scope="capspec:read"' in challenge, challenge
            summary["without_token"] = e.code

        args = {"path": "py.txt", "content": "from python\n"}
        async with httpx2.AsyncClient(headers={"Authorization": "Bearer " + oauth["read"]}, timeout=30) as http:
            async with Client(streamable_http_client(url, http_client=http)) as client:
                names = sorted(t.name for t in (await client.list_tools()).tools)
                assert "list_files" in names and "write_file" in names, names
                listed = await client.call_tool("list_files", {})
                assert not listed.is_error, listed
                summary["principal"] = listed.meta["io.capspec/receipts"][0]["principal"]
                try:
                    await client.call_tool("write_file", args)
                    raise AssertionError("a write ran with a read-only token")
                except MCPError as e:  # the client surfaces the HTTP 403 as an error response
                    summary["write_with_read_token"] = "refused"
        # The same request by hand: the 403 and the scope it names.
        call = {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "write_file", "arguments": args}}
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "Authorization": "Bearer " + oauth["read"]}
        try:
            urlopen(Request(url, data=json.dumps(call).encode(), headers=headers, method="POST"), timeout=10)
            raise AssertionError("a write was admitted with a read-only token")
        except HTTPError as e:
            assert e.code == 403, e.code
            assert e.headers["WWW-Authenticate"].startswith('Bearer error="insufficient_scope", scope="capspec:write"'), e.headers["WWW-Authenticate"]
        assert not os.path.exists(os.path.join(workspace, "py.txt")), "the refused write did not run"

        async with httpx2.AsyncClient(headers={"Authorization": "Bearer " + oauth["write"]}, timeout=30) as http:
            async with Client(streamable_http_client(url, http_client=http)) as client:
                written = await client.call_tool("write_file", args)
                assert not written.is_error, written
        assert open(os.path.join(workspace, "py.txt")).read() == "from python\n"
        summary["write_with_write_token"] = "ok"
    finally:
        server.kill()
        server.wait()
    print(json.dumps(summary))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
