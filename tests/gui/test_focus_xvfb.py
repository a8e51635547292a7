"""An agent never takes the user's keyboard focus nor raises a window over their work.

A real X server (Xvfb) with a real window manager (openbox: it is what activates and
raises windows), a real headed Chromium, and a "user's window" (a small Qt program in a
process of its own) that is active when the agent starts. After every kind of agent
call the X active window must still be the user's, and the user's window must still be
on top of the stacking order.

Chrome on Linux activates its window on every mouse press or touch start its page gets
(CDP's included): ``chrome/xfocus.py`` gives the focus back at once. The managed browser
and the user's own Chrome (the extension) are both checked.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.server
import os
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.gui.conftest import gui_config, wait_for
from tests.gui.xdisplay import XDisplay, missing_tools, xvfb_with_tray
from tests.relay.harness import launch_ext_browser
from tests.support.service import api_client

from browserdeck import config

pytestmark = pytest.mark.skipif(
    bool(missing_tools()), reason=f"needs {', '.join(missing_tools())} (make system-deps)"
)

USER_WINDOW = """
import sys
from PySide6.QtWidgets import QApplication, QLineEdit
app = QApplication(sys.argv[:1])
edit = QLineEdit()
edit.setWindowTitle("the user's editor")
edit.resize(420, 260)
edit.show()
edit.activateWindow()
app.exec()
"""

PAGE = (
    "<!doctype html><title>agent page</title>"
    "<input id=i aria-label=Name>"
    "<button onclick=\"document.title='clicked'\">Go</button>"
    "<select aria-label=Size><option>small<option>large</select>"
    "<input type=checkbox aria-label=Agree>"
    "<div style='height:2000px'></div><a href='#end' id=end>end</a>"
)


class _Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = PAGE.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def page() -> Iterator[str]:
    """The agent's page on a loopback web server (the user's Chrome does not navigate
    from a data: URL to another)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/page"
    finally:
        server.shutdown()
        server.server_close()


