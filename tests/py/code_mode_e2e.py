"""Code mode's gate on protocol 2026-07-28 with Python's official MCP client
(the `mcp` package, pinned in requirements.txt, default settings): an action
that asks is resumed by replay (DESIGN §10). Run by
examples/agent-host/tests/mcp_py.rs:

    python code_mode_e2e.py <agent-host binary> <scratch dir>

`agent-host serve --surface code --mode default` answers an action's ask
with `input_required`; the client calls its elicitation callback and
retries; the server runs the action again from the start, answering the
calls it already made from the journal sealed in the `requestState`.
Checked, over stdio and over Streamable HTTP:

- read → write → write → read: two approvals, each write performed once
  (`create_new` writes fail if repeated);
- an approval then a decline: the action gets `permission_denied` as data
  and goes on;
- a file changed by someone else between rounds: the action keeps the
  content it first read, and each of its writes happens once;
- forged, altered, expired, other-code and other-principal states refused
  by name, with nothing written;
- two instances sharing only the token and the state key behind a round
  robin: 20 actions of three asks each, every write exactly once.

Every check asserts; the last line printed is a JSON summary.
"""

import asyncio
import json
import os
import subprocess
import sys
import threading
from http.server import ThreadingHTTPServer

import httpx2
import mcp.types as types
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from mcp_e2e import RoundRobin, altered, refused_by_name, start

APPROVAL = "io.capspec/approval"
STATE_TTL = 3

READ_WRITE_WRITE_READ = """
import workspace from "@capspec/host/workspace";
export default async () => {
  const before = (await workspace.read_file({ path: "src.txt" })).content;
  await workspace.write_file({ path: "one.txt", content: before, mode: "create_new" });
  await workspace.write_file({ path: "two.txt", content: before + "2", mode: "create_new" });
  const listed = (await workspace.list_files({})).entries.map((e) => e.path).sort();
  return { before, listed };
};
"""

APPROVE_THEN_DECLINE = """
import workspace from "@capspec/host/workspace";
export default async () => {
  await workspace.write_file({ path: "yes.txt", content: "y", mode: "create_new" });
  try {
    await workspace.write_file({ path: "no.txt", content: "n", mode: "create_new" });
    return "wrote no.txt";
  } catch (e) {
    return e.code;
  }
};
"""

CHANGED_BETWEEN_ROUNDS = """
import workspace from "@capspec/host/workspace";
export default async () => {
  const first = (await workspace.read_file({ path: "shared.txt" })).content;
  await workspace.write_file({ path: "copy.txt", content: first, mode: "create_new" });
  const again = (await workspace.read_file({ path: "shared.txt" })).content;
  return { first, again };
};
"""


TWO_AT_ONCE = """
import workspace from "@capspec/host/workspace";
export default async () => {
  const [a, b] = await Promise.all([
    workspace.write_file({ path: "pa.txt", content: "a", mode: "create_new" }),
    workspace.write_file({ path: "pb.txt", content: "b", mode: "create_new" }),
  ]);
  return [a.path, b.path];
};
"""

READ_BIG_THEN_WRITE = """
import workspace from "@capspec/host/workspace";
export default async () => {
  const big = (await workspace.read_file({ path: "big.txt" })).content;
  await workspace.write_file({ path: "small.txt", content: String(big.length), mode: "create_new" });
  return big.length;
};
"""


def three_writes(i):
    return f"""
import workspace from "@capspec/host/workspace";
export default async () => {{
  for (const n of [1, 2, 3]) {{
    await workspace.write_file({{ path: "a{i}-" + n + ".txt", content: "{i}." + n + " " + Math.random(), mode: "create_new" }});
  }}
  return (await workspace.list_files({{}})).entries.filter((e) => e.path.startsWith("a{i}-")).length;
}};
"""


def answering(answers, asked, before_answer=None):
    """Answers the elicitations in order with `answers` (then accepts)."""

    async def elicit(_ctx, params):
        asked.append(params.message)
        if before_answer:
            before_answer(len(asked))
        action = answers[len(asked) - 1] if len(asked) <= len(answers) else "accept"
        return types.ElicitResult(action=action, content={} if action == "accept" else None)

    return elicit


