"""The notes server of the migration guide (docs/src/migrating-from-rmcp.md),
driven by Python's official MCP client after each way of adopting capspec.
Run by cli/tests/migrate.rs:

    python migrate_e2e.py stdio <command> [args…]   # `cargo capspec serve` over the pinned server
    python migrate_e2e.py http <url> <token>         # the native server's own app

Adds a note, lists it by tag and reads it back through the tools; prints a
JSON summary as its last line.
"""

import asyncio
import json
import sys

import httpx2
import mcp.types as types
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client


def payload(result):
    """The tool's value: structured content, or JSON text (an rmcp tool
    without an output schema answers with text, which capspec passes on
    as `{"result": text}`)."""
    assert not result.is_error, result
    value = result.structured_content
    if value is None:
        value = result.content[0].text
    if isinstance(value, dict) and list(value) == ["result"]:
        value = value["result"]
    return json.loads(value) if isinstance(value, str) else value


ASKED = []


async def approve(_ctx, params):
    """The person at the client approves the write capspec asks about."""
    ASKED.append(params.message)
    return types.ElicitResult(action="accept", content={})


async def exercise(client):
    tools = sorted(t.name for t in (await client.list_tools()).tools)
    added = payload(await client.call_tool("add_note", {"title": "migrate", "tag": "docs"}))
    listed = payload(await client.call_tool("list_notes", {"tag": "docs", "maxResults": 5}))
    read = payload(await client.call_tool("read_note", {"noteId": added["noteId"]}))
    return {"tools": tools, "added": added, "listed": listed, "read": read, "asked": len(ASKED)}


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
