"""Pages that use the network the ways the network tests need, on two origins.

One threaded server on a free loopback port, reached as ``http://127.0.0.1:<port>``
(``base``) and as ``http://localhost:<port>`` (``other``): two origins to Chromium, so a
rule can refuse one and keep the other. A WebSocket server beside it counts the
connections it gets (``ws_connections``); every HTTP request is logged with its Host
(``hits``), so a test can tell whether a refused request left the browser at all.

| page | what it does |
|---|---|
| /app.html | fetches /api/user and shows "User: <name>" |
| /script.html | loads /lib.js, which writes "script ran" |
| /image.html | loads /pic.png; says "image loaded" or "image failed" |
| /cached.html | the same with /cached.png, which the browser may keep an hour |
| /online.html | button "Ping": fetch /api/ping, "Online" or "Offline" |
| /delayed.html | 50 ms after load, fetch /api/slow?d=300 with an Authorization header |
| /origins.html?other=URL&ws=URL | an image, an EventSource, a WebSocket, a popup, links |
| /redirect?to=URL | a 302 to URL |
| /opener.html | button "Open": a popup of /later.html, which fetches /api/user 800 ms after load |
"""

from __future__ import annotations

import asyncio
import base64
import http.server
import threading
import time
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlparse

import websockets
import websockets.asyncio.server

from tests.support.asyncsite import start_ws
from tests.support.net import free_port

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
SECRET = "Bearer s3cret-token-42"

PAGES = {
    "/app.html": """<title>App</title><h1>App</h1><p id=out>Loading</p><script>
fetch('/api/user', {headers: {'X-Client': 'web'}}).then(r => r.json())
  .then(j => document.getElementById('out').textContent = 'User: ' + j.name)
  .catch(e => document.getElementById('out').textContent = 'Error: ' + e);
</script>""",
    "/script.html": """<title>Script</title><p id=out>no script</p><script src="/lib.js"></script>""",
    "/image.html": """<title>Image</title><p id=out>image pending</p>
<img src="/pic.png" onload="out.textContent='image loaded'" onerror="out.textContent='image failed'">""",
    "/online.html": """<title>Online</title><button onclick="go()">Ping</button><p id=out>Idle</p>
<script>
async function go() {
  try { await (await fetch('/api/ping')).text(); out.textContent = 'Online'; }
  catch (e) { out.textContent = 'Offline'; }
}
</script>""",
    "/delayed.html": """<title>Delayed</title><p id=out>Waiting</p><script>
setTimeout(async () => {
  // Built here, so the page's own text never holds the header's value.
  const auth = ['Bearer', 's3cret-token-' + (40 + 2)].join(' ');
  const r = await fetch('/api/slow?d=300', {headers: {Authorization: auth}});
  document.getElementById('out').textContent = 'Got: ' + (await r.json()).slow;
}, 50);
</script>""",
    "/origins.html": """<title>Origins</title><h1>Origins</h1>
<p id=ws>ws: idle</p><p id=es>es: idle</p><p id=pop>popup: idle</p>
<img id=img src="__OTHER__/pic.png">
<button onclick="openWs()">Socket</button>
<button onclick="openEs()">Stream</button>
<button onclick="openPopup()">Popup</button>
<a href="__OTHER__/page.html" target="_blank">Other tab</a>
<a href="__OTHER__/page.html">Other site</a>
<script>
function openWs() {
  try {
    const s = new WebSocket('__WS__');
    s.onopen = () => { ws.textContent = 'ws: open'; };
    s.onerror = () => { ws.textContent = 'ws: error'; };
  } catch (e) { ws.textContent = 'ws: refused'; }
}
function openEs() {
  const s = new EventSource('__OTHER__/sse');
  s.onopen = () => { es.textContent = 'es: open'; };
  s.onerror = () => { es.textContent = 'es: error'; s.close(); };
}
function openPopup() {
  const w = window.open('__OTHER__/page.html');
  pop.textContent = w ? 'popup: opened' : 'popup: refused';
}
</script>""",
    "/page.html": "<title>Page</title><h1>A page</h1>",
    "/opener.html": """<title>Opener</title><button onclick="window.open('/later.html')">Open</button>""",
    "/later.html": """<title>Later</title><p id=out>Loading</p><script>
setTimeout(() => fetch('/api/user').then(r => r.json())
  .then(j => document.getElementById('out').textContent = 'User: ' + j.name), 800);
</script>""",
    "/cached.html": """<title>Cached</title><p id=out>image pending</p>
<img src="/cached.png" onload="out.textContent='image loaded'" onerror="out.textContent='image failed'">""",
}