def report(result):
    assert result.structured_content is not None, result
    return result.structured_content


def decisions(receipts):
    return [(r["capability"], r["decision"], r["status"]) for r in receipts]


async def actions(connect, workspace):
    """The three actions, each with a fresh client answering as the case needs."""
    out = {}
    with open(os.path.join(workspace, "src.txt"), "w") as f:
        f.write("source")
    asked = []
    async with connect(answering([], asked)) as client:
        result = await client.call_tool("execute_code", {"code": READ_WRITE_WRITE_READ})
        assert not result.is_error, result
        r = report(result)
        assert r["result"]["before"] == "source", r
        assert r["result"]["listed"] == ["one.txt", "src.txt", "two.txt"], r
        assert decisions(r["receipts"]) == [
            ("workspace.read_file", "auto", "ok"),
            ("workspace.write_file", "approved", "ok"),
            ("workspace.write_file", "approved", "ok"),
            ("workspace.list_files", "auto", "ok"),
        ], r["receipts"]
        assert all(x["principal"] in ("local", "token") for x in r["receipts"]), r["receipts"]
    assert len(asked) == 2 and all("workspace.write_file" in m for m in asked), asked
    # Every prompt names who asks: `local` on stdio, `token` over HTTP.
    assert all(m.startswith("`local` asks") or m.startswith("`token` asks") for m in asked), asked
    assert open(os.path.join(workspace, "one.txt")).read() == "source"
    assert open(os.path.join(workspace, "two.txt")).read() == "source2"
    out["read_write_write_read"] = len(asked)

    asked = []
    async with connect(answering(["accept", "decline"], asked)) as client:
        result = await client.call_tool("execute_code", {"code": APPROVE_THEN_DECLINE})
        assert not result.is_error, result
        r = report(result)
        assert r["result"] == "permission_denied", r
        assert decisions(r["receipts"]) == [("workspace.write_file", "approved", "ok"), ("workspace.write_file", "denied", "refused")], r["receipts"]
    assert len(asked) == 2, asked
    assert open(os.path.join(workspace, "yes.txt")).read() == "y"
    assert not os.path.exists(os.path.join(workspace, "no.txt"))
    out["approve_then_decline"] = r["result"]

    shared = os.path.join(workspace, "shared.txt")
    with open(shared, "w") as f:
        f.write("original")

    def someone_else_writes(_n):
        with open(shared, "w") as f:
            f.write("changed")

    asked = []
    async with connect(answering([], asked, someone_else_writes)) as client:
        result = await client.call_tool("execute_code", {"code": CHANGED_BETWEEN_ROUNDS})
        assert not result.is_error, result
        r = report(result)
        # The first read is answered from the journal: the action keeps what
        # it first saw; the read after the write is new, and sees the change.
        assert r["result"] == {"first": "original", "again": "changed"}, r
        assert [x["capability"] for x in r["receipts"]].count("workspace.write_file") == 1, r["receipts"]
    assert len(asked) == 1, asked
    assert open(os.path.join(workspace, "copy.txt")).read() == "original"
    out["changed_between_rounds"] = r["result"]

    # Two asks pending at once (Promise.all) are asked one after the other.
    asked = []
    async with connect(answering([], asked)) as client:
        result = await client.call_tool("execute_code", {"code": TWO_AT_ONCE})
        assert not result.is_error, result
        r = report(result)
        assert decisions(r["receipts"]) == [("workspace.write_file", "approved", "ok")] * 2, r["receipts"]
    assert len(asked) == 2, asked
    assert open(os.path.join(workspace, "pa.txt")).read() == "a" and open(os.path.join(workspace, "pb.txt")).read() == "b"
    out["two_at_once"] = len(asked)
    return out


