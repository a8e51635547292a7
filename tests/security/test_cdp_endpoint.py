"""Issue 10 item 2: a managed browser is reachable only through browserdeck's CDP endpoint.

The browser has no DevTools port (``--remote-debugging-pipe``); browserdeck serves its
CDP on the profile's cdpPort behind the API token, and applies the URL policy to every
client there. Checked with real clients: another local user (``nobody`` via setpriv when
the tests run as root), Puppeteer and Playwright for Node from npm, Python Playwright,
and a raw WebSocket client trying to dodge the policy.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio
import websockets
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import async_playwright

from browserdeck.chrome.procs import process_cmdline, process_group_members
from browserdeck.service import Service
from tests.support.node import node_modules, run_node
from tests.support.service import running_service

pytestmark = pytest.mark.asyncio(loop_scope="module")


class Managed:
    def __init__(self, service: Service, api: httpx.AsyncClient, status: dict[str, Any]) -> None:
        self.service = service
        self.api = api
        self.pid = int(status["pid"])
        self.cdp_url = str(status["cdpUrl"])
        self.port = int(self.cdp_url.rsplit(":", 1)[1])
        self.token = service.api_token
        self.headers = {"Authorization": f"Bearer {self.token}"}
        self.ws_url = f"ws://127.0.0.1:{self.port}/devtools/browser"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def managed(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Managed]:
    """One service with a started managed browser for the whole module."""
    home = tmp_path_factory.mktemp("bdhome")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("BROWSERDECK_HOME", str(home))
        patch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
        async with running_service() as (service, api):
            started = await api.post("/start")
            assert started.status_code == 200, started.text
            yield Managed(service, api, started.json())


def listening_inodes() -> dict[str, int]:
    """inode -> port of every TCP LISTEN socket on this machine."""
    found: dict[str, int] = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A":
                found[fields[9]] = int(fields[1].rsplit(":", 1)[1], 16)
    return found


def open_sockets(pid: int) -> set[str]:
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    return inodes


async def test_the_browser_listens_on_no_port(managed: Managed) -> None:
    argv = process_cmdline(managed.pid) or []
    assert "--remote-debugging-pipe" in argv
    assert not [a for a in argv if a.startswith("--remote-debugging-port")]
    listening = listening_inodes()
    for pid in process_group_members(managed.pid):
        held = open_sockets(pid) & listening.keys()
        assert not held, f"browser process {pid} listens on port(s) {[listening[i] for i in held]}"


# Run as another local user: every way in must be refused without the token.
NOBODY_PROBE = r"""
import json, socket, sys, urllib.request, urllib.error
port = int(sys.argv[1])
out = {}
for path in ("/json/version", "/json/list", "/json/new?file:///etc/shadow"):
    try:
        urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5)
        out[path] = 200
    except urllib.error.HTTPError as exc:
        out[path] = exc.code
s = socket.create_connection(("127.0.0.1", port), timeout=5)
s.sendall(b"GET /devtools/browser HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
          b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
          b"Sec-WebSocket-Version: 13\r\n\r\n")