@dataclass
class NetSite:
    port: int
    ws_port: int
    server: http.server.ThreadingHTTPServer
    hits: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)
    ws_connections: list[str] = field(default_factory=list)
    ws_loop: asyncio.AbstractEventLoop | None = None
    ws_thread: threading.Thread | None = None
    ws_server: websockets.asyncio.server.Server | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def other(self) -> str:
        return f"http://localhost:{self.port}"

    def url(self, path: str) -> str:
        return self.base + path

    def origins_page(self, ws_host: str = "localhost") -> str:
        ws = f"ws://{ws_host}:{self.ws_port}/"
        return self.url(f"/origins.html?other={self.other}&ws={ws}")

    def hosts(self, path_prefix: str = "/") -> list[str]:
        """The Host of every request so far whose path starts with ``path_prefix``."""
        return [host for host, path, _ in self.hits if path.startswith(path_prefix)]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        loop = self.ws_loop
        if loop is None:
            return

        async def shut() -> None:
            if self.ws_server is not None:
                self.ws_server.close()
                await self.ws_server.wait_closed()
            asyncio.get_running_loop().stop()

        asyncio.run_coroutine_threadsafe(shut(), loop)
        if self.ws_thread is not None:
            self.ws_thread.join(timeout=5)
        loop.close()


class _Handler(http.server.BaseHTTPRequestHandler):
    site: NetSite
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _send(self, code: int, body: bytes, ctype: str) -> None:
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("Access-Control-Allow-Origin", "*")
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        url = urlparse(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        self.site.hits.append((self.headers.get("Host", ""), url.path, dict(self.headers)))
        if url.path in PAGES:
            page = PAGES[url.path].replace("__OTHER__", query.get("other", ""))
            page = page.replace("__WS__", query.get("ws", ""))
            self._send(200, f"<!doctype html><meta charset=utf-8>{page}".encode(), "text/html")
        elif url.path == "/redirect":
            self.send_response(302)
            self.send_header("Location", query.get("to", "/"))
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif url.path == "/api/user":
            self._send(200, b'{"name": "Real"}', "application/json")
        elif url.path == "/api/ping":
            self._send(200, b"pong", "text/plain")
        elif url.path == "/api/slow":
            time.sleep(int(query.get("d", "300")) / 1000)
            self._send(200, b'{"slow": "yes"}', "application/json")
        elif url.path == "/lib.js":
            self._send(200, b"document.getElementById('out').textContent = 'script ran';", "text/javascript")
        elif url.path == "/pic.png":
            self._send(200, PNG, "image/png")
        elif url.path == "/cached.png":  # the browser keeps it for an hour
            self.send_response(200)
            self.send_header("Content-Type", "image/png")
            self.send_header("Content-Length", str(len(PNG)))
            self.send_header("Cache-Control", "max-age=3600")
            self.end_headers()
            self.wfile.write(PNG)
        elif url.path == "/sse":
            self._send(200, b"data: hello\n\n", "text/event-stream")
        else:
            self._send(404, b"not found", "text/plain")


def start_net_site() -> NetSite:
    ws_port = free_port()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    site = NetSite(server.server_address[1], ws_port, server)
    server.RequestHandlerClass = type("Handler", (_Handler,), {"site": site})
    threading.Thread(target=server.serve_forever, daemon=True, name="netsite").start()

    async def count(ws: websockets.asyncio.server.ServerConnection) -> None:
        site.ws_connections.append(ws.request.headers.get("Host", "") if ws.request else "")
        try:
            await ws.send("hello")
            await ws.wait_closed()
        except websockets.ConnectionClosed:
            pass

    loop, thread, servers = start_ws(ws_port, count)
    site.ws_server = servers[0]
    site.ws_loop, site.ws_thread = loop, thread
    return site
