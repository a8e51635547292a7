"""Pages the MCP tests drive, served on 127.0.0.1 by a real HTTP server."""

from __future__ import annotations

import http.server
from collections.abc import Iterator
from contextlib import contextmanager

from tests.support.net import serve_http

PAGES: dict[str, str] = {
    "/shop.html": """<!doctype html><html><head><meta charset="utf-8"><title>Shop demo</title>
<meta name="description" content="A demo shop"></head><body>
<header><nav><a href="/">Home</a> <a href="/products">Products</a> <a href="/about">About us</a></nav>
<input type="search" placeholder="Search products" aria-label="Search"> <button>Search</button></header>
<main><h1>Featured products</h1>
<article><h2>Red chair</h2><p>A comfortable red chair.</p><span>$120</span>
<button onclick="document.getElementById('cart').textContent='1 item'">Add to cart</button>
<a href="/p/1">Details</a></article>
<article><h2>Blue table</h2><p>Blue table with a glass top.</p><span>$340</span>
<button>Add to cart</button><a href="/p/2">Details</a></article>
<p id="cart">cart empty</p>
<div onclick="this.textContent='div clicked'" style="cursor:pointer">Clickable div</div>
<table><tr><th>Size</th><th>Price</th></tr><tr><td>S</td><td>10</td></tr></table>
</main><footer><ul><li><a href="/privacy">Privacy</a></li></ul></footer>
<script>console.log('shop ready'); console.error('shop error line');</script>
</body></html>""",
    "/form.html": """<!doctype html><html><head><meta charset="utf-8"><title>Form</title></head><body>
<form id="f" onsubmit="event.preventDefault(); document.getElementById('out').textContent =
  'sent ' + new FormData(this).get('email') + ' ' + new FormData(this).get('freq');">
<label>Email <input type="email" name="email"></label>
<label><input type="checkbox" name="agree"> I agree</label>
<select name="freq" aria-label="Frequency"><option>Weekly</option><option>Monthly</option></select>
<label>Upload <input type="file" name="doc" onchange="document.getElementById('file').textContent =
  Array.from(this.files).map(f => f.name).join(',')"></label>
<button type="submit">Subscribe</button></form>
<p id="out">not sent</p><p id="file">no file</p>
<button onclick="document.getElementById('dlg').textContent = 'confirm: ' + confirm('Sure?')">Ask</button>
<button onclick="document.getElementById('dlg').textContent = 'prompt: ' + prompt('Name?')">Prompt</button>
<p id="dlg">no dialog</p>
<div id="hover" onmouseover="this.textContent='hovered'" role="button" tabindex="0">Hover me</div>
<input id="keys" aria-label="Keys" onkeydown="document.getElementById('key').textContent = event.key">
<p id="key">no key</p>
</body></html>""",
    "/frames.html": """<!doctype html><html><head><meta charset="utf-8"><title>Frames</title></head><body>
<button>Top button</button>
<iframe src="/inner.html" title="inner"></iframe>
<div id="host"></div>
<script>const r = document.getElementById('host').attachShadow({mode: 'open'});
r.innerHTML = '<button>Shadow button</button><a href="/x">Shadow link</a>';</script>
<button>Same</button><button>Same</button>
</body></html>""",
    "/inner.html": """<!doctype html><html><body><button>Inner button</button>
<input aria-label="Inner field"></body></html>""",
    "/long.html": "<!doctype html><html><head><title>Long</title></head><body>"
    + "".join(f"<p>Paragraph {i} <a href='/l/{i}'>link {i}</a></p>" for i in range(1500))
    + "</body></html>",
    "/next.html": """<!doctype html><html><head><title>Next page</title></head><body>
<h1>Next</h1><a href="/shop.html">Back to shop</a></body></html>""",
    # A dedicated worker and a service worker that both log (127.0.0.1 is a secure
    # context); the service worker answers /via-sw/<path> with its own fetch().
    "/workers.html": """<!doctype html><html><head><title>Workers</title></head><body>
<script>console.log('page hello');
const worker = new Worker('/worker.js'); worker.postMessage('start');
navigator.serviceWorker.register('/sw.js');</script></body></html>""",
    "/worker.js": "onmessage = (e) => console.log('worker got ' + e.data);",
    "/sw.js": """self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (e) => e.waitUntil(self.clients.claim()));
self.addEventListener('message', (e) => console.warn('service worker got ' + e.data));
self.addEventListener('fetch', (e) => {
  const url = new URL(e.request.url);
  if (url.pathname.startsWith('/via-sw/')) e.respondWith(fetch(url.pathname.slice(7)));
});""",
}


class _Handler(http.server.BaseHTTPRequestHandler):
    def page(self, path: str) -> str | None:
        """The body served at ``path`` (None: 404); another site overrides it."""
        return PAGES.get(path)

    def do_GET(self) -> None:
        body = self.page(self.path.split("?")[0])
        if body is None:
            self.send_response(404)
            self.end_headers()
            return
        data = body.encode()
        self.send_response(200)
        ctype = "text/javascript" if self.path.split("?")[0].endswith(".js") else "text/html"
        self.send_header("Content-Type", f"{ctype}; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def serve_site(handler: type[_Handler] = _Handler) -> Iterator[str]:
    with serve_http(handler, "mcp-test-site") as url:
        yield url
