"""Several `agent-host serve` processes on one serve store, each under
Python's official MCP client (the `mcp` package, pinned in
requirements.txt), as a developer with two editors and a CLI agent open in
one project has them. Run by examples/agent-host/tests/mcp_py.rs:

    python audit_e2e.py <agent-host binary> <scratch dir>

The scratch directory holds `ws/hello.txt`, `state.key` and the store
`store.db` (made by the first server to start). Checked here: two tools
surfaces and a code surface, started together over stdio with the default
instance name, all serve every call at once; then the gate's decisions on
2026-07-28 (an approved write, a declined one, and one from a client that
cannot be asked). The Rust side reads the store: one chain per process,
each verifying, and the decisions as recorded. The last line printed is a
JSON summary.
"""

import asyncio
import json
import os
import sys

import mcp.types as types
from mcp import Client, StdioServerParameters

CALLS = 20


def answering(action):
    async def elicit(_ctx, params):
        return types.ElicitResult(action=action, content={} if action == "accept" else None)

    return elicit


def server(binary, scratch, surface, mode="default"):
    store = "sqlite:" + os.path.join(scratch, "store.db")
    args = ["serve", "--surface", surface, "--mode", mode, "--store", store, "--state-key-file", os.path.join(scratch, "state.key"), "--workspace", os.path.join(scratch, "ws")]
    return StdioServerParameters(command=binary, args=args)


async def reads(client, tool):
    """CALLS reads of hello.txt, a few at a time; each must succeed."""
    ok = 0
    for _ in range(CALLS // 4):
        if tool == "read_file":
            results = await asyncio.gather(*[client.call_tool("read_file", {"path": "hello.txt"}) for _ in range(4)])
        else:
            code = 'import workspace from "@capspec/host/workspace"; export default async () => (await workspace.read_file({ path: "hello.txt" })).content;'
            results = await asyncio.gather(*[client.call_tool("execute_code", {"code": code}) for _ in range(4)])
        for result in results:
            assert not result.is_error, result
            ok += 1
    return ok


async def side_by_side(binary, scratch):
    """Two tools surfaces and a code surface, all at once, one store."""
    async with Client(server(binary, scratch, "tools")) as a, Client(server(binary, scratch, "tools")) as b, Client(server(binary, scratch, "code")) as c:
        served = await asyncio.gather(reads(a, "read_file"), reads(b, "read_file"), reads(c, "execute_code"))
    return {"tools_a": served[0], "tools_b": served[1], "code": served[2]}


async def decisions(binary, scratch):
    """Default mode on 2026-07-28: a write asks through input_required."""
    out = {}
    async with Client(server(binary, scratch, "tools"), elicitation_callback=answering("accept")) as client:
        result = await client.call_tool("write_file", {"path": "yes.txt", "content": "yes"})
        assert not result.is_error, result
        out["approved"] = result.meta["io.capspec/receipts"][0]["decision"]
    async with Client(server(binary, scratch, "tools"), elicitation_callback=answering("decline")) as client:
        result = await client.call_tool("write_file", {"path": "no.txt", "content": "no"})
        assert result.is_error, result
        out["declined"] = result.meta["io.capspec/receipts"][0]["decision"]
    async with Client(server(binary, scratch, "tools")) as client:
        result = await client.call_tool("write_file", {"path": "never.txt", "content": "never"})
        assert result.is_error, result
        receipt = result.meta["io.capspec/receipts"][0]
        out["cannot_ask"] = [receipt["decision"], receipt.get("reason")]
    return out


async def main(binary, scratch):
    summary = {"served": await side_by_side(binary, scratch), "decisions": await decisions(binary, scratch)}
    print(json.dumps(summary))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
