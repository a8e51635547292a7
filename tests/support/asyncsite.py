"""Pages that behave like real sites: their effects arrive late (issue 9's page set).

Served on a free loopback port by a threaded server; every delay is a query parameter
(``d`` in ms, default 400), so tests and bench/bench_truth.py drive the same pages.

| page | action | outcome the next observation must show |
|---|---|---|
| /fetch.html?d= | click "Load" (fetch) | "Loaded: 42" |
| /xhr.html?d= | click "Load" (XHR) | "Loaded: 42" |
| /chain.html?d= | click "Load": a fetch, and in answer to it a second one | "Both: 84" |
| /timer.html?d= | click "Load" (setTimeout 20 ms, then fetch) | "Loaded: 42" |
| /link.html?d= | click the link; the target is served after d | heading "Arrived" (and a button "Stay") |
| /form.html?d= | type a name + submit: POST, 303, GET | "Thanks, Ann" |
| /spa.html?d= | click "Items": pushState, fetch, render | "Items: 3", URL /spa/items |
| /reveal.html, /reveal-timer.html | none: a CSS animation and a CSS transition (no DOM change at all), or a timer, reveal text 300 ms after load | the texts |
| /search.html?d= | type (debounced 300 ms, then fetch) | "Result for …" (wait) |
| /scroll.html?d= | press End: the scroll handler fetches more rows | "Row 40" |
| /popup.html | click "Open": window.open | the popup (reported) |
| /live.html?d= | click "Load" while a WebSocket, an EventSource stream and a long poll stay open ("Poll" starts another long poll) | "Loaded: 42", without waiting for those |
| /static.html | click "Count": no network | "Count: 1" |
| /upload.html?d= | set a file: the page uploads it on "change" | "Uploaded: NAME" |

``/api/data?d=`` answers ``{"value": 42}`` after d ms; ``/sse`` and ``/poll`` never end.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.server
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from urllib.parse import parse_qs, urlparse

import websockets
import websockets.asyncio.server

from tests.support.net import free_port

_HEAD = "<!doctype html><html><head><meta charset=utf-8><title>{title}</title>{style}</head>"

PAGES: dict[str, str] = {
    "/fetch.html": """<h1>Fetch</h1><button onclick="go()">Load</button><p id=out>Idle</p>
<script>
async function go() {
  document.getElementById('out').textContent = 'Loading';
  const r = await fetch('/api/data?d=' + D);
  const j = await r.json();
  document.getElementById('out').textContent = 'Loaded: ' + j.value;
}
</script>""",
    "/xhr.html": """<h1>XHR</h1><button onclick="go()">Load</button><p id=out>Idle</p>
<script>
function go() {
  const x = new XMLHttpRequest();
  x.open('GET', '/api/data?d=' + D);
  x.onload = () => { document.getElementById('out').textContent = 'Loaded: ' + JSON.parse(x.responseText).value; };
  x.send();
}
</script>""",
    "/chain.html": """<h1>Chain</h1><button onclick="go()">Load</button><p id=out>Idle</p>
<script>
async function go() {
  const a = await (await fetch('/api/data?d=' + D)).json();
  document.getElementById('out').textContent = 'Half: ' + a.value;
  const b = await (await fetch('/api/data?d=' + D + '&second=1')).json();
  document.getElementById('out').textContent = 'Both: ' + (a.value + b.value);
}
</script>""",
    "/timer.html": """<h1>Timer</h1><button onclick="go()">Load</button><p id=out>Idle</p>
<script>
function go() {
  setTimeout(async () => {
    const j = await (await fetch('/api/data?d=' + D)).json();
    document.getElementById('out').textContent = 'Loaded: ' + j.value;
  }, 20);
}
</script>""",
    "/link.html": """<h1>Links</h1><a id=go href="/slow-page?d=__D__">Go slow</a>""",
    "/form.html": """<h1>Form</h1><form method=post action="/submit?d=__D__">
<label>Name <input name=name></label><button>Send</button></form>""",
    "/spa.html": """<h1>SPA</h1><button onclick="go()">Items</button><main id=view>Home</main>
<script>
async function go() {
  history.pushState({}, '', '/spa/items');
  const j = await (await fetch('/api/data?d=' + D)).json();
  document.getElementById('view').textContent = 'Items: 3 (' + j.value + ')';
}
</script>""",
    "/reveal.html": """<h1>Reveal</h1>
