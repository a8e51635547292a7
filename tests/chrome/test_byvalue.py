"""The gateway fetches Playwright's by-value results as one string (chrome/byvalue.py)
for the engine's own connection: what it gets must be what Chromium would have given it,
value for value; a user's own client is never rewritten.

Real service, real managed Chromium behind its real gateway, a raw CDP client sending
the engine's headers (and our engine through the API). Each call is made twice: as
Playwright makes it (which the gateway asks for as a string) and with a function that
differs by one space (which it forwards untouched): the two replies must be equal.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest
import websockets

from browserdeck.chrome import byvalue
from browserdeck.chrome.byvalue import Courier
from tests.support.service import running_service

EVALUATE = byvalue._EVALUATE
UNTOUCHED = EVALUATE + " "  # the same function, which the gateway does not recognise

VALUES = [
    "() => ({a: 1, b: [1, 2.5, -3, 1e21, 0.1], c: {d: null, e: true, f: false}, g: ''})",
    "() => [[], {}, [[[]]], 'x']",
    "() => 'plain'",
    "() => 'ünïcödé 😀 \\u2028 \\\" \\\\ \\n \\t ' + String.fromCharCode(0xd800) + ' end'",
    "() => 42",
    "() => -1.5e-7",
    "() => true",
    "() => null",
    "() => ({nested: Array.from({length: 2000}, (_, i) => ({k: 'row ' + i, v: [i, 'x'.repeat(i % 7)]}))})",
    "async () => { await new Promise(r => setTimeout(r, 10)); return {later: [1]}; }",
]


class Cdp:
    """A raw page-level CDP connection through the gateway (its root session)."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.ids = itertools.count(1)
        self.events: list[dict[str, Any]] = []

    async def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        call_id = next(self.ids)
        # Compact, in Playwright's key order: how the gateway recognises its calls.
        message = {"id": call_id, "method": method, "params": params or {}}
        await self.ws.send(json.dumps(message, separators=(",", ":")))
        while True:
            message = json.loads(await asyncio.wait_for(self.ws.recv(), 10))
            if message.get("id") == call_id:
                return message  # type: ignore[no-any-return]
            self.events.append(message)

    async def evaluate_as_playwright(self, function: str, object_id: str, fn: str) -> dict[str, Any]:
        return await self.call(
            "Runtime.callFunctionOn",
            {
                "functionDeclaration": function,
                "objectId": object_id,
                "arguments": [{"objectId": object_id}, {"value": fn}],
                "returnByValue": True,
                "awaitPromise": True,
            },
        )


@pytest.fixture(params=["engine"])
async def page_cdp(request: pytest.FixtureRequest) -> AsyncIterator[tuple[Cdp, str, str, list[bytes]]]:
    """(a raw CDP client of a tab, an isolated world's stand-in utility script, the main
    world's, every raw reply the gateway was about to rewrite). The client sends the
    engine's headers, or (``user``) only the token, as a user's own client does."""
    seen: list[bytes] = []
    real_outbound = Courier.outbound

    def spy(self: Courier, data: bytes) -> bytes:
        if self._asked and data.startswith(b'{"id":'):
            seen.append(data)
        return real_outbound(self, data)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Courier, "outbound", spy)
        async with running_service() as (service, http):
            resp = await http.post("/tabs/open", json={"url": "data:text/html,<p>values</p>"})
            assert resp.status_code == 200, resp.text
            target = resp.json()["targetId"]
            ctx = service.profile(None)
            port = ctx.profile.cdp_port
            auth = ctx.headers if request.param == "engine" else {
                "Authorization": f"Bearer {service.api_token}"
            }
            url = f"ws://127.0.0.1:{port}/devtools/page/{target}"
            async with websockets.connect(url, max_size=2**26, additional_headers=auth) as ws:
                cdp = Cdp(ws)
                await cdp.call("Runtime.enable")
                frame = (await cdp.call("Page.getFrameTree"))["result"]["frameTree"]["frame"]["id"]
                world = await cdp.call("Page.createIsolatedWorld", {"frameId": frame})
                context = world["result"]["executionContextId"]
                # A stand-in for Playwright's utility script: evaluate(fn) runs fn, as
                # Playwright's does: a throw is a throw, an async fn gives a promise.
                script = "globalThis.u = {evaluate: (f) => (0, eval)('(' + f + ')')()}; u"
                isolated = await cdp.call("Runtime.evaluate", {"expression": script, "contextId": context})
                main = await cdp.call(
                    "Runtime.evaluate",
                    # The page's own world, where a page may change JSON.stringify.
                    {"expression": "JSON.stringify = () => '\"forged\"'; " + script},
                )
                yield (
                    cdp,
                    isolated["result"]["result"]["objectId"],
                    main["result"]["result"]["objectId"],
                    seen,
                )


