"""The front door's answers are typed (issue 13): the OpenAPI spec publishes each route's
answer, MCP tools read attributes, and the JSON on the wire is what the engine built,
with no key it did not set."""

from __future__ import annotations

from typing import Any

from browserdeck import results
from browserdeck.deck import Caller, Deck
from browserdeck.engine import options as o
from browserdeck.tabs import Tab
from tests.support.service import running_service

PAGE = "data:text/html,<title>Typed</title><button onclick=\"document.title='hit'\">Go</button>"


def _answer(spec: dict[str, Any], path: str, method: str) -> dict[str, Any]:
    """The schema of a route's 200 answer, its $ref followed."""
    schema = spec["paths"][path][method]["responses"]["200"]["content"]["application/json"][
        "schema"
    ]
    name = schema["$ref"].rsplit("/", 1)[-1]
    found: dict[str, Any] = spec["components"]["schemas"][name]
    return found


async def test_the_answers_are_typed_and_the_wire_is_unchanged() -> None:
    async with running_service() as (service, client):
        spec = (await client.get("/openapi.json")).json()
        # Each answer's shape is published, with the names on the wire.
        assert "snapshot" in _answer(spec, "/snapshot", "get")["properties"]
        assert "kind" in _answer(spec, "/act", "post")["properties"]
        assert "status" in _answer(spec, "/navigate", "post")["properties"]
        assert "base64" in _answer(spec, "/screenshot", "post")["properties"]
        assert "messages" in _answer(spec, "/console", "get")["properties"]
        assert "bytes" in _answer(spec, "/pdf", "post")["properties"]
        assert "serviceWorkers" in _answer(spec, "/set/offline", "post")["properties"]
        assert "defaultProfile" in _answer(spec, "/", "get")["properties"]
        tabs = _answer(spec, "/tabs", "get")
        assert tabs["properties"]["tabs"]["items"]["$ref"].endswith("/Tab")
        assert "targetId" in spec["components"]["schemas"]["Tab"]["properties"]

        # The wire: only the keys the engine and the service set (no new nulls).
        health = (await client.get("/health")).json()
        assert set(health) == {"ok", "version", "engine"}
        assert set(health["engine"]) == {"state", "driverPid", "restarts", "lastFailure"}
        opened = (await client.post("/tabs/open", json={"url": PAGE})).json()
        assert set(opened) == {"targetId", "title", "url", "type"}, opened
        listed = (await client.get("/tabs")).json()
        assert all("status" not in t for t in listed["tabs"]), listed
        target = opened["targetId"]
        snap = (await client.get("/snapshot", params={"targetId": target})).json()
        assert snap["format"] == "ai" and "button" in snap["snapshot"]
        ref = next(
            line.split("[ref=")[1].split("]")[0]
            for line in snap["snapshot"].splitlines()
            if "button" in line
        )
        click = (
            await client.post("/act", json={"kind": "click", "ref": ref, "targetId": target})
        ).json()
        assert click["ok"] is True and click["kind"] == "click" and click["ref"] == ref
        assert None not in click.values(), click  # "result", "closed" ... never set: absent
        assert "result" not in click and "closed" not in click

        # In-process callers (MCP tools, the GUI) get the same answers as objects.
        deck = Deck(service)
        caller = Caller(client="typed-test")
        listing = await deck.tabs(caller, None)
        assert isinstance(listing, results.TabList) and isinstance(listing.tabs[0], Tab)
        shot = await deck.on_tab(caller, o.ScreenshotOptions(inline=True), target=target)
        assert isinstance(shot, results.Screenshot) and shot.base64 and shot.width > 0
        evaluated = await deck.on_tab(
            caller, o.EvaluateAct(kind="evaluate", fn="() => document.title"), target=target
        )
        assert isinstance(evaluated, results.ActResult) and evaluated.result == "hit"
        status = await deck.status(caller, None)
        assert isinstance(status, results.Status) and status.running is True
        assert set(status.wire()) == set((await client.get("/")).json())


FORM = (
    "data:text/html,<input aria-label=Name><input type=checkbox aria-label=Agree>"
    "<select aria-label=Fruit><option value=pear>Pear</option></select>"
    "<button>One</button><button>One</button>"
)


