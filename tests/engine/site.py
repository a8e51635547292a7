"""The fixture web site: tests/engine/pages served on two loopback ports (two origins).

``{{ORIGIN2}}`` in a page becomes the second origin (``http://localhost:<port2>``: a
different host, so Chromium puts that iframe in its own process, the hard case).
Dynamic routes: ``/download`` (an attachment), ``/status/<code>``, ``/big.html?n=``
(a generated page of ``n`` buttons and links, for the benchmark).
"""

from __future__ import annotations

import http.server
import threading
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, urlparse

from tests.support.net import free_port

PAGES = Path(__file__).parent / "pages"


def big_page(n: int) -> str:
    rows = "".join(
        f'<div class="row"><button onclick="hit({i})">Button {i}</button>'
        f'<a href="#r{i}">Link {i}</a></div>'
        for i in range(n // 2)
    )
    return (
        "<!doctype html><html><head><title>Big</title></head><body>"
        f'<div id="hit">-</div>{rows}'
        "<script>function hit(i){document.getElementById('hit').textContent='hit '+i}</script>"
        "</body></html>"
    )


class _Handler(http.server.BaseHTTPRequestHandler):
    origin2 = ""

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _send(
        self, status: int, body: bytes, ctype: str, extra: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (extra or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        url = urlparse(self.path)
        if url.path == "/download":
            self._send(
                200,
                b"hello download\n",
                "application/octet-stream",
                {"Content-Disposition": 'attachment; filename="report.txt"'},
            )
            return
        if url.path.startswith("/status/"):
            code = int(url.path.rsplit("/", 1)[1])
            self._send(code, f"status {code}".encode(), "text/plain")
            return
        if url.path == "/big.html":
            n = int(parse_qs(url.query).get("n", ["2000"])[0])
            self._send(200, big_page(n).encode(), "text/html; charset=utf-8")
            return
        name = url.path.lstrip("/") or "index.html"
        if url.path.startswith("/spa/"):
            name = "spa.html"
        path = (PAGES / name).resolve()
        if PAGES.resolve() not in path.parents or not path.is_file():
            self._send(404, b"not found", "text/plain")
            return
        body = path.read_text(encoding="utf-8").replace("{{ORIGIN2}}", self.origin2)
        # Workers and service workers must be served as JavaScript.
        ctype = "text/javascript" if path.suffix == ".js" else "text/html"
        self._send(200, body.encode(), f"{ctype}; charset=utf-8")


@dataclass
class Site:
    origin: str  # http://127.0.0.1:<port>
    origin2: str  # http://localhost:<port2>, a second site
    _servers: tuple[http.server.ThreadingHTTPServer, ...] = ()

    def url(self, path: str) -> str:
        return f"{self.origin}/{path.lstrip('/')}"

    def close(self) -> None:
        for server in self._servers:
            server.shutdown()
            server.server_close()


def start_site() -> Site:
    port1, port2 = free_port(), free_port()
    origin2 = f"http://localhost:{port2}"
    handler = type("Handler", (_Handler,), {"origin2": origin2})
    servers = []
    for port in (port1, port2):
        server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, name=f"site-{port}", daemon=True).start()
        servers.append(server)
    return Site(f"http://127.0.0.1:{port1}", origin2, tuple(servers))