out["ws"] = s.recv(200).decode("latin-1").split("\r\n")[0]
print(json.dumps(out))
"""


async def test_another_local_user_cannot_drive_it(managed: Managed) -> None:
    if os.geteuid() != 0:
        pytest.skip("dropping to another user (nobody) needs root")
    result = await asyncio.to_thread(
        subprocess.run,
        ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--",
         "/usr/bin/python3", "-c", NOBODY_PROBE, str(managed.port)],
        capture_output=True, text=True, timeout=60, cwd="/",
    )
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout)
    assert seen["/json/version"] == 401
    assert seen["/json/list"] == 401
    assert seen["/json/new?file:///etc/shadow"] == 401
    assert seen["ws"].startswith("HTTP/1.1 401"), seen["ws"]


async def test_a_wrong_token_is_refused(managed: Managed) -> None:
    async with httpx.AsyncClient(trust_env=False) as http:
        wrong = await http.get(managed.cdp_url + "/json/version",
                               headers={"Authorization": "Bearer nope"})
        right = await http.get(managed.cdp_url + "/json/version", headers=managed.headers)
    assert wrong.status_code == 401
    assert right.status_code == 200
    assert right.json()["webSocketDebuggerUrl"].startswith(f"ws://127.0.0.1:{managed.port}/")
    with pytest.raises(websockets.InvalidStatus):
        await websockets.connect(managed.ws_url, additional_headers={"Authorization": "Bearer x"})


PUPPETEER = r"""
const puppeteer = require("puppeteer-core");
(async () => {
  const browser = await puppeteer.connect({ browserWSEndpoint: process.env.WS,
      headers: { Authorization: "Bearer " + process.env.TOKEN } });
  const page = await browser.newPage();
  await page.goto("data:text/html,<title>from puppeteer</title><p>hi</p>");
  const sum = await page.evaluate(() => 20 + 22);
  const title = await page.title();
  let navigate = "allowed";
  try { await page.goto("file:///etc/hostname"); } catch (e) { navigate = e.message; }
  const cdp = await browser.target().createCDPSession();
  let create = "allowed";
  try { await cdp.send("Target.createTarget", { url: "file:///etc/hostname" }); }
  catch (e) { create = e.message; }
  const pages = (await browser.pages()).length;
  await page.close();
  await browser.disconnect();
  console.log("RESULT " + JSON.stringify({ sum, title, navigate, create, pages }));
})().catch((e) => { console.error(e); process.exit(1); });
"""


async def test_puppeteer_drives_it_with_the_token_and_file_urls_stay_refused(
    managed: Managed,
) -> None:
    result = await run_node(
        PUPPETEER, node_modules(), env={"WS": managed.ws_url, "TOKEN": managed.token}
    )
    assert result["sum"] == 42
    assert result["title"] == "from puppeteer"
    assert "file:// URLs are not allowed" in result["navigate"]
    assert "file:// URLs are not allowed" in result["create"]
    assert result["pages"] >= 1


async def test_python_playwright_drives_it_with_the_token(managed: Managed) -> None:
    async with async_playwright() as pw:
        browser = await pw.chromium.connect_over_cdp(managed.cdp_url, headers=managed.headers)
        try:
            page = await browser.contexts[0].new_page()
            await page.goto("data:text/html,<title>from playwright</title>")
            assert await page.evaluate("6 * 7") == 42
            assert await page.title() == "from playwright"
            with pytest.raises(PlaywrightError, match="file:// URLs are not allowed"):
                await page.goto("file:///etc/hostname")
            await page.close()
        finally:
            await browser.close()  # disconnects; the managed browser keeps running
    # Our own engine shares the browser with those clients meanwhile.
    opened = await managed.api.post("/tabs/open", json={"url": "data:text/html,<h1>ours</h1>"})
    assert opened.status_code == 200, opened.text
    snap = await managed.api.get("/snapshot", params={"targetId": opened.json()["targetId"]})
    assert snap.status_code == 200 and "ours" in snap.text


class RawCdp:
    """A raw CDP WebSocket client that sends exactly the bytes it is given."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws

    async def call(self, raw: str, call_id: int) -> dict[str, Any]:
        await self.ws.send(raw)
        while True:
            message = json.loads(await asyncio.wait_for(self.ws.recv(), 10))
            if message.get("id") == call_id and "sessionId" not in message:
                return message  # type: ignore[no-any-return]


async def test_the_policy_cannot_be_dodged_and_big_payloads_pass(managed: Managed) -> None:
    async with websockets.connect(
        managed.ws_url, additional_headers=managed.headers, max_size=None
    ) as ws:
        cdp = RawCdp(ws)
        tricks = [
            '{"id":1,"method":"Target.createTarget","params":{"url":"fi\\tle:///etc/hostname"}}',
            '{"id":2,"method":"Target.create\\u0054arget","params":{"url":"file:///etc/hostname"}}',
            '{"id":3,"params":{"url":"view-source:file:///etc/hostname"},"method":"Target.createTarget"}',
            '{"id":4,"method":"Runtime.evaluate","method":"Target.createTarget",'
            '"params":{"url":"file:///etc/hostname","expression":"1"}}',
            '{"id":5,"method":"Target.createTarget","params":{"url":" \\u0001FILE:///etc/hostname"}}',
            '{"id":6,"method":"Target.createTarget","params":{"url":"filesystem:file:///etc/x"}}',
        ]
        for n, trick in enumerate(tricks, start=1):
            answer = await cdp.call(trick, n)
            assert "error" in answer, f"{trick} was let through: {answer}"
        created = await cdp.call(
            '{"id":7,"method":"Target.createTarget","params":{"url":"about:blank"}}', 7
        )
        target = created["result"]["targetId"]
        attached = await cdp.call(
            json.dumps({"id": 8, "method": "Target.attachToTarget",
                        "params": {"targetId": target, "flatten": True}}), 8)
        session = attached["result"]["sessionId"]
        # On a page session, with the session named first (not where Playwright puts it).
        await ws.send(json.dumps({"sessionId": session, "id": 9, "method": "Page.navigate",
                                  "params": {"url": "file:///etc/hostname"}}))
        refused = json.loads(await asyncio.wait_for(ws.recv(), 10))
        assert refused["id"] == 9 and "file:// URLs are not allowed" in refused["error"]["message"]
        # 24 MiB back from the browser, untouched.
        await ws.send(json.dumps({"id": 10, "method": "Runtime.evaluate", "sessionId": session,
                                  "params": {"expression": "'x'.repeat(24 * 2**20)",
                                             "returnByValue": True}}))
        while True:
            message = json.loads(await asyncio.wait_for(ws.recv(), 30))
            if message.get("id") == 10:
                break
        assert message["sessionId"] == session
        assert len(message["result"]["result"]["value"]) == 24 * 2**20
        await cdp.call(json.dumps({"id": 11, "method": "Target.closeTarget",
                                   "params": {"targetId": target}}), 11)


