"""The notes server of the migration guide (docs/src/migrating-from-rmcp.md),
driven by Python's official MCP client after each way of adopting capspec.
Run by cli/tests/migrate.rs:

    python migrate_e2e.py stdio <command> [args…]   # `cargo capspec serve` over the pinned server
    python migrate_e2e.py http <url> <token>         # the native server's own app

    python migrate_e2e.py stdio <rmcp server> --stdio  # the rmcp server itself

Lists the tools, adds a note, lists it by tag and reads it back through
the tools' old names; prints a JSON summary (with the whole listing) as its
last line.
"""

import asyncio
import json
import sys

import httpx2
import mcp.types as types
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client


def answer(result):
    """What a tool answered, as a client sees it: structured content and
    the text blocks."""
    texts = [c.text for c in result.content if c.type == "text"]
    return {"error": result.is_error, "structured": result.structured_content, "texts": texts}


ASKED = []


async def approve(_ctx, params):
    """The person at the client approves the write capspec asks about."""
    ASKED.append(params.message)
    return types.ElicitResult(action="accept", content={})


async def exercise(client):
    """The tools by the names the server's clients already call
    (kebab-case): add a note, list it by tag and read it."""
    listed = (await client.list_tools()).tools
    listing = sorted((t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listed), key=lambda t: t["name"])
    added = answer(await client.call_tool("add-note", {"title": "migrate", "tag": "docs"}))
    note_id = added["structured"]["noteId"]
    found = answer(await client.call_tool("list-notes", {"tag": "docs", "maxResults": 5}))
    searched = [await search(client, args) for args in SEARCHES]
    read = answer(await client.call_tool("read-note", {"noteId": note_id}))
    missing = await failure(client, "read-note", {"noteId": 999})
    info = client.server_info
    identity = {"name": info.name, "version": info.version, "title": info.title, "instructions": client.instructions}
    return {"listing": listing, "added": added, "listed": found, "searched": searched, "read": read, "missing": missing, "identity": identity, "asked": len(ASKED)}


async def failure(client, tool, args):
    """How a failed call reaches the client: a JSON-RPC error (its code,
    message and data), or an error result (its structured content)."""
    try:
        result = await client.call_tool(tool, args)
    except Exception as error:  # the client raises the JSON-RPC error
        data = getattr(error, "error", None)
        return {"jsonrpc": {"code": data.code, "message": data.message, "data": data.data}} if data is not None else {"raised": str(error)}
    return {"result": answer(result)}


# Calls the rmcp server accepts (its optional fields omitted, where
# schemars wrote `default: null` on a helper's non-null schema; either shape
# of tags; the documented enum) and refuses (a tag that is neither shape, a
# negative count, a value the enum does not have).
SEARCHES = [
    {"query": "mig"},
    {"query": "mig", "tags": ["docs"]},
    {"query": "migrate", "tags": {"docs": True}, "limit": 1, "matching": "exact"},
    {"query": "nothing", "matching": "prefix"},
    {"query": "mig", "tags": "docs"},
    {"query": "mig", "limit": -1},
    {"query": "mig", "matching": "fuzzy"},
]


async def search(client, args):
    """Whether the server took the call, and how many notes it found: a
    refusal is a JSON-RPC error (rmcp) or an error result (capspec)."""
    try:
        result = await client.call_tool("search-notes", args)
    except Exception:  # the client raises a JSON-RPC error
        return {"accepted": False}
    if result.is_error:
        return {"accepted": False}
    return {"accepted": True, "found": len(result.structured_content["data"]["notes"])}


async def main(argv):
    if argv[0] == "stdio":
        async with Client(StdioServerParameters(command=argv[1], args=argv[2:]), elicitation_callback=approve) as client:
            summary = await exercise(client)
    else:
        url, token = argv[1], argv[2]
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http:
            async with Client(streamable_http_client(url, http_client=http), elicitation_callback=approve) as client:
                summary = await exercise(client)
    print(json.dumps(summary, sort_keys=True))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