<p id=anim>Revealed by animation</p>
<p id=trans>Revealed by transition</p>""",
    "/reveal-timer.html": """<h1>Reveal</h1>
<p id=timer hidden>Revealed by timer</p>
<script>setTimeout(() => { document.getElementById('timer').hidden = false; }, 300);</script>""",
    "/search.html": """<h1>Search</h1><input aria-label=Search id=q><ul id=results></ul>
<script>
let t;
document.getElementById('q').addEventListener('input', (e) => {
  clearTimeout(t);
  t = setTimeout(async () => {
    const j = await (await fetch('/api/data?d=' + D)).json();
    document.getElementById('results').innerHTML = '<li>Result for ' + e.target.value + ' (' + j.value + ')</li>';
  }, 300);
});
</script>""",
    "/scroll.html": """<h1>Scroll</h1><div id=rows></div><p id=end>Loading more</p>
<script>
let n = 0, busy = false;
function add(k) { for (let i = 0; i < k; i++) { const p = document.createElement('p'); p.textContent = 'Row ' + (++n); document.getElementById('rows').append(p); } }
add(30);
addEventListener('scroll', async () => {
  if (busy || innerHeight + scrollY < document.body.scrollHeight - 50) return;
  busy = true;
  await (await fetch('/api/data?d=' + D)).json();
  add(10);
  busy = false;
});
</script>""",
    "/popup.html": """<h1>Popup</h1><button onclick="window.open('/target.html?from=popup')">Open</button>""",
    "/live.html": """<h1>Live</h1><button onclick="go()">Load</button>
<button onclick="go(true)">Poll</button><p id=out>Idle</p><p id=ws>ws: -</p><p id=sse>sse: -</p>
<script>
const ws = new WebSocket('ws://127.0.0.1:' + WSPORT + '/');
ws.onmessage = (e) => { document.getElementById('ws').textContent = 'ws: ' + e.data; };
const es = new EventSource('/sse');
es.onmessage = (e) => { document.getElementById('sse').textContent = 'sse: ' + e.data; };
fetch('/poll').catch(() => {});  // a long poll from before any action: never answered
async function go(poll) {
  if (poll) fetch('/poll?again=1').catch(() => {});  // one the click itself starts
  const j = await (await fetch('/api/data?d=' + D)).json();
  document.getElementById('out').textContent = 'Loaded: ' + j.value;
}
</script>""",
    "/static.html": """<h1>Static</h1><button onclick="c.textContent = 'Count: ' + (++n)">Count</button>
<p id=c>Count: 0</p><script>let n = 0; const c = document.getElementById('c');</script>""",
    "/target.html": """<h1>Target page</h1>""",
    "/upload.html": """<h1>Upload</h1><input type=file aria-label=File id=f><p id=out>No file</p>
<script>
document.getElementById('f').addEventListener('change', async (e) => {
  const file = e.target.files[0];
  await fetch('/upload?d=' + D, {method: 'POST', body: file});
  document.getElementById('out').textContent = 'Uploaded: ' + file.name;
});
</script>""",
}

_STYLE = {
    "/reveal.html": """<style>