async def test_a_value_from_an_isolated_world_is_what_chromium_gives(
    page_cdp: tuple[Cdp, str, str, list[bytes]],
) -> None:
    cdp, isolated, _main, seen = page_cdp
    for fn in VALUES:
        seen.clear()
        asked = await cdp.evaluate_as_playwright(EVALUATE, isolated, fn)
        # Asked as a string: Chromium's raw reply held the value as one JSON string.
        assert len(seen) == 1 and b'"type":"string"' in seen[0][:200], (fn, seen[:1])
        plain = await cdp.evaluate_as_playwright(UNTOUCHED, isolated, fn)
        assert "exceptionDetails" not in plain["result"], plain
        assert asked["result"] == plain["result"], fn


async def test_a_call_that_throws_throws_the_same(
    page_cdp: tuple[Cdp, str, str, list[bytes]],
) -> None:
    """A throw (as Playwright's own errors are) and a rejection: the same error, but for
    the column of the outermost frame (the call is in a function of ours)."""
    cdp, isolated, _main, _seen = page_cdp
    for fn, text in (
        ("() => { throw new TypeError('boom') }", "Uncaught"),
        ("async () => { throw new TypeError('later') }", "Uncaught (in promise) TypeError: later"),
    ):
        asked = (await cdp.evaluate_as_playwright(EVALUATE, isolated, fn))["result"]
        plain = (await cdp.evaluate_as_playwright(UNTOUCHED, isolated, fn))["result"]
        assert asked["exceptionDetails"]["text"] == plain["exceptionDetails"]["text"] == text
        for reply in (asked, plain):  # objectIds differ: one error object each
            for error in (reply["result"], reply["exceptionDetails"]["exception"]):
                error.pop("objectId", None)
                if "description" in error:  # the outermost frame's column is ours
                    error["description"] = re.sub(r":1:\d+\)$", ":1:?)", error["description"])
        assert asked["result"] == plain["result"], fn
        assert asked["exceptionDetails"]["exception"] == plain["exceptionDetails"]["exception"]


@pytest.mark.parametrize("page_cdp", ["user"], indirect=True)
async def test_a_users_own_client_gets_chromiums_replies_as_they_are(
    page_cdp: tuple[Cdp, str, str, list[bytes]],
) -> None:
    """A user's Playwright (any version) through the endpoint: nothing is rewritten; the
    isolated world's value comes back as Chromium builds it."""
    cdp, isolated, _main, seen = page_cdp
    for fn in VALUES[:3]:
        asked = await cdp.evaluate_as_playwright(EVALUATE, isolated, fn)
        plain = await cdp.evaluate_as_playwright(UNTOUCHED, isolated, fn)
        assert asked["result"] == plain["result"], fn
    assert seen == []


async def test_another_client_cannot_write_the_reply(
    page_cdp: tuple[Cdp, str, str, list[bytes]],
) -> None:
    """Another CDP client (it holds the token) changes JSON.stringify in that world: what
    comes back is not exactly one JSON value, so it is refused in words, never pasted,
    and the connection lives on (a reply no JSON parser takes would end it)."""
    cdp, isolated, _main, _seen = page_cdp
    for forged in (
        """'1,"forged":2'""",  # a key after the value
        "'NaN'",
        "'-Infinity'",
        """' "x"'""",  # whitespace around it
        """'"x"\\n'""",
        """'"' + String.fromCharCode(0xd800) + '"'""",  # a raw lone surrogate
    ):
        await cdp.call(
            "Runtime.callFunctionOn",
            {"functionDeclaration": f"() => {{ JSON.stringify = () => {forged} }}",
             "objectId": isolated},
        )
        reply = await cdp.evaluate_as_playwright(EVALUATE, isolated, "() => ({a: 1})")
        assert "result" not in reply and "forged" not in json.dumps(reply), (forged, reply)
        assert "not one JSON value" in reply["error"]["message"], forged


