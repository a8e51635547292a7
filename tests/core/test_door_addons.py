"""The addon seam at the front door: what an addon sees of a call, and what it may do.

A real service and Chromium; the calls come over the API. An addon sees each call before
and after it runs (its caller, request, profile, tab and element), refuses one by
raising, pauses one by awaiting, adds notes to the answer, and takes an engine call of
its own on the tab (``aside``) that no addon and no activity entry sees. The example
addon of docs/architecture.md (docs/examples/confirm_submit.py) runs here as written.
"""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path
from typing import Any

import httpx

from browserdeck.door.call import Call, Element
from browserdeck.engine import options as o
from browserdeck.errors import Forbidden
from browserdeck.events import ActivityEntry
from tests.support.asyncsite import ref_in
from tests.support.service import running_service

FORM = (
    "data:text/html,<title>Sign up</title><form><label>Name <input name=n value=Ada></label>"
    "<label>Password <input type=password name=p></label>"
    "<button onclick='event.preventDefault();document.title=\"sent\"'>Send</button></form>"
    "<a href='data:text/html,<title>Elsewhere</title>'>Away</a>"
)
EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "confirm_submit.py"


class Seen:
    """Records what it sees of each call, before and after."""

    def __init__(self) -> None:
        self.calls: list[Call[Any]] = []
        self.names_before: list[str] = []
        self.elements: dict[str, Element | None] = {}

    async def before(self, call: Call[Any]) -> None:
        self.names_before.append(call.name)
        self.elements[call.name] = await call.element()

    async def after(self, call: Call[Any]) -> None:
        self.calls.append(call)


async def _open(client: httpx.AsyncClient, url: str) -> str:
    return str((await client.post("/tabs/open", json={"url": url})).json()["targetId"])


async def _snapshot(client: httpx.AsyncClient, target: str) -> str:
    return str((await client.get("/snapshot", params={"targetId": target})).json()["snapshot"])


async def test_an_addon_sees_the_caller_request_profile_tab_and_element() -> None:
    async with running_service() as (service, client):
        seen = Seen()
        service.addons.add(seen)
        target = await _open(client, FORM)
        button = ref_in(await _snapshot(client, target), 'button "Send"')
        headers = {"X-Browserdeck-Client": "agent-x", "X-Browserdeck-Session": "s1"}
        done = await client.post(
            "/act", json={"kind": "click", "ref": button, "targetId": target}, headers=headers
        )
        assert done.status_code == 200, done.text
        click = seen.calls[-1]
        assert click.name == "act" and isinstance(click.request, o.ClickAct)
        assert (click.caller.client, click.caller.session, click.caller.via) == ("agent-x", "s1", "api")
        assert click.profile == "agent" and click.driver == "managed"
        assert click.tab is not None and click.tab.target_id == target
        assert click.answer is not None and click.error is None
        element = seen.elements["act"]
        assert element is not None and (element.ref, element.role, element.name) == (
            button,
            "button",
            "Send",
        )
        assert [c.name for c in seen.calls] == ["open-tab", "snapshot", "act"]
        assert seen.names_before == ["open-tab", "snapshot", "act"]