#anim { visibility: hidden; animation: show 1ms linear 300ms forwards; }
@keyframes show { to { visibility: visible; } }
#trans { visibility: visible; transition: visibility 1ms linear 300ms; }
@starting-style { #trans { visibility: hidden; } }
</style>""",
}


class _Handler(http.server.BaseHTTPRequestHandler):
    ws_port = 0
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _delay(self) -> int:
        q = parse_qs(urlparse(self.path).query)
        return int(q.get("d", ["400"])[0])

    def _send(self, status: int, body: str, ctype: str = "text/html; charset=utf-8",
              extra: dict[str, str] | None = None) -> None:
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        with contextlib.suppress(OSError):  # the page went away meanwhile (a test moved on)
            self.wfile.write(data)

    def _page(self, path: str, d: int) -> str:
        body = PAGES[path].replace("__D__", str(d))
        script = f"<script>const D = {d}; const WSPORT = {self.ws_port};</script>"
        title = path.strip("/").removesuffix(".html").capitalize()
        return _HEAD.format(title=title, style=_STYLE.get(path, "")) + f"<body>{script}{body}</body></html>"

    def _endless(self, ctype: str) -> None:
        if ctype != "text/event-stream":  # a long poll: no answer at all until it ends
            with contextlib.suppress(OSError):
                time.sleep(600)
            return
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        try:
            for i in range(600):  # at most 10 minutes, then the test is long over
                if ctype == "text/event-stream":
                    self.wfile.write(f"data: tick {i}\n\n".encode())
                    self.wfile.flush()
                time.sleep(1)
        except OSError:
            pass
        self.close_connection = True

    def do_GET(self) -> None:
        url = urlparse(self.path)
        d = self._delay()
        if url.path in PAGES:
            self._send(200, self._page(url.path, d))
        elif url.path == "/api/data":
            time.sleep(d / 1000)
            self._send(200, '{"value": 42}', "application/json")
        elif url.path == "/slow-page":
            time.sleep(d / 1000)
            self._send(200, _HEAD.format(title="Slow target", style="") + "<body><h1>Arrived</h1><button>Stay</button></body></html>")
        elif url.path == "/done":
            name = parse_qs(url.query).get("name", ["?"])[0]
            self._send(200, _HEAD.format(title="Done", style="") + f"<body><p>Thanks, {name}</p></body></html>")
        elif url.path == "/spa/items":
            self._send(200, self._page("/spa.html", d))
        elif url.path == "/sse":
            self._endless("text/event-stream")
        elif url.path == "/poll":
            self._endless("application/json")
        else:
            self._send(404, "<title>Not found</title><h1>404</h1>")

    def do_POST(self) -> None:
        url = urlparse(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        form = parse_qs(self.rfile.read(length).decode())
        if url.path == "/upload":
            time.sleep(self._delay() / 1000)
            self._send(200, "{}", "application/json")
        elif url.path == "/submit":
            time.sleep(self._delay() / 1000)
            name = form.get("name", ["?"])[0]
            self._send(303, "", extra={"Location": f"/done?name={name}"})
        else:
            self._send(404, "")


@dataclass
class AsyncSite:
    base: str
    server: http.server.ThreadingHTTPServer
    ws_loop: asyncio.AbstractEventLoop
    ws_thread: threading.Thread
    ws_servers: list[websockets.asyncio.server.Server]

    def url(self, path: str, d: int | None = None) -> str:
        sep = "&" if "?" in path else "?"
        return self.base + path + (f"{sep}d={d}" if d is not None else "")

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        async def shut() -> None:
            for server in self.ws_servers:
                server.close()
                await server.wait_closed()
            asyncio.get_running_loop().stop()

        asyncio.run_coroutine_threadsafe(shut(), self.ws_loop)
        self.ws_thread.join(timeout=5)
        self.ws_loop.close()


Handler = Callable[[websockets.asyncio.server.ServerConnection], Awaitable[None]]


def start_ws(
    port: int, serve_one: Handler | None = None
) -> tuple[asyncio.AbstractEventLoop, threading.Thread, list[websockets.asyncio.server.Server]]:
    """A WebSocket server on 127.0.0.1:``port`` in a thread of its own; each connection
    is served by ``serve_one`` (default: a tick every 200 ms)."""
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    servers: list[websockets.asyncio.server.Server] = []

    async def ticks(ws: websockets.asyncio.server.ServerConnection) -> None:
        i = 0
        try:
            while True:
                await ws.send(f"tick {i}")
                i += 1
                await asyncio.sleep(0.2)
        except websockets.ConnectionClosed:
            pass

    def run() -> None:
        asyncio.set_event_loop(loop)

        async def serve() -> None:
            servers.append(
                await websockets.asyncio.server.serve(serve_one or ticks, "127.0.0.1", port)
            )
            ready.set()

        loop.run_until_complete(serve())
        loop.run_forever()

    thread = threading.Thread(target=run, daemon=True, name="asyncsite-ws")
    thread.start()
    ready.wait(5)
    return loop, thread, servers


def start_async_site() -> AsyncSite:
    ws_port = free_port()
    loop, thread, servers = start_ws(ws_port)
    handler = type("Handler", (_Handler,), {"ws_port": ws_port})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True, name="asyncsite").start()
    return AsyncSite(
        f"http://127.0.0.1:{server.server_address[1]}", server, loop, thread, servers
    )


def ref_in(snapshot: str, needle: str) -> str:
    """The ref on the first line of ``snapshot`` that names ``needle`` (fails if none does)."""
    for line in snapshot.splitlines():
        if needle in line and "[ref=" in line:
            return line.split("[ref=", 1)[1].split("]", 1)[0]
    raise AssertionError(f"{needle!r} not in {snapshot}")
