"""`agent-host serve` with Python's official MCP client (the `mcp` package,
pinned in requirements.txt), over stdio and over Streamable HTTP. Run by
examples/agent-host/tests/mcp_py.rs:

    python mcp_e2e.py <agent-host binary> <scratch dir>

The client negotiates the protocol itself (it probes `server/discover`, so it
speaks 2026-07-28 to capspec). On that revision an `ask` is an
`input_required` round: the client answers the elicitation and retries with
the sealed `requestState`. Checked here: an ask accepted and one declined;
forged, altered, expired (the servers run with a short --state-ttl) and
replayed-for-other-arguments states refused by name; and two instances
sharing only the token and the state key behind a round-robin proxy, where
50 approved writes each land their two rounds on either instance. Every check asserts; the last line printed is a JSON summary.
"""

import asyncio
import json
import logging
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.request import Request, urlopen
from urllib.error import HTTPError

import httpx2
import mcp.types as types
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

APPROVAL = "io.capspec/approval"
# Seconds an approval round's requestState stays valid on the servers that
# ask (--state-ttl): long enough for every round, short enough to outwait.
STATE_TTL = 3


def answering(action, asked):
    async def elicit(_ctx, params):
        asked.append(params.message)
        return types.ElicitResult(action=action, content={} if action == "accept" else None)

    return elicit


async def gate(binary, workspace):
    """Default mode on 2026-07-28: the write asks through input_required."""
    params = StdioServerParameters(command=binary, args=["serve", "--surface", "tools", "--mode", "default", "--state-ttl", str(STATE_TTL), "--workspace", workspace])
    asked = []
    async with Client(params, elicitation_callback=answering("accept", asked)) as client:
        ok = await client.call_tool("write_file", {"path": "yes.txt", "content": "yes"})
        assert not ok.is_error, ok
        assert ok.meta["io.capspec/receipts"][0]["decision"] == "approved", ok.meta
        assert len(asked) == 1 and "workspace.write_file" in asked[0], asked
    assert open(os.path.join(workspace, "yes.txt")).read() == "yes"
    async with Client(params, elicitation_callback=answering("decline", asked)) as client:
        no = await client.call_tool("write_file", {"path": "no.txt", "content": "no"})
        assert no.is_error and no.meta["io.capspec/error"]["error"] == "permission_denied", no
        assert "declined" in no.meta["io.capspec/error"]["message"], no.meta
    assert not os.path.exists(os.path.join(workspace, "no.txt"))
    # Driving the rounds by hand: the state is checked before anything runs.
    async with Client(params, elicitation_callback=answering("accept", asked)) as client:
        return await tampering(client.session, workspace)


async def tampering(session, workspace):
    args = {"path": "t.txt", "content": "t"}
    # A state left to expire: the servers seal with --state-ttl STATE_TTL.
    stale = await session.call_tool("write_file", args, allow_input_required=True)
    assert isinstance(stale, types.InputRequiredResult), stale
    await asyncio.sleep(STATE_TTL + 1.5)
    first = await session.call_tool("write_file", args, allow_input_required=True)
    assert isinstance(first, types.InputRequiredResult), first
    assert APPROVAL in first.input_requests, first
    state = first.request_state
    accept = {APPROVAL: types.ElicitResult(action="accept", content={})}
    cases = [
        ("forged", args, "rs2." + "A" * 60),
        ("altered", args, altered(state)),
        ("replayed", {"path": "t.txt", "content": "other"}, state),
        ("expired", args, stale.request_state),
    ]
    refusals = await refused_by_name(session, "write_file", cases, accept)
    assert "forged or altered" in refusals["forged"] and "forged or altered" in refusals["altered"], refusals
    assert "other arguments" in refusals["replayed"], refusals
    assert "expired" in refusals["expired"], refusals
    assert not os.path.exists(os.path.join(workspace, "t.txt")), "no tampered round ran the write"
    done = await session.call_tool("write_file", args, input_responses=accept, request_state=state)
    assert not done.is_error, done
    assert open(os.path.join(workspace, "t.txt")).read() == "t"
    return sorted(refusals)


def altered(state):
    """`state` with its last six characters changed."""
    return state[:-6] + ("AAAAAA" if not state.endswith("AAAAAA") else "BBBBBB")


async def refused_by_name(session, tool, cases, responses):
    """Retry `tool` with each case's (arguments, state): every one must be a
    `permission_denied` tool error; returns case → its message."""
    refused = {}
    for case, arguments, state in cases:
        result = await session.call_tool(tool, arguments, input_responses=responses, request_state=state)
        assert not isinstance(result, types.InputRequiredResult), (case, result)
        assert result.is_error, (case, result)
        error = result.meta["io.capspec/error"]
        assert error["error"] == "permission_denied", (case, error)
        refused[case] = error["message"]
    return refused