async def test_file_urls_pass_when_the_setting_allows_them(managed: Managed) -> None:
    managed.service.config.allow_file_urls = True
    try:
        async with websockets.connect(managed.ws_url, additional_headers=managed.headers) as ws:
            answer = await RawCdp(ws).call(
                '{"id":1,"method":"Target.createTarget","params":{"url":"file:///etc/hostname"}}', 1
            )
            assert "result" in answer, answer
            await RawCdp(ws).call(json.dumps({"id": 2, "method": "Target.closeTarget", "params": {
                "targetId": answer["result"]["targetId"]}}), 2)
    finally:
        managed.service.config.allow_file_urls = False


async def test_a_page_cannot_forge_what_the_engine_reads_through_the_endpoint() -> None:
    """The gateway fetches Playwright's results as JSON strings only in isolated worlds
    (chrome/byvalue.py). A hostile page that replaces JSON.stringify and adds a toJSON to
    every object in its own world changes neither an evaluate's result (run in the
    page's world) nor the snapshot (run in Playwright's)."""
    hostile = (
        "data:text/html,<script>JSON.stringify = () => '\"forged\"';"
        "Object.prototype.toJSON = () => 'forged';</script><button>Real</button>"
    )
    async with running_service() as (_service, client):
        opened = await client.post("/tabs/open", json={"url": hostile})
        assert opened.status_code == 200, opened.text
        on_tab = {"targetId": opened.json()["targetId"]}
        ran = await client.post(
            "/act", json={"kind": "evaluate", "fn": "() => ({a: [1, 'two']})", **on_tab}
        )
        assert ran.status_code == 200, ran.text
        assert ran.json()["result"] == {"a": [1, "two"]}, ran.json()
        snap = await client.get("/snapshot", params=on_tab)
        assert snap.status_code == 200, snap.text
        assert 'button "Real"' in snap.json()["snapshot"]
        assert "forged" not in snap.json()["snapshot"]