async def test_the_example_addon_pauses_refuses_and_notes() -> None:
    spec = importlib.util.spec_from_file_location("confirm_submit", EXAMPLE)
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    asked: asyncio.Queue[tuple[str, Element, asyncio.Future[bool]]] = asyncio.Queue()

    async def ask(question: str, element: Element) -> bool:
        answer: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        await asked.put((question, element, answer))
        return await answer

    async with running_service() as (service, client):
        entries: list[ActivityEntry] = []
        service.events.api_call.connect(lambda entry: entries.append(entry))
        service.addons.add(example.ConfirmSubmit(ask))
        target = await _open(client, FORM)
        button = ref_in(await _snapshot(client, target), 'button "Send"')
        body = {"kind": "click", "ref": button, "targetId": target}

        # Paused: the click waits for the person, who sees the element and its form.
        clicking = asyncio.ensure_future(client.post("/act", json=body))
        question, element, answer = await asyncio.wait_for(asked.get(), 30)
        assert not clicking.done()
        assert element.box is not None and element.box.width > 0
        assert element.form is not None
        fields = {(f.tag, f.type, f.name, f.filled) for f in element.form}
        assert ("input", "text", "Name", True) in fields
        assert ("input", "password", "Password", False) in fields  # filled or not; no value
        assert "form of 3 fields" in question
        answer.set_result(True)
        done = await asyncio.wait_for(clicking, 30)
        assert done.status_code == 200, done.text
        assert "the user confirmed this submit" in done.json()["note"]
        assert "sent" in (await client.get("/tabs")).text

        # Refused: the caller gets the addon's error; the click never ran.
        await client.post("/act", json={"kind": "evaluate", "fn": "() => document.title = 'x'",
                                        "targetId": target})
        entries.clear()
        clicking = asyncio.ensure_future(client.post("/act", json=body))
        _, _, answer = await asyncio.wait_for(asked.get(), 30)
        answer.set_result(False)
        refused = await asyncio.wait_for(clicking, 30)
        assert refused.status_code == 403
        assert refused.json()["error"]["code"] == "refused_by_user"
        assert "Send" in refused.json()["error"]["message"]
        title = await client.post("/act", json={"kind": "evaluate", "fn": "() => document.title",
                                                "targetId": target})
        assert title.json()["result"] == "x"
        # The activity log (the first addon) still has the call, with the refusal.
        act = next(e for e in entries if e.call == "act")
        assert act.status == 403 and act.error is not None and act.error.code == "refused_by_user"


async def test_a_refusal_before_a_navigation_leaves_the_tab_where_it_was() -> None:
    class NoElsewhere:
        async def before(self, call: Call[Any]) -> None:
            request = call.request
            if isinstance(request, o.NavigateOptions) and "Elsewhere" in (request.url or ""):
                raise Forbidden("that address is not allowed here", code="blocked_origin")

    async with running_service() as (service, client):
        service.addons.add(NoElsewhere())
        target = await _open(client, FORM)
        refused = await client.post(
            "/navigate",
            json={"url": "data:text/html,<title>Elsewhere</title>", "targetId": target},
        )
        assert refused.status_code == 403 and refused.json()["error"]["code"] == "blocked_origin"
        tabs = (await client.get("/tabs")).json()["tabs"]
        assert [t["title"] for t in tabs if t["targetId"] == target] == ["Sign up"]


async def test_an_aside_is_seen_by_no_addon_and_logged_nowhere() -> None:
    class Recorder:
        """Before and after screenshots around each act (a session recording's part)."""

        def __init__(self) -> None:
            self.shots: list[int] = []

        async def before(self, call: Call[Any]) -> None:
            if call.name == "act":
                shot = await call.aside(o.ScreenshotOptions(inline=True))
                self.shots.append(len(shot.base64 or ""))

        async def after(self, call: Call[Any]) -> None:
            if call.name == "act" and call.error is None:
                shot = await call.aside(o.ScreenshotOptions(inline=True))
                self.shots.append(len(shot.base64 or ""))

    async with running_service() as (service, client):
        entries: list[ActivityEntry] = []
        service.events.api_call.connect(lambda entry: entries.append(entry))
        recorder = Recorder()
        seen = Seen()
        service.addons.add(recorder)
        service.addons.add(seen)
        target = await _open(client, FORM)
        entries.clear()
        done = await client.post("/act", json={"kind": "press", "key": "Tab", "targetId": target})
        assert done.status_code == 200, done.text
        assert len(recorder.shots) == 2 and all(recorder.shots)
        assert [e.call for e in entries] == ["act"]
        assert [c.name for c in seen.calls] == ["open-tab", "act"]
