"""Relay protocol details with a fake extension (real relay, real sockets).

The fake stands in for Chrome only where the real extension cannot produce a case on
demand: a request that is never answered, a drop mid-request, a service-worker child,
a multi-megabyte reply. The same behaviours are covered end to end in test_e2e_*.py.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
import websockets

from browserdeck.chrome.cdp import CDPClient, CDPError
from browserdeck.events import ServiceEvents
from browserdeck.relay import events as relay_events
from browserdeck.relay.protocol import frame, split_frame
from browserdeck.relay.server import RelayServer
from browserdeck.secrets.tokens import new_token
from tests.relay import conformance
from tests.relay.fake_extension import FakeExtension, FakeTab
from tests.relay.harness import wait_until

TAB = FakeTab(7, "A" * 32, "https://example.test/")


@pytest.fixture
async def fast_relay() -> AsyncIterator[RelayServer]:
    server = RelayServer(port=0, token=new_token(), command_timeout=0.5, op_timeout=2.0)
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


@pytest.fixture
async def fake(fast_relay: RelayServer) -> AsyncIterator[FakeExtension]:
    ext = await FakeExtension.connect(fast_relay, tabs=[TAB])
    try:
        yield ext
    finally:
        await ext.close()


async def client(relay: RelayServer, **headers: str) -> CDPClient:
    return await CDPClient.connect(
        f"ws://127.0.0.1:{relay.port}/cdp", headers={**relay.auth_headers(), **headers}
    )


class Recorder:
    def __init__(self, cdp: CDPClient, *methods: str) -> None:
        self.events: list[tuple[str, dict[str, Any], str | None]] = []
        for method in methods:
            cdp.on(method, lambda params, sid, m=method: self.events.append((m, params, sid)))

    def of(self, method: str) -> list[tuple[dict[str, Any], str | None]]:
        return [(p, s) for m, p, s in self.events if m == method]


async def test_auto_attach_announces_before_replying_with_real_target_info(
    fast_relay: RelayServer, fake: FakeExtension
) -> None:
    cdp = await client(fast_relay)
    try:
        rec = Recorder(cdp, "Target.attachedToTarget")
        version = await cdp.send("Browser.getVersion")
        assert version["product"] == "Chrome/156.0.7777.1" and version["protocolVersion"] == "1.3"
        await cdp.send(
            "Target.setAutoAttach",
            {"autoAttach": True, "waitForDebuggerOnStart": True, "flatten": True},
        )
        # Already recorded when the reply arrived: the event came first.
        [(params, sid)] = rec.of("Target.attachedToTarget")
        assert sid is None
        info = params["targetInfo"]
        assert (
            info["targetId"] == TAB.target_id and info["type"] == "page" and info["url"] == TAB.url
        )
        assert info["browserContextId"] and info["attached"] is True
        assert params["waitingForDebugger"] is False
        # Announcing twice would crash Playwright ("Duplicate target").
        await cdp.send(
            "Target.setAutoAttach",
            {"autoAttach": True, "waitForDebuggerOnStart": True, "flatten": True},
        )
        assert len(rec.of("Target.attachedToTarget")) == 1
        targets = (await cdp.send("Target.getTargets"))["targetInfos"]
        assert [t["targetId"] for t in targets] == [TAB.target_id]
        contexts = await cdp.send("Target.getBrowserContexts")
        assert (
            contexts["browserContextIds"] == []
            and contexts["defaultBrowserContextId"] == info["browserContextId"]
        )
        assert (await cdp.send("Target.getTargetInfo"))["targetInfo"]["type"] == "browser"
        with pytest.raises(CDPError, match=r"Browser\.close is refused"):
            await cdp.send("Browser.close")
        with pytest.raises(CDPError, match="wasn't found"):
            await cdp.send("SystemInfo.getInfo")
        # Nothing was attached yet: the debugger comes with the first page command.
        assert "attach" not in fake.op_names()
    finally:
        await cdp.close()


async def test_debugger_attaches_on_first_command_and_detaches_when_the_client_leaves(
    fast_relay: RelayServer, fake: FakeExtension
) -> None:
    cdp = await client(fast_relay)
    rec = Recorder(cdp, "Target.attachedToTarget")
    await cdp.send(
        "Target.setAutoAttach",
        {"autoAttach": True, "waitForDebuggerOnStart": False, "flatten": True},
    )
    sid = rec.of("Target.attachedToTarget")[0][0]["sessionId"]
    # Several commands race the attach: all go out, in order, after it.
    results = await asyncio.gather(
        *(cdp.send("Runtime.evaluate", {"expression": str(i)}, session_id=sid) for i in range(5))
    )
    assert all(r["result"]["value"] == 2 for r in results)
    assert fake.op_names().count("attach") == 1
    assert [c["params"]["expression"] for c in fake.commands] == ["0", "1", "2", "3", "4"]
    await cdp.close()
    await wait_until(lambda: "detach" in fake.op_names(), what="the debugger to be released")


async def test_second_session_gets_contexts_replayed_and_disable_is_kept_local(
    fast_relay: RelayServer, fake: FakeExtension
) -> None:
    cdp = await client(fast_relay)
    try:
        rec = Recorder(cdp, "Target.attachedToTarget", "Runtime.executionContextCreated")
        await cdp.send(
            "Target.setAutoAttach",
            {"autoAttach": True, "waitForDebuggerOnStart": False, "flatten": True},
        )
        first = rec.of("Target.attachedToTarget")[0][0]["sessionId"]
        await cdp.send("Runtime.enable", session_id=first)
        assert [s for _, s in rec.of("Runtime.executionContextCreated")] == [first]

        second = (
            await cdp.send("Target.attachToTarget", {"targetId": TAB.target_id, "flatten": True})
        )["sessionId"]
        assert second != first
        await cdp.send("Runtime.enable", session_id=second)
        created = rec.of("Runtime.executionContextCreated")
        # Chrome reported the context once; the relay replayed it for the second session
        # only, so the first one sees no duplicate (that would destroy its context).
        assert [s for _, s in created] == [first, second]
        assert created[1][0]["context"]["id"] == 1
        enables = [c for c in fake.commands if c["cdpMethod"] == "Runtime.enable"]
        assert len(enables) == 2  # forwarded as an ordering barrier, answered by Chrome

        await cdp.send("Runtime.disable", session_id=second)
        assert not any(c["cdpMethod"] == "Runtime.disable" for c in fake.commands)
        await cdp.send("Target.detachFromTarget", {"sessionId": second})
        await cdp.send("Runtime.disable", session_id=first)
        assert any(c["cdpMethod"] == "Runtime.disable" for c in fake.commands)
    finally:
        await cdp.close()


async def test_child_sessions_are_announced_on_their_page_and_unwanted_ones_released(
    fast_relay: RelayServer, fake: FakeExtension
) -> None:
    cdp = await client(fast_relay)
    try:
        rec = Recorder(
            cdp, "Target.attachedToTarget", "Page.frameNavigated", "Target.detachedFromTarget"
        )
        await cdp.send(
            "Target.setAutoAttach",
            {"autoAttach": True, "waitForDebuggerOnStart": True, "flatten": True},
        )
        page = rec.of("Target.attachedToTarget")[0][0]["sessionId"]
        await cdp.send(
            "Target.setAutoAttach",
            {"autoAttach": True, "waitForDebuggerOnStart": True, "flatten": True},
            session_id=page,
        )
        iframe = {
            "targetId": "F" * 32,
            "type": "iframe",
            "url": "https://other.test/",
            "title": "",
            "attached": True,
            "browserContextId": "CTX",
        }
        await fake.event(
            TAB.tab_id,
            "Target.attachedToTarget",
            {"sessionId": "CHILD1", "targetInfo": iframe, "waitingForDebugger": True},
        )
        worker = {
            "targetId": "W" * 32,
            "type": "service_worker",
            "url": "https://other.test/sw.js",
            "title": "",
            "attached": True,
        }
        await fake.event(
            TAB.tab_id,
            "Target.attachedToTarget",
            {"sessionId": "SW1", "targetInfo": worker, "waitingForDebugger": True},
        )
        await wait_until(lambda: len(rec.of("Target.attachedToTarget")) == 2, what="the child")
        # Like Chrome, a child's Page events reach only a session that enabled Page there.
        await cdp.send("Page.enable", session_id="CHILD1")
        await fake.event(
            TAB.tab_id, "Page.frameNavigated", {"frame": {"id": "F" * 32}}, session_id="CHILD1"
        )
        await wait_until(lambda: len(rec.of("Page.frameNavigated")) == 1, what="the child event")
        attached = rec.of("Target.attachedToTarget")
        assert [(p["sessionId"], s) for p, s in attached[1:]] == [("CHILD1", page)]
        assert rec.of("Page.frameNavigated")[0][1] == "CHILD1"
        # Commands on the child go to the tab with Chrome's child session id.
        await cdp.send("Runtime.runIfWaitingForDebugger", session_id="CHILD1")
        assert any(c.get("sessionId") == "CHILD1" for c in fake.commands)
        # The service worker was resumed and let go of, never shown.
        await wait_until(
            lambda: any(
                c["cdpMethod"] == "Target.detachFromTarget" and c["params"] == {"sessionId": "SW1"}
                for c in fake.commands
            ),
            what="the service worker child to be released",
        )
        assert any(
            c["cdpMethod"] == "Runtime.runIfWaitingForDebugger" and c.get("sessionId") == "SW1"
            for c in fake.commands
        )
        await fake.event(
            TAB.tab_id, "Target.detachedFromTarget", {"sessionId": "CHILD1", "targetId": "F" * 32}
        )
        await wait_until(lambda: bool(rec.of("Target.detachedFromTarget")), what="the child detach")
        with pytest.raises(CDPError, match="Session with given id not found"):
            await cdp.send("Runtime.evaluate", {"expression": "1"}, session_id="CHILD1")
    finally:
        await cdp.close()


async def _recorder(relay: RelayServer) -> conformance.Recorder:
    return await conformance.Recorder.connect(
        f"ws://127.0.0.1:{relay.port}/cdp", relay.auth_headers()
    )


async def _page_session(rec: conformance.Recorder) -> str:
    """A session of its own on the fake tab, with the Page domain on."""
    sid: str = (
        await rec.result("Target.attachToTarget", {"targetId": TAB.target_id, "flatten": True})
    )["sessionId"]
    await rec.result("Page.enable", session=sid)
    return sid


async def test_lifecycle_of_current_documents_is_repeated_after_enabling_it(
    fast_relay: RelayServer, fake: FakeExtension
) -> None:
    """What a client hears after the reply to ``Page.setLifecycleEventsEnabled``: each
    frame's current document's lifecycle so far (Chrome replays it before the reply,
    where Playwright does not listen on a page it took for its initial empty one), and
    nothing of a document since replaced or a frame since detached. The e2e popup test
    in test_e2e_playwright.py shows why; this one pins down what is repeated, and to whom.
    """

    def lifecycle(frame: str, loader: str, name: str) -> dict[str, Any]:
        return {"frameId": frame, "loaderId": loader, "name": name, "timestamp": 1.0}

    async def enable_lifecycle(
        ext: FakeExtension, record: dict[str, Any], params: dict[str, Any]
    ) -> Any:
        # Like Chrome's replay, here with a loaded document replaced since the frame tree
        # was read (L1 by L2, not loaded yet) and a same-process iframe that came and went.
        for frame_id, loader, name in [
            ("MAIN", "L1", "commit"), ("MAIN", "L1", "load"), ("SUB", "L9", "load"),
            ("MAIN", "L2", "init"), ("MAIN", "L2", "commit"), ("MAIN", "L2", "commit"),
        ]:  # fmt: skip
            await ext.event(TAB.tab_id, "Page.lifecycleEvent", lifecycle(frame_id, loader, name))
        await ext.event(TAB.tab_id, "Page.frameDetached", {"frameId": "SUB"})
        return {}

    fake.handlers["Page.setLifecycleEventsEnabled"] = enable_lifecycle
    rec = await _recorder(fast_relay)
    try:
        await rec.result("Target.setAutoAttach", {"autoAttach": True, "flatten": True})
        [(_, _, attached)] = [e for e in rec.events if e[1] == "Target.attachedToTarget"]
        first = attached["sessionId"]
        other = await _page_session(rec)
        await rec.result("Page.enable", session=first)
        await rec.result("Page.setLifecycleEventsEnabled", {"enabled": True}, session=first)
        # A later round trip on the same tab: whatever the relay sent after the reply is in.
        await rec.result("Runtime.evaluate", {"expression": "1"}, session=first)
        reply_at = rec.order.index(("reply", "Page.setLifecycleEventsEnabled"))
        after = [
            (rec.events[i][0], rec.events[i][2]["loaderId"], rec.events[i][2]["name"])
            for kind, i in rec.order[reply_at + 1 :]
            if kind == "event" and rec.events[i][1] == "Page.lifecycleEvent"
        ]
        # Not L1's load: the document now in the frame has not loaded yet.
        assert after == [(first, "L2", "init"), (first, "L2", "commit")]
        # Before the reply both sessions had Chrome's own events, as forwarded.
        before = [
            rec.events[i][0]
            for kind, i in rec.order[:reply_at]
            if kind == "event" and rec.events[i][1] == "Page.lifecycleEvent"
        ]
        assert sorted(before) == sorted([first, other] * 6)
    finally:
        await rec.close()


def _lifecycle(frame: str, loader: str, name: str) -> dict[str, Any]:
    return {"frameId": frame, "loaderId": loader, "name": name, "timestamp": 1.0}


def _repeated_after(rec: conformance.Recorder, label: str) -> list[tuple[str, str, str, str]]:
    """The lifecycle events ``rec`` got after the reply labelled ``label`` and before the
    next reply (the caller's round trip that shows the repeat is over)."""
    reply_at = rec.order.index(("reply", label))
    found = []
    for kind, i in rec.order[reply_at + 1 :]:
        if kind == "reply":
            break
        sid, method, params = rec.events[i]
        if method == "Page.lifecycleEvent":
            found.append((sid, params["frameId"], params["loaderId"], params["name"]))
    return found


async def test_a_document_reopened_with_the_same_loader_is_not_repeated_as_loaded(
    fast_relay: RelayServer, fake: FakeExtension
) -> None:
    """``document.open()`` on a loaded page: Chrome sends ``init`` again with the same
    loaderId (seen in Chromium: commit, DOMContentLoaded, load, then init on open, and
    DOMContentLoaded and load only on ``document.close()``). Playwright keeps
    DOMContentLoaded and load per frame whatever the loader, so repeating the first ones
    after the reply told it the reopened document had loaded."""

    async def enable_lifecycle(
        ext: FakeExtension, record: dict[str, Any], params: dict[str, Any]
    ) -> Any:
        for name in ("init", "commit", "DOMContentLoaded", "load", "init", "networkIdle"):
            await ext.event(TAB.tab_id, "Page.lifecycleEvent", _lifecycle("MAIN", "L1", name))
        return {}

    fake.handlers["Page.setLifecycleEventsEnabled"] = enable_lifecycle
    rec = await _recorder(fast_relay)
    try:
        sid = await _page_session(rec)
        await rec.result("Page.setLifecycleEventsEnabled", {"enabled": True}, session=sid)
        await rec.result("Runtime.evaluate", {"expression": "1"}, session=sid)
        assert _repeated_after(rec, "Page.setLifecycleEventsEnabled") == [
            (sid, "MAIN", "L1", "init"), (sid, "MAIN", "L1", "networkIdle"),
        ]  # fmt: skip
    finally:
        await rec.close()


async def test_lifecycle_is_kept_only_while_enabling_it_is_in_flight(
    fast_relay: RelayServer, fake: FakeExtension, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Chrome sends no ``Page.frameDetached`` for the old document's iframes when a page
    navigates or reloads, so lifecycle kept per frame between commands grew without
    bound on a page that reloads forever (2,001 frames after 1,000 reloads of a 2-iframe
    page). The relay listens only while a ``Page.setLifecycleEventsEnabled`` is in flight,
    and then repeats only what Chrome reported in that window."""
    replay: list[tuple[str, str, str]] = []

    async def enable_lifecycle(
        ext: FakeExtension, record: dict[str, Any], params: dict[str, Any]
    ) -> Any:
        for frame_id, loader, name in replay:
            await ext.event(TAB.tab_id, "Page.lifecycleEvent", _lifecycle(frame_id, loader, name))
        return {}

    fake.handlers["Page.setLifecycleEventsEnabled"] = enable_lifecycle
    rec = await _recorder(fast_relay)
    try:
        other = await _page_session(rec)
        await rec.result("Page.setLifecycleEventsEnabled", {"enabled": True}, session=other)
        parsed = 0
        real_loads = relay_events.loads

        def counting_loads(text: str) -> Any:
            nonlocal parsed
            parsed += 1
            return real_loads(text)

        monkeypatch.setattr(relay_events, "loads", counting_loads)
        # A page that reloads over and over while a session listens: each document has two
        # iframes, and no frameDetached ever comes for the old ones.
        reloads = 300
        for n in range(reloads):
            for frame_id, loader in [
                ("MAIN", f"L{n}"),
                (f"SUB{n}a", f"S{n}a"),
                (f"SUB{n}b", f"S{n}b"),
            ]:
                for name in ("init", "commit", "DOMContentLoaded", "load"):
                    await fake.event(
                        TAB.tab_id, "Page.lifecycleEvent", _lifecycle(frame_id, loader, name)
                    )
        await rec.wait_event("Page.lifecycleEvent", count=reloads * 12, timeout=20)
        assert parsed == 0  # nobody is enabling lifecycle: the events are only passed on
        monkeypatch.setattr(relay_events, "loads", real_loads)
        [tab] = fast_relay.relay.tabs.values()
        assert tab.lifecycle_recorders == []
        assert "SUB0a" not in repr(tab)  # nothing of a dead frame is kept

        # A new document in the main frame, not loaded yet: all of the current state.
        replay[:] = [("MAIN", "LNEW", "init")]
        first = await _page_session(rec)
        await rec.result(
            "Page.setLifecycleEventsEnabled", {"enabled": True}, session=first, label="first"
        )
        await rec.result("Runtime.evaluate", {"expression": "1"}, session=first)
        assert _repeated_after(rec, "first") == [(first, "MAIN", "LNEW", "init")]
        assert tab.lifecycle_recorders == []
        assert "LNEW" not in repr(tab) and "SUB" not in repr(tab)
    finally:
        await rec.close()


async def test_a_second_session_enabling_lifecycle_keeps_the_first_ones_repeat(
    fast_relay: RelayServer, fake: FakeExtension
) -> None:
    """Two clients on one tab (the engine and a user's Playwright script): A's command is
    in Chrome, whose replay for A has come, when B's command goes out; A's reply comes
    after. A must still get its repeat (it was wiped by B's command once)."""
    b_sent = asyncio.Event()
    a_repeated = asyncio.Event()
    calls = 0

    async def enable_lifecycle(
        ext: FakeExtension, record: dict[str, Any], params: dict[str, Any]
    ) -> Any:
        nonlocal calls
        calls += 1
        if calls == 2:  # B's: Chrome handles it after A's, replaying again
            b_sent.set()
            await a_repeated.wait()
        for name in ("commit", "load"):
            await ext.event(TAB.tab_id, "Page.lifecycleEvent", _lifecycle("MAIN", "L1", name))
        if calls == 1:
            await b_sent.wait()  # A's reply only once B's command passed the relay
        return {}

    fake.handlers["Page.setLifecycleEventsEnabled"] = enable_lifecycle
    fast_relay.client_mode = "multi-client"
    url = f"ws://127.0.0.1:{fast_relay.port}/cdp"
    a = await conformance.Recorder.connect(url, fast_relay.auth_headers())
    b = await conformance.Recorder.connect(url, fast_relay.auth_headers())
    try:
        sessions = []
        for rec in (a, b):
            sid = (
                await rec.result(
                    "Target.attachToTarget", {"targetId": TAB.target_id, "flatten": True}
                )
            )["sessionId"]
            await rec.result("Page.enable", session=sid)
            sessions.append(sid)
        a_sid, b_sid = sessions
        a_enable = asyncio.create_task(
            a.result("Page.setLifecycleEventsEnabled", {"enabled": True}, session=a_sid)
        )
        # Chrome's replay for A has gone through the relay.
        await a.wait_event("Page.lifecycleEvent", count=2)
        b_enable = asyncio.create_task(
            b.result("Page.setLifecycleEventsEnabled", {"enabled": True}, session=b_sid)
        )
        await a_enable
        await a.result("Runtime.evaluate", {"expression": "1"}, session=a_sid)
        a_repeated.set()
        await b_enable
        await b.result("Runtime.evaluate", {"expression": "1"}, session=b_sid)
        assert _repeated_after(a, "Page.setLifecycleEventsEnabled") == [
            (a_sid, "MAIN", "L1", "commit"), (a_sid, "MAIN", "L1", "load"),
        ]  # fmt: skip
        assert _repeated_after(b, "Page.setLifecycleEventsEnabled") == [
            (b_sid, "MAIN", "L1", "commit"), (b_sid, "MAIN", "L1", "load"),
        ]  # fmt: skip
        [tab] = fast_relay.relay.tabs.values()
        assert tab.lifecycle_recorders == []
    finally:
        await a.close()
        await b.close()


async def test_pending_requests_fail_when_the_extension_drops(
    fast_relay: RelayServer, fake: FakeExtension
) -> None:
    fake.silent.add("Runtime.evaluate")
    cdp = await client(fast_relay)
    try:
        rec = Recorder(cdp, "Target.attachedToTarget", "Target.detachedFromTarget")
        await cdp.send(
            "Target.setAutoAttach",
            {"autoAttach": True, "waitForDebuggerOnStart": False, "flatten": True},
        )
        sid = rec.of("Target.attachedToTarget")[0][0]["sessionId"]
        pending = asyncio.create_task(
            cdp.send(
                "Runtime.evaluate", {"expression": "hang()", "awaitPromise": True}, session_id=sid
            )
        )
        await wait_until(
            lambda: any(c["cdpMethod"] == "Runtime.evaluate" for c in fake.commands),
            what="the command to reach the fake",
        )
        await fake.close()
        with pytest.raises(CDPError, match="disconnected"):
            await asyncio.wait_for(pending, 5)
        await wait_until(
            lambda: bool(rec.of("Target.detachedFromTarget")), what="the tab to be detached"
        )
        assert rec.of("Target.detachedFromTarget")[0][0] == {
            "sessionId": sid,
            "targetId": TAB.target_id,
        }
        assert fast_relay.status()["tabs"] == 0
    finally:
        await cdp.close()


async def test_unanswered_requests_time_out(fast_relay: RelayServer, fake: FakeExtension) -> None:
    fake.silent.add("DOM.getDocument")
    cdp = await client(fast_relay)
    try:
        rec = Recorder(cdp, "Target.attachedToTarget")
        await cdp.send(
            "Target.setAutoAttach",
            {"autoAttach": True, "waitForDebuggerOnStart": False, "flatten": True},
        )
        sid = rec.of("Target.attachedToTarget")[0][0]["sessionId"]
        with pytest.raises(CDPError, match=r"did not answer DOM\.getDocument within 0\.5 s"):
            await cdp.send("DOM.getDocument", session_id=sid)
        # The link is still fine for the next command.
        assert (await cdp.send("Runtime.evaluate", {"expression": "1"}, session_id=sid))["result"][
            "value"
        ] == 2
    finally:
        await cdp.close()


async def test_messages_bigger_than_a_mebibyte_pass(
    fast_relay: RelayServer, fake: FakeExtension
) -> None:
    blob = "z" * (3 * 1024 * 1024)

    async def big(ext: FakeExtension, record: dict[str, Any], params: dict[str, Any]) -> Any:
        return {"data": blob, "echo": len(params.get("expression", ""))}

    fake.handlers["Page.captureScreenshot"] = big
    cdp = await client(fast_relay)
    try:
        rec = Recorder(cdp, "Target.attachedToTarget")
        await cdp.send(
            "Target.setAutoAttach",
            {"autoAttach": True, "waitForDebuggerOnStart": False, "flatten": True},
        )
        sid = rec.of("Target.attachedToTarget")[0][0]["sessionId"]
        reply = await cdp.send(
            "Page.captureScreenshot", {"expression": "q" * (2 * 1024 * 1024)}, session_id=sid
        )
        assert reply["data"] == blob and reply["echo"] == 2 * 1024 * 1024
    finally:
        await cdp.close()


async def test_json_the_fast_parser_refuses_is_still_relayed(
    fast_relay: RelayServer, fake: FakeExtension
) -> None:
    """The relay parses with orjson (protocol.loads/dumps); integers beyond 64 bits and
    escaped lone surrogates, which orjson refuses and Chrome accepts, still reach the tab
    unchanged instead of being answered 'Message must be a valid JSON'."""
    async with websockets.connect(
        f"ws://127.0.0.1:{fast_relay.port}/cdp", additional_headers=fast_relay.auth_headers()
    ) as ws:
        await ws.send(
            '{"id":1,"method":"Target.setAutoAttach","params":{"autoAttach":true,'
            '"waitForDebuggerOnStart":false,"flatten":true}}'
        )
        sid = json.loads(await ws.recv())["params"]["sessionId"]
        assert json.loads(await ws.recv()) == {"id": 1, "result": {}}
        await ws.send(
            '{"id":2,"method":"Runtime.evaluate","params":{"expression":"1",'
            '"big":1180591620717411303424,"odd":"\\ud800"},"sessionId":"' + sid + '"}'
        )
        reply = json.loads(await ws.recv())
        assert reply == {
            "id": 2,
            "result": {"result": {"type": "number", "value": 2}},
            "sessionId": sid,
        }, reply
    sent = fake.commands[-1]["params"]
    assert sent == {"expression": "1", "big": 2**70, "odd": "\ud800"}, sent


async def test_back_to_back_internal_calls_attach_after_the_previous_detach(
    fast_relay: RelayServer, fake: FakeExtension
) -> None:
    """Relay.tab_call (cookies, the service's tab queries) attaches, then lets go. A second
    call right after used to send its attach before the first call's detach, so the
    extension detached the debugger under the second call ("Debugger is not attached")."""
    tab = fast_relay.relay.tab_for(TAB.target_id)
    for _ in range(3):
        await fast_relay.relay.tab_call(tab, "Runtime.evaluate", {"expression": "1"})
    await wait_until(lambda: len(fake.op_names()) == 6, what="the last detach")
    assert fake.op_names() == ["attach", "detach"] * 3, fake.op_names()


async def test_tabs_shared_later_are_announced_and_events_fire(fast_relay: RelayServer) -> None:
    events = ServiceEvents()
    log: list[tuple[str, Any]] = []
    events.extension.connect(lambda **kw: log.append(("extension", kw)))
    events.tabs_changed.connect(lambda **kw: log.append(("tabs", kw)))
    fast_relay._events = events
    fake = await FakeExtension.connect(fast_relay, tabs=[])
    cdp = await client(fast_relay)
    try:
        rec = Recorder(
            cdp,
            "Target.attachedToTarget",
            "Target.targetCreated",
            "Target.targetInfoChanged",
            "Target.targetDestroyed",
        )
        await cdp.send("Target.setDiscoverTargets", {"discover": True})
        await cdp.send(
            "Target.setAutoAttach",
            {"autoAttach": True, "waitForDebuggerOnStart": False, "flatten": True},
        )
        assert rec.events == []
        await fake.share(TAB)
        await wait_until(lambda: len(rec.of("Target.attachedToTarget")) == 1, what="the late tab")
        assert rec.of("Target.targetCreated")[0][0]["targetInfo"]["targetId"] == TAB.target_id
        await fake.send(
            {
                "method": "tabUpdated",
                "params": {
                    "tabId": TAB.tab_id,
                    "url": "https://example.test/next",
                    "title": "Next",
                },
            }
        )
        await wait_until(
            lambda: any(
                e[0]["targetInfo"]["title"] == "Next" for e in rec.of("Target.targetInfoChanged")
            ),
            what="the info change",
        )
        await fake.send(
            {"method": "tabUnshared", "params": {"tabId": TAB.tab_id, "reason": "unshared"}}
        )
        await wait_until(lambda: bool(rec.of("Target.targetDestroyed")), what="the tab to go")
    finally:
        await cdp.close()
        await fake.close()
    await wait_until(
        lambda: any(k == "extension" and not kw["connected"] for k, kw in log),
        what="the disconnect event",
    )
    kinds = [k for k, _ in log]
    assert kinds[0] == "tabs" or kinds[0] == "extension"
    assert (
        "extension",
        {
            "profile": "chrome",
            "connected": True,
            "detail": "Chrome/156.0.7777.1, extension 0.0-fake",
        },
    ) in log
    assert sum(1 for k, _ in log if k == "tabs") >= 3


async def test_port_in_use_and_idempotent_stop(fast_relay: RelayServer) -> None:
    from browserdeck import errors

    clash = RelayServer(port=fast_relay.port, token=new_token())
    with pytest.raises(errors.Conflict) as failure:
        await clash.start()
    assert failure.value.code == "port_in_use"
    assert str(fast_relay.port) in failure.value.message and failure.value.hint
    await clash.stop()  # never started: a no-op
    await fast_relay.stop()
    await fast_relay.stop()


def test_frames_round_trip() -> None:
    text = frame({"id": 3, "method": "cdp"}, {"a": "line\nbreak"})
    header, body = split_frame(text)
    assert header == {"id": 3, "method": "cdp"} and body == '{"a":"line\\nbreak"}'
    assert split_frame('{"method":"ping"}') == ({"method": "ping"}, None)
