"""End-to-end harness: real Chromium with the real extension, a real relay, test pages.

How the token reaches the extension: the harness connects to Chromium's *own* DevTools
port (not the relay), attaches to the extension's service worker and runs
``chrome.storage.local.set({relayPort, relayProfile, relayToken})`` in it — exactly what
the options page does after ``browserdeck pair``. The worker's storage listener then connects to the
relay. Tabs are shared through the same code the toolbar uses (``browserdeck.shareTab``
in the worker).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from browserdeck.chrome.cdp import CDPClient
from browserdeck.relay.extension_id import EXTENSION_ID
from browserdeck.relay.server import RelayServer
from tests.support.browsers import RawChromium, launch_raw_chromium

REPO = Path(__file__).resolve().parents[2]
EXTENSION_DIR = REPO / "extension"


def extension_flags(extension_dir: Path = EXTENSION_DIR) -> list[str]:
    return [
        f"--load-extension={extension_dir}",
        f"--disable-extensions-except={extension_dir}",
        # Hides the "started debugging this browser" bar (56 px even headless).
        "--silent-debugger-extension-api",
    ]


# ---------------------------------------------------------------- test site
PAGE = """<!doctype html><html><head><title>{title}</title></head><body>
<h1>{title}</h1>
<button id="b" onclick="this.textContent='clicked ' + (++window.clicks)">Click me</button>
<script>window.clicks = 0;</script>
{extra}
</body></html>"""


class _Handler(BaseHTTPRequestHandler):
    site: Site

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        if "hold" in query:
            # Held until the test opens the gate (bounded, so a failed test ends).
            self.site.gate(query["hold"]).wait(15)
        body = self.site.render(parts.path, query)
        if body is None:
            self.send_response(404)
            self.end_headers()
            return
        data = body.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@dataclass
class Site:
    """Test pages on 127.0.0.1:<port>; the same server as ``localhost:<port>`` is a second
    *site* to Chromium, so an iframe from it is out-of-process (an OOPIF)."""

    server: ThreadingHTTPServer
    port: int = 0
    gates: dict[str, threading.Event] = field(default_factory=dict)

    def gate(self, name: str) -> threading.Event:
        """``?hold=<name>`` on any page holds its response until this event is set."""
        return self.gates.setdefault(name, threading.Event())

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def other(self) -> str:
        return f"http://localhost:{self.port}"

    def url(self, path: str) -> str:
        return self.base + path

    def render(self, path: str, q: dict[str, str]) -> str | None:
        title = q.get("title", "Page")
        if path == "/page":
            return PAGE.format(title=title, extra="")
        if path == "/frames":
            frame = f"{self.other}/frame?title=Inner"
            return PAGE.format(
                title=title,
                extra=f'<iframe id="f" src="{frame}" width="400" height="200"></iframe>',
            )
        if path == "/worker":
            # A dedicated worker: a child target of type "worker" under auto-attach.
            return PAGE.format(
                title=title,
                extra="<script>window.w = new Worker(URL.createObjectURL(new Blob("
                "['onmessage = e => postMessage(e.data * 2)'], {type: 'text/javascript'})));"
                "</script>",
            )
        if path == "/frame":
            return (
                "<!doctype html><title>Inner</title><button id='ib' "
                "onclick=\"this.textContent='frame clicked'\">Inner button</button>"
            )
        if path == "/opener":
            # ?popup_hold=<gate>: the popup link's page is held on that gate.
            hold = f"&hold={q['popup_hold']}" if "popup_hold" in q else ""
            extra = (
                f'<a id="link" href="{self.base}/page?title=Popup{hold}" target="_blank">'
                "open popup</a>"
                f'<button id="wo" onclick="window.open(\'{self.base}/page?title=Opened\')">'
                "window.open</button>"
            )
            return PAGE.format(title=title, extra=extra)
        if path == "/form":
            return PAGE.format(
                title=title,
                extra='<label>Name <input id="name"></label><p id="out"></p>'
                '<button id="go" onclick="document.getElementById(\'out\').textContent='
                "'hello ' + document.getElementById('name').value\">Greet</button>",
            )
        return None


def start_site() -> Site:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    site = Site(server, server.server_address[1])
    _Handler.site = site
    threading.Thread(target=server.serve_forever, name="test-site", daemon=True).start()
    return site


# ---------------------------------------------------------------- browser + extension
@dataclass
class ExtBrowser:
    """Chromium with the browserdeck extension, driven from its own DevTools port."""

    chromium: RawChromium
    cdp: CDPClient
    relay: RelayServer
    _sw_session: str | None = None
    _sw_target: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    async def worker_target(self, wait: float = 15.0) -> str:
        """The targetId of the extension's service worker (waits for it to be running)."""
        deadline = asyncio.get_running_loop().time() + wait
        while True:
            infos = (await self.cdp.send("Target.getTargets"))["targetInfos"]
            for info in infos:
                if info["type"] == "service_worker" and info["url"].startswith(
                    f"chrome-extension://{EXTENSION_ID}/"
                ):
                    return str(info["targetId"])
            if asyncio.get_running_loop().time() > deadline:
                raise AssertionError(f"the extension's service worker never started: {infos}")
            await asyncio.sleep(0.05)

    async def sw_eval(self, expression: str, *, wait: float = 15.0) -> Any:
        """Evaluate ``expression`` (awaited) in the extension's service worker."""
        for attempt in range(3):
            if self._sw_session is None:
                target = await self.worker_target(wait)
                attached = await self.cdp.send(
                    "Target.attachToTarget", {"targetId": target, "flatten": True}
                )
                self._sw_session, self._sw_target = attached["sessionId"], target
                await self._wait_worker_ready(wait)
            try:
                reply = await self.cdp.send(
                    "Runtime.evaluate",
                    {"expression": expression, "awaitPromise": True, "returnByValue": True},
                    session_id=self._sw_session,
                    timeout=wait,
                )
            except Exception:
                # The worker restarted (or was stopped): find it again.
                self._sw_session = None
                if attempt == 2:
                    raise
                continue
            if "exceptionDetails" in reply:
                raise AssertionError(
                    f"service worker threw: {json.dumps(reply['exceptionDetails'])[:800]}"
                )
            return reply["result"].get("value")
        return None

    async def _wait_worker_ready(self, wait: float) -> None:
        # The worker target shows up before its script has run (no `chrome` yet).
        deadline = asyncio.get_running_loop().time() + wait
        while True:
            reply = await self.cdp.send(
                "Runtime.evaluate",
                {"expression": "typeof globalThis.browserdeck", "returnByValue": True},
                session_id=self._sw_session,
            )
            if reply.get("result", {}).get("value") == "object":
                await self.cdp.send(
                    "Runtime.evaluate",
                    {"expression": "browserdeck.ready", "awaitPromise": True},
                    session_id=self._sw_session,
                )
                return
            if asyncio.get_running_loop().time() > deadline:
                raise AssertionError("the extension's service worker never finished starting")
            await asyncio.sleep(0.05)

    async def detach_worker(self) -> None:
        """Let go of the worker so DevTools does not keep it alive."""
        if self._sw_session is not None:
            with contextlib.suppress(Exception):
                await self.cdp.send("Target.detachFromTarget", {"sessionId": self._sw_session})
            self._sw_session = None

    async def pair(
        self, port: int | None = None, token: str | None = None, profile: str | None = None
    ) -> None:
        port = self.relay.port if port is None else port
        profile = self.relay.profile if profile is None else profile
        token = (
            self.relay.auth_headers()["Authorization"].split(" ", 1)[1] if token is None else token
        )
        await self.sw_eval(
            f"chrome.storage.local.set({{relayPort: {port}, relayProfile: {json.dumps(profile)},"
            f" relayToken: {json.dumps(token)}}}).then(() => true)"
        )

    async def open_tab(self, url: str) -> tuple[int, str]:
        """Open a tab the way a user would (not through the relay): (tabId, targetId)."""
        created = await self.cdp.send("Target.createTarget", {"url": url})
        target_id = str(created["targetId"])
        tab_id = await self.sw_eval(
            "(async () => { for (let i = 0; i < 100; i++) {"
            " const t = (await chrome.debugger.getTargets()).find(x => x.id === "
            f"{json.dumps(target_id)}); if (t && t.tabId !== undefined &&"
            " (await chrome.tabs.get(t.tabId)).status === 'complete') return t.tabId;"
            " await new Promise(r => setTimeout(r, 20)); } return null; })()"
        )
        assert isinstance(tab_id, int), f"no tab for target {target_id}"
        return tab_id, target_id

    async def share(self, tab_id: int) -> dict[str, Any]:
        info = await self.sw_eval(f"browserdeck.shareTab({tab_id})")
        assert isinstance(info, dict)
        return info

    async def open_shared(self, url: str) -> tuple[int, str]:
        tab_id, target_id = await self.open_tab(url)
        await self.share(tab_id)
        # shareTab resolves once the worker has *sent* the announcement; the relay reads it
        # on another socket. Return only when the relay itself lists the tab.
        await wait_until(
            lambda: target_id in {t.target_id for t in self.relay.relay.shared_tabs()},
            what=f"the relay to list shared tab {target_id}",
        )
        return tab_id, target_id

    async def browser_targets(self) -> list[dict[str, Any]]:
        """Page targets as Chromium itself sees them (attached = some debugger is on it)."""
        infos = (await self.cdp.send("Target.getTargets"))["targetInfos"]
        return [info for info in infos if info["type"] == "page"]

    async def close(self) -> None:
        try:
            await self.cdp.close()
        finally:
            await self.chromium.close()


async def launch_ext_browser(
    chromium_path: str, user_data_dir: Path, relay: RelayServer, *, headless: bool = True
) -> ExtBrowser:
    chromium = await launch_raw_chromium(
        chromium_path, user_data_dir, extension_flags(), headless=headless
    )
    try:
        cdp = await CDPClient.connect(chromium.ws_url)
    except BaseException:
        await chromium.close()
        raise
    return ExtBrowser(chromium, cdp, relay)


class ProbeCounter:
    """Stands on the relay port while it is down: accepts and drops every connection (so
    the extension sees no relay) and records when each probe came."""

    def __init__(self) -> None:
        self.times: list[float] = []
        self.server: asyncio.Server | None = None

    async def start(self, port: int) -> None:
        async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            self.times.append(time.monotonic())
            writer.transport.abort()

        self.server = await asyncio.start_server(on_connect, "127.0.0.1", port)

    async def stop(self) -> None:
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()


async def wait_until(predicate: Any, *, wait: float = 10.0, what: str = "condition") -> None:
    """Poll a cheap in-process condition (relay state); events are awaited elsewhere."""
    deadline = asyncio.get_running_loop().time() + wait
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)