async def test_act_kinds_own_fields_and_snapshot_refs_are_declared() -> None:
    """filled, selected, viewport, waited, popups and a snapshot's refs and viewport are
    declared (results.py): in the spec, typed for in-process callers, and on the wire
    with their old names and no new nulls."""
    async with running_service() as (service, client):
        spec = (await client.get("/openapi.json")).json()
        act = _answer(spec, "/act", "post")["properties"]
        assert {"filled", "selected", "viewport", "waited", "popups"} <= set(act)
        assert {"waitedMs", "waitBoundHit"} <= set(act)
        snapshot = _answer(spec, "/snapshot", "get")["properties"]
        assert {"refs", "viewport", "refsMode"} <= set(snapshot)
        schemas = spec["components"]["schemas"]
        assert set(schemas["FilledField"]["properties"]) == {"ref", "checked", "selected", "value"}
        assert set(schemas["SnapshotRef"]["properties"]) == {"role", "name", "nth"}

        target = (await client.post("/tabs/open", json={"url": FORM})).json()["targetId"]
        on_tab = {"targetId": target}
        role = (await client.get("/snapshot", params={"format": "role", **on_tab})).json()
        assert sorted(role["refs"].values(), key=str) == [
            {"role": "button", "name": "One", "nth": 0},
            {"role": "button", "name": "One", "nth": 1},
            {"role": "checkbox", "name": "Agree"},
            {"role": "combobox", "name": "Fruit"},
            {"role": "textbox", "name": "Name"},
        ]
        refs = {v["role"]: k for k, v in role["refs"].items()}
        fields = [
            {"ref": refs["textbox"], "value": "Ann"},
            {"ref": refs["checkbox"], "value": True},
            {"ref": refs["combobox"], "value": "Pear"},
        ]
        filled = await client.post("/act", json={"kind": "fill", "fields": fields, **on_tab})
        assert filled.json()["filled"] == [
            {"ref": refs["textbox"], "value": "Ann"},
            {"ref": refs["checkbox"], "checked": True},
            {"ref": refs["combobox"], "selected": ["pear"]},
        ], filled.text
        resize = {"kind": "resize", "width": 500, "height": 400, **on_tab}
        resized = await client.post("/act", json=resize)
        assert resized.json()["viewport"] == {"width": 500, "height": 400}

        # In-process callers (MCP tools) read them as attributes.
        deck = Deck(service)
        caller = Caller(client="typed-test")
        chose = await deck.on_tab(
            caller, o.SelectAct(kind="select", ref=refs["combobox"], values=["Pear"]), target=target
        )
        assert isinstance(chose, results.ActResult) and chose.selected == ["pear"]
        waited = await deck.on_tab(caller, o.WaitAct(kind="wait", text="One"), target=target)
        assert isinstance(waited, results.ActResult) and waited.waited == ["text"]
        cut = await deck.on_tab(caller, o.SnapshotOptions(viewport=True), target=target)
        assert isinstance(cut, results.Snapshot) and isinstance(cut.viewport, results.Size)
        assert (cut.viewport.width, cut.viewport.height) == (500, 400)
        again = await deck.on_tab(caller, o.SnapshotOptions(format="role"), target=target)
        assert isinstance(again, results.Snapshot) and again.refs is not None
        assert again.refs[refs["textbox"]] == results.SnapshotRef(role="textbox", name="Name")


def test_each_engine_route_declares_the_answer_the_front_door_gives() -> None:
    # FastAPI serializes an answer by the route's declared class: a narrower declaration
    # would silently drop the fields of the class Deck really answers with.
    from browserdeck.api import routes_engine

    requests = {
        "/snapshot": o.SnapshotOptions,
        "/navigate": o.NavigateOptions,
        "/screenshot": o.ScreenshotOptions,
        "/console": o.ConsoleOptions,
        "/set/offline": o.OfflineOptions,
        "/pdf": o.PdfOptions,
        "/hooks/file-chooser": o.FileChooserOptions,
        "/hooks/dialog": o.DialogOptions,
    }
    routes = [route for route in routes_engine.router.routes if hasattr(route, "response_model")]
    assert {route.path for route in routes} == {*requests, "/act"}
    assert o.ClickAct.answer is results.ActResult
    for route in routes:
        want = requests[route.path].answer if route.path in requests else o.ClickAct.answer
        assert route.response_model is want, route.path