async def bounds(binary, scratch, key_file):
    """Past --max-rounds or --max-state-bytes the action ends limit_exceeded, naming the bound."""
    out = {}
    workspace = os.path.join(scratch, "bounds")
    os.makedirs(workspace, exist_ok=True)
    with open(os.path.join(workspace, "src.txt"), "w") as f:
        f.write("source")
    one_round = StdioServerParameters(command=binary, args=["serve", *serve_args(workspace, key_file, "--max-rounds", "1")])
    asked = []
    async with Client(one_round, elicitation_callback=answering([], asked)) as client:
        result = await client.call_tool("execute_code", {"code": READ_WRITE_WRITE_READ.replace("one.txt", "r1.txt").replace("two.txt", "r2.txt")})
    assert result.is_error, result
    error = report(result)["error"]
    assert error["kind"] == "limit" and error["limit"] == "rounds" and "--max-rounds 1" in error["message"], error
    assert len(asked) == 1, asked
    assert os.path.exists(os.path.join(workspace, "r1.txt")) and not os.path.exists(os.path.join(workspace, "r2.txt"))
    out["rounds"] = error["message"]

    with open(os.path.join(workspace, "big.txt"), "w") as f:
        f.write("x" * 20000)
    small_state = StdioServerParameters(command=binary, args=["serve", *serve_args(workspace, key_file, "--max-state-bytes", "4096")])
    asked = []
    async with Client(small_state, elicitation_callback=answering([], asked)) as client:
        result = await client.call_tool("execute_code", {"code": READ_BIG_THEN_WRITE})
    assert result.is_error, result
    error = report(result)["error"]
    assert error["kind"] == "limit" and error["limit"] == "state_bytes" and "--max-state-bytes 4096" in error["message"], error
    assert asked == [], "the round ended before asking"
    assert not os.path.exists(os.path.join(workspace, "small.txt"))
    out["state_bytes"] = error["message"]
    return out


REFUSED = APPROVE_THEN_DECLINE.replace("yes.txt", "t.txt").replace("no.txt", "u.txt")


async def refusals(session, workspace, other_principal):
    """Drive the rounds by hand: every tampered state is refused before anything runs."""
    code = REFUSED
    stale = await session.call_tool("execute_code", {"code": code}, allow_input_required=True)
    assert isinstance(stale, types.InputRequiredResult), stale
    await asyncio.sleep(STATE_TTL + 1.5)
    first = await session.call_tool("execute_code", {"code": code}, allow_input_required=True)
    assert isinstance(first, types.InputRequiredResult), first
    assert APPROVAL in first.input_requests, first
    state = first.request_state
    accept = {APPROVAL: types.ElicitResult(action="accept", content={})}
    cases = [
        ("forged", {"code": code}, "cs1." + "A" * 80),
        ("altered", {"code": code}, altered(state)),
        ("other_code", {"code": code + "\n// another action"}, state),
        ("expired", {"code": code}, stale.request_state),
        # The same action, the same key, issued to `local` on a stdio server.
        ("other_principal", {"code": code}, await other_principal()),
    ]
    refused = await refused_by_name(session, "execute_code", cases, accept)
    assert "forged or altered" in refused["forged"] and "forged or altered" in refused["altered"], refused
    assert "another action" in refused["other_code"], refused
    assert "expired" in refused["expired"], refused
    assert "issued to `local`, not to `token`" in refused["other_principal"], refused
    assert not os.path.exists(os.path.join(workspace, "t.txt")), "no refused round ran the write"
    done = await session.call_tool("execute_code", {"code": code}, input_responses=accept, request_state=state, allow_input_required=True)
    # The first write ran; the second asks now.
    assert isinstance(done, types.InputRequiredResult), done
    assert open(os.path.join(workspace, "t.txt")).read() == "y"
    return sorted(refused)


def serve_args(workspace, key_file, *extra):
    return ["--surface", "code", "--mode", "default", "--state-key-file", key_file, "--state-ttl", str(STATE_TTL), "--workspace", workspace, *extra]