@contextlib.contextmanager
def user_window(x: XDisplay) -> Iterator[int]:
    """The user's own program, active: its window id."""
    proc = subprocess.Popen(
        [sys.executable, "-c", USER_WINDOW],
        env={**os.environ, **x.env()},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        window = 0
        for _ in range(200):
            window = x.active_window()
            if window and x.window_name(window) == "the user's editor":
                break
            subprocess.run(["sleep", "0.05"], check=False)
        else:
            raise AssertionError("the user's window never became active")
        yield window
    finally:
        proc.kill()
        proc.wait(10)


def on_top(x: XDisplay) -> int:
    stacking = x.root_windows("_NET_CLIENT_LIST_STACKING")
    return stacking[-1] if stacking else 0


def refs(snapshot: str) -> dict[str, str]:
    """The first ref of each role/name in an aria snapshot ("button Go": "e3")."""
    out: dict[str, str] = {}
    for line in snapshot.splitlines():
        if "[ref=" not in line:
            continue
        head, _, rest = line.strip().lstrip("- ").partition("[ref=")
        out.setdefault(head.replace('"', "").strip(), rest.split("]", 1)[0])
    return out


async def calls_keep_the_focus(
    x: XDisplay, client: httpx.AsyncClient, profile: str, tab: str, page: str
) -> None:
    """Every kind of agent call on ``tab``: the user's window stays active and on top."""
    user = x.active_window()

    async def check(what: str, response: httpx.Response) -> Any:
        assert response.status_code == 200, f"{what}: {response.text}"
        # Chrome's request goes to the window manager after the press: give it the time a
        # change of focus takes, then look (nothing to await: it is another process).
        await asyncio.sleep(0.4)
        assert x.active_window() == user, (
            f"{what} made {x.window_name(x.active_window())!r} the active window"
        )
        assert on_top(x) == user, f"{what} raised {x.window_name(on_top(x))!r} over the user"
        return response.json()

    q = {"profile": profile}
    body = {"targetId": tab}
    snap = await check("snapshot", await client.get("/snapshot", params={**q, "targetId": tab}))
    r = refs(snap["snapshot"])

    async def act(kind: str, **fields: Any) -> Any:
        return await check(
            kind, await client.post("/act", params=q, json={**body, "kind": kind, **fields})
        )

    await act("hover", ref=r["button Go"])
    await act("click", ref=r["button Go"])
    await act("click", ref=r["button Go"], doubleClick=True)
    await act("type", ref=r["textbox Name"], text="typed by the agent")
    await act("press", key="End", ref=r["textbox Name"])
    await act("select", ref=r["combobox Size"], values=["large"])
    await act("fill", fields=[{"ref": r["checkbox Agree"], "value": True}])
    await act("drag", startRef=r["button Go"], endRef=r["textbox Name"])
    await act("scrollIntoView", ref=r["link end"])
    await act("evaluate", fn="() => document.title")
    await act("wait", timeMs=50)
    await check(
        "screenshot", await client.post("/screenshot", params=q, json={**body, "inline": True})
    )
    await check(
        "navigate",
        await client.post("/navigate", params=q, json={**body, "url": page + "?again"}),
    )
    snap = await check("snapshot", await client.get("/snapshot", params={**q, "targetId": tab}))
    await act("click", ref=refs(snap["snapshot"])["button Go"])
    await act("type", ref=refs(snap["snapshot"])["textbox Name"], text="typed")
    # The agent's input still did what it was asked: its click and its typing landed.
    done = await act("evaluate", fn="() => [document.title, document.getElementById('i').value]")
    assert done["result"] == ["clicked", "typed"]


async def test_agent_tabs_do_not_steal_focus_and_screenshot(
    bd_home: Path, chromium_path: str, monkeypatch: pytest.MonkeyPatch, page: str
) -> None:
    """A new agent tab opens inactive, and its screenshots still render."""
    from browserdeck.master import build_service

    monkeypatch.setenv("BROWSERDECK_CHROME", chromium_path)
    config.save(gui_config(headless=False))
    with xvfb_with_tray(tray=False, window_manager=True) as x:
        monkeypatch.setenv("DISPLAY", x.display)
        service = build_service()
        await service.start()
        try:
            await service.contexts["agent"].start()
            with user_window(x) as user:
                async with api_client(service) as agent:
                    tab = (await agent.post("/tabs/open", json={"url": page})).json()
                    await asyncio.sleep(1.0)  # give a focus change time to happen, if any
                    assert x.active_window() == user, "the agent's tab took the focus"
                    shot = await agent.post(
                        "/screenshot", json={"targetId": tab["targetId"], "inline": True}
                    )
                    assert shot.status_code == 200, shot.text
                    assert shot.json()["width"] > 100
        finally:
            await service.stop()


@contextlib.asynccontextmanager
async def headed_service() -> AsyncIterator[Any]:
    """The service with headed managed profiles (on the DISPLAY the test set)."""
    from browserdeck.master import build_service

    config.save(gui_config(headless=False))
    service = build_service()
    await service.start()
    try:
        yield service
    finally:
        await service.stop()


async def test_no_agent_call_takes_the_focus_from_the_user(
    bd_home: Path, chromium_path: str, monkeypatch: pytest.MonkeyPatch, page: str
) -> None:
    """Click (which made Chrome take the focus), type, press, hover, drag, select, fill,
    navigate, open tab…: the user's window stays active and on top throughout."""
    monkeypatch.setenv("BROWSERDECK_CHROME", chromium_path)
    with xvfb_with_tray(tray=False, window_manager=True) as x:
        monkeypatch.setenv("DISPLAY", x.display)
        async with headed_service() as service, api_client(service) as client:
            await service.contexts["agent"].start()
            with user_window(x):
                opened = await client.post("/tabs/open", json={"url": page})
                assert opened.status_code == 200, opened.text
                await calls_keep_the_focus(x, client, "agent", opened.json()["targetId"], page)
            assert service.focus.restored > 0, "no activation was undone: the test proves nothing"


async def test_the_users_own_chrome_keeps_the_users_focus(
    bd_home: Path, chromium_path: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, page: str
) -> None:
    """The extension profile (the user's own Chrome, headed): an agent's click in a tab the
    user shared does not bring that Chrome over the user's other program."""
    monkeypatch.setenv("BROWSERDECK_CHROME", chromium_path)
    with xvfb_with_tray(tray=False, window_manager=True) as x:
        monkeypatch.setenv("DISPLAY", x.display)
        async with headed_service() as service, api_client(service) as client:
            assert (await client.post("/start", params={"profile": "chrome"})).status_code == 200
            relay = service.contexts["chrome"].impl.relay
            assert relay is not None
            ext = await launch_ext_browser(
                chromium_path, tmp_path / "users-chrome", relay, headless=False
            )
            try:
                await ext.pair()
                await relay.wait_for_extension(15)
                _tab_id, target = await ext.open_shared(page)
                with user_window(x):
                    await calls_keep_the_focus(x, client, "chrome", target, page)
            finally:
                await ext.close()


async def test_each_agents_window_says_whose_it_is(
    bd_home: Path, chromium_path: str, monkeypatch: pytest.MonkeyPatch, page: str
) -> None:
    """Two agents on one profile: same tint, both "… - Chromium". Each window's title
    starts with the agent and the profile, and keeps it when the page retitles it."""
    monkeypatch.setenv("BROWSERDECK_CHROME", chromium_path)
    with xvfb_with_tray(tray=False, window_manager=True) as x:
        monkeypatch.setenv("DISPLAY", x.display)
        async with headed_service() as service:
            await service.contexts["agent"].start()
            windows: dict[str, str] = {}
            for agent in ("claude-code", "shopping-agent"):
                async with api_client(service) as client:
                    client.headers["X-Browserdeck-Client"] = agent
                    opened = await client.post("/tabs/open", json={"url": page})
                    assert opened.status_code == 200, opened.text
                    windows[agent] = opened.json()["targetId"]

            def titles() -> list[str]:
                return [x.window_name(w) for w in x.root_windows("_NET_CLIENT_LIST")]

            for agent in windows:
                prefix = f"{agent} · agent — agent page"
                await wait_for(
                    lambda p=prefix: any(t.startswith(p) for t in titles()),
                    what=f"a window titled {prefix!r} (titles: {titles()})",
                )
            # The page changes its title: the label stays in front.
            async with api_client(service) as client:
                client.headers["X-Browserdeck-Client"] = "claude-code"
                done = await client.post(
                    "/act",
                    json={
                        "targetId": windows["claude-code"],
                        "kind": "evaluate",
                        "fn": "() => { document.title = 'renamed'; return 1 }",
                    },
                )
                assert done.status_code == 200, done.text
            await wait_for(
                lambda: any(t.startswith("claude-code · agent — renamed") for t in titles()),
                what=f"the label kept after a retitle (titles: {titles()})",
            )
