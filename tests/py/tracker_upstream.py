"""A per-user upstream with its own authorization server, as teams run
them: FastMCP (PyPI `fastmcp`, on the MCP Python SDK's auth module) serving
one read-only tool, `search_issues`, behind its in-memory OAuth provider with dynamic
registration and the SDK's scope checks on (`valid_scopes` and
`required_scopes` `tracker`): a client registered without the scope
`tracker` is refused when it asks for it (`validate_scope`), and nothing
here fills in a registration's scope. Access tokens live
CAPSPEC_FIXTURE_TTL seconds (default 3), so a refresh is seen.

Prints one JSON line on stdout: {"mcp": URL, "stats": URL}. GET the stats
URL for what the server saw: the clients registered (id, scope), the
refreshes, and each call's token tag.
"""

import hashlib
import json
import os
import socket
import sys

import fastmcp.server.auth.providers.in_memory as in_memory
from fastmcp import FastMCP
from fastmcp.server.auth.providers.in_memory import InMemoryOAuthProvider
from fastmcp.server.dependencies import get_access_token
from mcp.server.auth.settings import ClientRegistrationOptions
from starlette.requests import Request
from starlette.responses import JSONResponse

in_memory.DEFAULT_ACCESS_TOKEN_EXPIRY_SECONDS = int(os.environ.get("CAPSPEC_FIXTURE_TTL", "3"))

with socket.socket() as probe:
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
base = f"http://127.0.0.1:{port}"

calls: list[str] = []
refreshes = 0


class Provider(InMemoryOAuthProvider):
    async def exchange_refresh_token(self, client, refresh_token, scopes):
        global refreshes
        refreshes += 1
        return await super().exchange_refresh_token(client, refresh_token, scopes)


provider = Provider(
    base_url=base,
    client_registration_options=ClientRegistrationOptions(enabled=True, valid_scopes=["tracker"]),
    required_scopes=["tracker"],
)
server = FastMCP("tracker", auth=provider)


def tag(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()[:12]


@server.tool(annotations={"readOnlyHint": True})
def search_issues(query: str) -> str:
    """Search the issues; says which token asked."""
    token = get_access_token()
    calls.append(tag(token.token))
    return f"searched {query!r} as {tag(token.token)}"


@server.custom_route("/stats", methods=["GET"])
async def stats(_: Request) -> JSONResponse:
    clients = [{"id": c.client_id, "scope": c.scope} for c in provider.clients.values()]
    return JSONResponse({"clients": clients, "refreshes": refreshes, "calls": calls})


print(json.dumps({"mcp": f"{base}/mcp", "stats": f"{base}/stats"}), flush=True)
sys.stdout = sys.stderr
server.run(transport="http", host="127.0.0.1", port=port, show_banner=False, log_level="warning")
