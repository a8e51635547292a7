"""The 2026 era's calls when browserdeck ends them (Stop all agents, the service's stop),
each race made certain rather than left to chance.

Raw HTTP to a real service, as in test_wire_edges.py, whose two tests of these paths use
a real tool and failed only about 1 run in 10 without the fix. Here the call is a tool
registered for the test only (``StandIn``): the race each test needs is the tool's doing
(a cancel it swallows), or a hold on the answer's way out (a seam in ``Request.respond``),
so the test fails every time without the behaviour it holds.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from browserdeck.mcpserver import protocol, transport
from browserdeck.mcpserver.context import Call, Reply
from browserdeck.mcpserver.tools import REGISTRY, ToolSpec
from tests.mcp.test_wire import META, mcp_service, modern_headers, rpc
from tests.mcp.test_wire_edges import endpoint_of

NAME = "test_runs_until_ended"


class StandIn:
    """A tool that runs until it is cancelled, and swallows its first ``swallow`` cancels.

    A real tool can lose a cancel this way on Python 3.11: ``asyncio.wait_for`` returns
    its inner future's result, dropping the cancel, when the cancel lands in the loop turn
    that future finishes in, and the call runs on (bpo-42130, fixed in 3.12; shown on
    3.11.7 by a script that completes the inner future and cancels in one turn). A real
    tool hits that turn by chance, and only on 3.11; this one swallows the cancel itself.
    """

    def __init__(self, swallow: int) -> None:
        self.swallow = swallow
        self.cancels = 0
        self.started = asyncio.Event()
        self.ended = asyncio.Event()

    async def handler(self, call: Call) -> Reply:
        self.started.set()
        try:
            while True:
                try:
                    await asyncio.Event().wait()  # its work, which never ends by itself
                except asyncio.CancelledError:
                    self.cancels += 1
                    if self.cancels > self.swallow:
                        raise
        finally:
            self.ended.set()


@pytest.fixture
def stand_in(monkeypatch: pytest.MonkeyPatch) -> Callable[[int], StandIn]:
    """``stand_in(swallow)``: a ``StandIn`` the service offers (in ``core``) for this
    test only."""

    def register(swallow: int) -> StandIn:
        tool = StandIn(swallow)
        spec = ToolSpec(
            NAME, "runs until ended", {"type": "object", "properties": {}}, tool.handler
        )
        monkeypatch.setitem(REGISTRY, NAME, spec)
        return tool

    return register


def call_stand_in(client: Any) -> asyncio.Future[Any]:
    called = rpc("tools/call", 21, name=NAME, arguments={}, _meta=META)
    return asyncio.ensure_future(
        client.post("/mcp", json=called, headers=modern_headers("tools/call", NAME))
    )


@pytest.mark.parametrize("ending", ["stop_all_agents", "service_stop"])
async def test_a_call_that_swallowed_its_cancel_is_answered_at_once(
    bd_home: Path, stand_in: Callable[[int], StandIn], ending: str
) -> None:
    """The answer comes on the event set beside the cancel, not when the call notices
    (before: it waited for the call, here for ever; with browser_wait_for, its 30 s, or
    on the stop a bare 500 once uvicorn's grace ran out). On its way out the request
    cancels the call again, which ends it."""
    tool = stand_in(1)
    async with mcp_service(bd_home) as (service, client):
        post = call_stand_in(client)
        await asyncio.wait_for(tool.started.wait(), 10)
        stopping = None
        if ending == "stop_all_agents":
            await endpoint_of(service).end_all_sessions()
        else:
            stopping = asyncio.ensure_future(service.stop())
        resp = await asyncio.wait_for(post, 5)
        assert resp.status_code == 200, resp.text
        error = resp.json()["error"]
        assert error["code"] == protocol.REQUEST_CANCELLED, error
        assert "Stop all agents" in error["message"]
        await asyncio.wait_for(tool.ended.wait(), 5)
        assert tool.cancels == 2  # the one it swallowed, and the one that ended it
        if stopping is not None:
            await asyncio.wait_for(stopping, 20)


async def test_the_stop_lets_an_answer_on_its_way_out_go_before_the_server_stops(
    bd_home: Path,
    stand_in: Callable[[int], StandIn],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The endpoint's stop waits for the 2026-era answers it caused before uvicorn is
    told to exit (before: it returned at once, and uvicorn cancelled a request still on
    its way to its -32800 once its grace ran out: a bare 500 'Internal Server Error', a
    traceback in the log).

    With the answer taken from the event beside the cancel, a request is a few loop
    turns from its answer when the stop returns, well inside uvicorn's 3 s; what this
    holds is the order. So the answer is held on its way out (a seam in our
    ``Request.respond``; a cancel meanwhile ends the request as in a real send) for
    longer than uvicorn's grace, cut from 3 s for the test: an answer the stop does not
    wait for is then cut off every time."""
    tool = stand_in(0)
    hold, grace = 1.0, 0.3
    respond = transport.Request.respond
    held = asyncio.Event()

    async def slow_answer(self: transport.Request, status: int, body: bytes = b"", *a: Any) -> None:
        if b'"code":-32800' in body.replace(b" ", b""):
            held.set()
            await asyncio.sleep(hold)
        await respond(self, status, body, *a)

    monkeypatch.setattr(transport.Request, "respond", slow_answer)
    async with mcp_service(bd_home) as (service, client):
        service.api._server.config.timeout_graceful_shutdown = grace
        post = call_stand_in(client)
        await asyncio.wait_for(tool.started.wait(), 10)
        await asyncio.wait_for(service.stop(), 20)
        assert held.is_set()
        resp = await asyncio.wait_for(post, 5)
        assert resp.status_code == 200, resp.text
        assert resp.json()["error"]["code"] == protocol.REQUEST_CANCELLED
    tracebacks = [r for r in caplog.records if r.exc_info and r.levelno >= logging.ERROR]
    assert tracebacks == [], [r.getMessage() for r in tracebacks]