async def test_what_an_answer_lists_is_typed_and_keeps_its_wire_names() -> None:
    """Console messages, page errors, requests, dialogs, labels and snapshot stats: one
    model each, built by the engine, published in the spec, and on the wire with the
    names they always had (docs/api.md)."""
    entries = {
        "ConsoleEntry": {"type", "text", "url", "line", "time", "context"},
        "PageError": {"name", "message", "stack", "time"},
        "RequestEntry": {"index", "method", "url", "resourceType", "status", "failure", "time"},
        "DialogEntry": {"type", "message", "time", "armed", "action"},
        "ShotLabel": {"ref", "box", "badge", "leader", "role", "name"},
        "SnapshotStats": {"lines", "chars", "refs", "interactive"},
        "Armed": {"ok", "targetId", "armed", "accept", "expiresInMs", "hint"},
    }
    async with running_service() as (service, client):
        spec = (await client.get("/openapi.json")).json()
        schemas = spec["components"]["schemas"]
        for name, keys in entries.items():
            assert keys <= set(schemas[name]["properties"]), name
        console_items = _answer(spec, "/console", "get")["properties"]["messages"]["items"]
        assert console_items["$ref"].endswith("/ConsoleEntry")

        target = (await client.post("/tabs/open", json={"url": PAGE})).json()["targetId"]
        on_tab = {"targetId": target}
        # A warning, an uncaught error (awaited in the page), a dialog, a failed request.
        fn = (
            "async () => { console.warn('typed log');"
            " await new Promise(done => { addEventListener('error', () => done(), {once: true});"
            " setTimeout(() => { throw new Error('typed boom') }) });"
            " alert('typed alert');"
            " return await fetch('http://127.0.0.1:9/typed').then(() => 'ok', () => 'failed') }"
        )
        ran = (await client.post("/act", json={"kind": "evaluate", "fn": fn, **on_tab})).json()
        assert ran["result"] == "failed", ran
        assert [set(d) for d in ran["dialogs"]] == [entries["DialogEntry"]], ran["dialogs"]
        assert ran["dialogs"][0]["message"] == "typed alert"
        console = (await client.get("/console", params=on_tab)).json()
        logged = [m for m in console["messages"] if m["text"] == "typed log"]
        assert [set(m) for m in logged] == [entries["ConsoleEntry"]], console["messages"]
        assert logged[0]["type"] == "warning" and logged[0]["context"] == "page"
        assert [set(e) for e in console["errors"]] == [entries["PageError"]], console["errors"]
        assert "typed boom" in console["errors"][0]["message"]
        asked = [q for q in console["requests"] if q["url"].endswith("/typed")]
        assert [set(q) for q in asked] == [entries["RequestEntry"]], console["requests"]
        assert set(console["counts"]) == {"messages", "errors", "requests"}
        snap = (await client.get("/snapshot", params=on_tab)).json()
        assert set(snap["stats"]) == entries["SnapshotStats"]
        shot = (
            await client.post("/screenshot", json={"labels": True, "inline": True, **on_tab})
        ).json()
        assert shot["labels"] and all(set(lb) == entries["ShotLabel"] for lb in shot["labels"])
        button = shot["labels"][0]
        assert set(button["box"]) == {"x", "y", "width", "height"}
        assert (button["role"], button["name"]) == ("button", "Go")
        armed = (await client.post("/hooks/dialog", json={"accept": True, **on_tab})).json()
        assert set(armed) == entries["Armed"], armed

        # In-process callers read the same entries as objects.
        deck = Deck(service)
        read = await deck.on_tab(Caller(client="typed-test"), o.ConsoleOptions(), target=target)
        assert all(isinstance(m, results.ConsoleEntry) for m in read.messages)
        assert all(isinstance(q, results.RequestEntry) for q in read.requests)
        assert read.errors and isinstance(read.errors[0], results.PageError)