class RoundRobin(BaseHTTPRequestHandler):
    """Each request to the next instance, as a load balancer without affinity does."""

    targets = []
    turn = 0
    lock = threading.Lock()
    landed = {}

    def log_message(self, *args):
        pass

    def _forward(self):
        with RoundRobin.lock:
            target = RoundRobin.targets[RoundRobin.turn % len(RoundRobin.targets)]
            RoundRobin.turn += 1
            RoundRobin.landed[target] = RoundRobin.landed.get(target, 0) + 1
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0)) if self.command == "POST" else None
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")}
        try:
            with urlopen(Request(target, data=body, headers=headers, method=self.command), timeout=30) as answer:
                status, answer_headers, data = answer.status, answer.headers, answer.read()
        except HTTPError as e:
            status, answer_headers, data = e.code, e.headers, e.read()
        self.send_response(status)
        for k, v in answer_headers.items():
            if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_POST = _forward
    do_GET = _forward
    do_DELETE = _forward


def start(binary, args):
    server = subprocess.Popen([binary, "serve", *args], stderr=subprocess.PIPE, text=True)
    for line in server.stderr:
        if "serving MCP at " in line:
            return server, line.split("serving MCP at ", 1)[1].strip()
    raise AssertionError("the server printed no address")


async def scale_out(binary, scratch):
    """Two instances, one token and one state key, behind round robin."""
    token_file = os.path.join(scratch, "scale-token")
    key_file = os.path.join(scratch, "state-key")
    with open(token_file, "w") as f:
        f.write("scale-token\n")
    with open(key_file, "w") as f:
        f.write("k" * 48 + "\n")
    workspace = os.path.join(scratch, "scale")
    os.makedirs(workspace, exist_ok=True)
    servers = [
        start(binary, ["--http", "127.0.0.1:0", "--token-file", token_file, "--state-key-file", key_file, "--state-ttl", str(STATE_TTL), "--surface", "tools", "--mode", "default", "--workspace", workspace])
        for _ in range(2)
    ]
    RoundRobin.targets = [url for _, url in servers]
    proxy = ThreadingHTTPServer(("127.0.0.1", 0), RoundRobin)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{proxy.server_address[1]}/mcp"
        asked = []
        async with httpx2.AsyncClient(headers={"Authorization": "Bearer scale-token"}, timeout=30) as http:
            async with Client(streamable_http_client(url, http_client=http), elicitation_callback=answering("accept", asked)) as client:
                for i in range(50):
                    result = await client.call_tool("write_file", {"path": f"w{i}.txt", "content": str(i)})
                    assert not result.is_error, (i, result)
                    assert result.meta["io.capspec/receipts"][0]["decision"] == "approved", result.meta
                refused = await tampering(client.session, workspace)
        assert len(asked) == 50, len(asked)
        assert all(open(os.path.join(workspace, f"w{i}.txt")).read() == str(i) for i in range(50))
        assert all(n > 50 for n in RoundRobin.landed.values()) and len(RoundRobin.landed) == 2, RoundRobin.landed
        return {"writes": 50, "requests_per_instance": sorted(RoundRobin.landed.values()), "refused": refused}
    finally:
        proxy.shutdown()
        for server, _ in servers:
            server.kill()
            server.wait()


class Collect(logging.Handler):
    """Keeps the messages of warnings and worse."""

    def __init__(self, into):
        super().__init__(logging.WARNING)
        self.into = into

    def emit(self, record):
        self.into.append(record.getMessage())


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
        # A 2025-11-25 session, ended by the client's DELETE: the client
        # logs a warning unless the end is answered 200 or 204.
        warnings = []
        handler = Collect(warnings)
        logger = logging.getLogger("mcp.client.streamable_http")
        logger.addHandler(handler)
        try:
            async with httpx2.AsyncClient(headers={"Authorization": "Bearer py-e2e-token"}) as http:
                async with Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
                    summary["legacy_http"] = await exercise(client, http_ws)
        finally:
            logger.removeHandler(handler)
        summary["session_end_warnings"] = warnings
    finally:
        server.kill()
        server.wait()

    gate_ws = os.path.join(scratch, "gate")
    os.makedirs(gate_ws, exist_ok=True)
    summary["gate_refused"] = await gate(binary, gate_ws)
    summary["scale_out"] = await scale_out(binary, scratch)
    print(json.dumps(summary))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