async def main(binary, scratch):
    summary = {}
    key_file = os.path.join(scratch, "state-key")
    with open(key_file, "wb") as f:
        f.write(os.urandom(32))
    token_file = os.path.join(scratch, "token")
    with open(token_file, "w") as f:
        f.write("code-mode-token\n")

    # stdio
    stdio_ws = os.path.join(scratch, "stdio")
    os.makedirs(stdio_ws, exist_ok=True)
    params = StdioServerParameters(command=binary, args=["serve", *serve_args(stdio_ws, key_file)])

    def over_stdio(elicit):
        return Client(params, elicitation_callback=elicit)

    summary["stdio"] = await actions(over_stdio, stdio_ws)

    async def issued_to_local():
        async with Client(params, elicitation_callback=answering([], [])) as client:
            assert client.session.protocol_version == "2026-07-28", client.session.protocol_version
            first = await client.session.call_tool("execute_code", {"code": REFUSED}, allow_input_required=True)
            assert isinstance(first, types.InputRequiredResult), first
            return first.request_state

    # Streamable HTTP, same key: a state issued on stdio (to `local`) is
    # refused for the token's principal.
    http_ws = os.path.join(scratch, "http")
    os.makedirs(http_ws, exist_ok=True)
    server, url = start(binary, serve_args(http_ws, key_file, "--http", "127.0.0.1:0", "--token-file", token_file))
    try:

        def over_http(elicit):
            return _HttpClient(url, elicit)

        summary["http"] = await actions(over_http, http_ws)
        async with _HttpClient(url, answering([], [])) as client:
            summary["refused"] = await refusals(client.session, http_ws, issued_to_local)
    finally:
        server.kill()
        server.wait()

    summary["bounds"] = await bounds(binary, scratch, key_file)
    summary["scale_out"] = await scale_out(binary, scratch, key_file, token_file)
    print(json.dumps(summary))


class _HttpClient:
    """A `Client` over Streamable HTTP with the bearer token."""

    def __init__(self, url, elicit):
        self.url, self.elicit = url, elicit

    async def __aenter__(self):
        self.http = httpx2.AsyncClient(headers={"Authorization": "Bearer code-mode-token"}, timeout=60)
        await self.http.__aenter__()
        self.client = Client(streamable_http_client(self.url, http_client=self.http), elicitation_callback=self.elicit)
        return await self.client.__aenter__()

    async def __aexit__(self, *exc):
        await self.client.__aexit__(*exc)
        await self.http.__aexit__(*exc)


async def scale_out(binary, scratch, key_file, token_file):
    """Two instances, one token and one state key, behind round robin."""
    workspace = os.path.join(scratch, "scale")
    os.makedirs(workspace, exist_ok=True)
    servers = [start(binary, serve_args(workspace, key_file, "--http", "127.0.0.1:0", "--token-file", token_file)) for _ in range(2)]
    RoundRobin.targets = [url for _, url in servers]
    RoundRobin.landed = {}
    proxy = ThreadingHTTPServer(("127.0.0.1", 0), RoundRobin)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{proxy.server_address[1]}/mcp"
        asked = []
        async with _HttpClient(url, answering([], asked)) as client:
            for i in range(20):
                result = await client.call_tool("execute_code", {"code": three_writes(i)})
                assert not result.is_error, (i, result)
                r = report(result)
                assert r["result"] == 3, (i, r)
                writes = [x for x in r["receipts"] if x["capability"] == "workspace.write_file"]
                assert [(x["decision"], x["status"]) for x in writes] == [("approved", "ok")] * 3, (i, r["receipts"])
        assert len(asked) == 60, len(asked)
        files = sorted(f for f in os.listdir(workspace) if f.startswith("a"))
        assert len(files) == 60, files
        assert len(RoundRobin.landed) == 2 and all(n >= 40 for n in RoundRobin.landed.values()), RoundRobin.landed
        return {"actions": 20, "writes": len(files), "requests_per_instance": sorted(RoundRobin.landed.values())}
    finally:
        proxy.shutdown()
        for server, _ in servers:
            server.kill()
            server.wait()


asyncio.run(main(sys.argv[1], sys.argv[2]))