async def test_wrapped_and_file_taking_commands_follow_the_same_policy(
    managed: Managed, tmp_path: Path
) -> None:
    """Issue 31 item 3: the same ``Page.navigate`` inside ``Target.sendMessageToTarget``
    (a non-flat session) used to open and read local files through the endpoint, and
    ``DOM.setFileInputFiles`` / ``Browser.setDownloadBehavior`` took any path. One policy
    now sees every command, wrapped ones included, and confines files like uploads."""
    root = tmp_path / "uploads"
    root.mkdir()
    (root / "ok.txt").write_text("fine")
    outside = tmp_path / "outside.txt"
    outside.write_text("OUTSIDE")
    os.link(outside, root / "hard.txt")
    managed.service.config.upload_roots = [str(root)]
    page = "data:text/html,<title>policy</title><input type=file>"
    try:
        async with websockets.connect(
            managed.ws_url, additional_headers=managed.headers, max_size=None
        ) as ws:
            cdp = RawCdp(ws)
            created = await cdp.call(json.dumps({"id": 1, "method": "Target.createTarget",
                                                 "params": {"url": page}}), 1)  # fmt: skip
            target = created["result"]["targetId"]
            nonflat = await cdp.call(json.dumps({"id": 2, "method": "Target.attachToTarget",
                                                 "params": {"targetId": target}}), 2)  # fmt: skip
            session = nonflat["result"]["sessionId"]

            def wrap(call_id: int, inner: dict[str, Any]) -> str:
                return json.dumps({"id": call_id, "method": "Target.sendMessageToTarget",
                                   "params": {"sessionId": session,
                                              "message": json.dumps(inner)}})  # fmt: skip

            # Wrapped, escaped, doubly wrapped: refused before the browser sees them.
            navigate = {"id": 1, "method": "Page.navigate",
                        "params": {"url": "file:///etc/hostname"}}  # fmt: skip
            escaped = json.dumps(navigate).replace("navigate", "navig\\u0061te")
            for n, raw in enumerate(
                (
                    wrap(3, navigate),
                    json.dumps({"id": 4, "method": "Target.sendMessageToTarget",
                                "params": {"sessionId": session, "message": escaped}}),
                    wrap(5, json.loads(wrap(1, navigate))),
                ),
                start=3,
            ):  # fmt: skip
                answer = await cdp.call(raw, n)
                assert "file:// URLs are not allowed" in answer.get("error", {}).get("message", ""), answer
            # What the policy does not police still works wrapped.
            ok = await cdp.call(wrap(6, {"id": 7, "method": "Runtime.evaluate",
                                         "params": {"expression": "location.href"}}), 6)  # fmt: skip
            assert "result" in ok, ok
            # A way around the policy altogether is refused.
            exposed = await cdp.call(json.dumps({"id": 8, "method": "Target.exposeDevToolsProtocol",
                                                 "params": {"targetId": target}}), 8)  # fmt: skip
            assert "error" in exposed and "exposeDevToolsProtocol" in exposed["error"]["message"]

            # Files handed to the page: only what uploads may read.
            flat = await cdp.call(json.dumps({"id": 9, "method": "Target.attachToTarget",
                                              "params": {"targetId": target, "flatten": True}}), 9)  # fmt: skip
            page_session = flat["result"]["sessionId"]

            async def on_page(call_id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
                await ws.send(json.dumps({"id": call_id, "method": method, "params": params,
                                          "sessionId": page_session}))  # fmt: skip
                while True:
                    message = json.loads(await asyncio.wait_for(ws.recv(), 10))
                    if message.get("id") == call_id and message.get("sessionId") == page_session:
                        return message  # type: ignore[no-any-return]

            loaded = ("new Promise(r => document.readyState === 'complete' ? r(1)"
                      " : addEventListener('load', () => r(1)))")  # fmt: skip
            await on_page(90, "Runtime.evaluate", {"expression": loaded, "awaitPromise": True})
            document = await on_page(10, "DOM.getDocument", {})
            node = (await on_page(11, "DOM.querySelector", {
                "nodeId": document["result"]["root"]["nodeId"], "selector": "input"}))["result"]["nodeId"]  # fmt: skip
            for n, path in enumerate(("/etc/hostname", str(outside), str(root / "hard.txt")), 12):
                answer = await on_page(n, "DOM.setFileInputFiles", {"files": [path], "nodeId": node})
                assert "cannot upload" in answer.get("error", {}).get("message", ""), (path, answer)
                dragged = await on_page(n + 10, "Input.dispatchDragEvent", {
                    "type": "drop", "x": 5, "y": 5,
                    "data": {"items": [], "files": [path], "dragOperationsMask": 1}})  # fmt: skip
                assert "cannot upload" in dragged.get("error", {}).get("message", ""), (path, dragged)
            chosen = await on_page(30, "DOM.setFileInputFiles",
                                   {"files": [str(root / "ok.txt")], "nodeId": node})  # fmt: skip
            assert "result" in chosen, chosen
            count = await on_page(31, "Runtime.evaluate", {
                "expression": "document.querySelector('input').files[0].name",
                "returnByValue": True})  # fmt: skip
            assert count["result"]["result"]["value"] == "ok.txt"

            # Downloads written only to a temporary or an uploadRoots folder.
            for n, folder in enumerate((str(Path.home() / ".ssh"), str(Path.home()), "/etc"), 40):
                for method in ("Browser.setDownloadBehavior", "Page.setDownloadBehavior"):
                    raw = {"id": n, "method": method,
                           "params": {"behavior": "allow", "downloadPath": folder}}  # fmt: skip
                    if method.startswith("Page"):
                        answer = await on_page(n + 100, method, raw["params"])
                    else:
                        answer = await cdp.call(json.dumps(raw), n)
                    assert "downloads cannot go" in answer.get("error", {}).get("message", ""), (
                        method, folder, answer)  # fmt: skip
            allowed = await cdp.call(json.dumps({"id": 50, "method": "Browser.setDownloadBehavior",
                                                 "params": {"behavior": "allow",
                                                            "downloadPath": str(root)}}), 50)  # fmt: skip
            assert "result" in allowed, allowed
            await cdp.call(json.dumps({"id": 51, "method": "Browser.setDownloadBehavior",
                                       "params": {"behavior": "default"}}), 51)  # fmt: skip

            # Nothing the policy refused reached the browser: the page is where it was.
            info = await cdp.call(json.dumps({"id": 60, "method": "Target.getTargetInfo",
                                              "params": {"targetId": target}}), 60)  # fmt: skip
            assert info["result"]["targetInfo"]["url"].startswith("data:"), info
            await cdp.call(json.dumps({"id": 61, "method": "Target.closeTarget",
                                       "params": {"targetId": target}}), 61)  # fmt: skip
    finally:
        managed.service.config.upload_roots = []