async def test_chromiums_own_errors_pass_as_they_came(
    page_cdp: tuple[Cdp, str, str, list[bytes]],
) -> None:
    cdp, isolated, _main, _seen = page_cdp
    gone = isolated.rsplit(".", 1)[0] + ".987654"  # no such object in that world
    asked = await cdp.evaluate_as_playwright(EVALUATE, gone, "() => 1")
    plain = await cdp.evaluate_as_playwright(UNTOUCHED, gone, "() => 1")
    assert "error" in plain, plain
    assert asked["error"] == plain["error"]


async def test_the_pages_own_world_is_forwarded_untouched(
    page_cdp: tuple[Cdp, str, str, list[bytes]],
) -> None:
    """There the page can change JSON.stringify (here it forges every answer): the call
    goes to Chromium as it was sent, and the value is the true one."""
    cdp, _isolated, main, seen = page_cdp
    seen.clear()
    reply = await cdp.evaluate_as_playwright(EVALUATE, main, "() => ({true: 'value'})")
    assert reply["result"]["result"] == {"type": "object", "value": {"true": "value"}}
    assert seen == []


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """The engine's aria-snapshot calls the gateway asked for as a string, as sent."""
    calls: list[bytes] = []
    real_inbound = Courier.inbound

    def counting(self: Courier, data: bytes) -> bytes:
        sent = real_inbound(self, data)
        if sent is not data and b"ariaSnapshot" in data:
            calls.append(data)
        return sent

    monkeypatch.setattr(Courier, "inbound", counting)
    return calls


async def test_the_engines_snapshot_through_the_gateway_is_the_same(
    monkeypatch: pytest.MonkeyPatch, asked: list[bytes]
) -> None:
    """Our engine (Playwright, through the gateway): the aria snapshot is asked for as a
    string, and its text is the one taken without that."""
    from tests.support import bigpages

    html = bigpages.table(60, buttons=2)
    async with running_service() as (_service, http):
        resp = await http.post("/tabs/open", json={"url": "data:text/html," + html})
        assert resp.status_code == 200, resp.text
        target = resp.json()["targetId"]
        first = await http.get("/snapshot", params={"targetId": target})
        assert first.status_code == 200, first.text
        assert asked, "the snapshot was not asked for as a string"
        monkeypatch.setattr(Courier, "inbound", lambda self, data: data)
        second = await http.get("/snapshot", params={"targetId": target})
        assert second.status_code == 200, second.text
        assert first.json()["snapshot"] == second.json()["snapshot"]
        assert "[ref=" in first.json()["snapshot"] and "Order 59" in first.json()["snapshot"]


async def test_a_new_document_keeps_the_way_back(asked: list[bytes]) -> None:
    """Navigations clear a tab's worlds (Runtime.executionContextsCleared) and make new
    ones: the courier follows, so the next document's snapshot still comes back as a
    string (not silently the slow way), and an iframe's own world is followed too."""
    pages = [
        "<button>One</button>",
        "<p>two</p><button>Two</button>",
        "<iframe srcdoc='<button>Inside</button>'></iframe><button>Three</button>",
    ]
    async with running_service() as (_service, http):
        resp = await http.post("/tabs/open", json={"url": "data:text/html,<p>start</p>"})
        assert resp.status_code == 200, resp.text
        target = resp.json()["targetId"]
        for n, page in enumerate(pages, 1):
            resp = await http.post(
                "/navigate", json={"url": "data:text/html," + page, "targetId": target}
            )
            assert resp.status_code == 200, resp.text
            before = len(asked)
            snap = await http.get("/snapshot", params={"targetId": target})
            assert snap.status_code == 200, snap.text
            assert len(asked) > before, f"document {n}'s snapshot went the slow way"
        assert 'button "Inside"' in snap.json()["snapshot"], snap.json()["snapshot"]
        assert 'button "Three"' in snap.json()["snapshot"]
