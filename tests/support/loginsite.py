"""A site with a login (username, password, one-time code), for the secrets tests and bench.

Served on a free loopback port by a threaded server. ``http://127.0.0.1:PORT`` and
``http://localhost:PORT`` are two origins of the same site (a secret allowed on the one
is refused on the other).

| page | what it does |
|---|---|
| /login.html | the form (fixed layout: the code input's box is ``CODE_BOX``); logs what is typed to the console |
| POST /login | checks user, password and the current code; sets ``session``; 303 to /account.html |
| /account.html | "Welcome USER" when the session cookie is good, else "Please log in"; shows and sets localStorage ``prefs`` and sessionStorage ``tab`` (on login) |
| /idb.html?v=N | opens IndexedDB ``app`` at version N (store ``items``, a record), and holds it open, ignoring ``versionchange`` |
| /idbread.html | lists database ``app``'s ``items``: id, the Date's year and the bytes' length, e.g. "v2 1970 3" |
| /blank.html | an empty page of the origin |
"""

from __future__ import annotations

import contextlib
import http.server
import secrets
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import parse_qs, urlparse

from browserdeck.secrets import totp
from tests.support.net import free_port

USER = "alice"
PASSWORD = "Corr3ct-Horse&Battery!"
SEED = "JBSWY3DPEHPK3PXP"
# The code input's box on /login.html, in CSS pixels (x, y, width, height).
CODE_BOX = (20, 200, 240, 40)

_LOGIN = """<!doctype html><html><head><meta charset=utf-8><title>Sign in</title>
<style>body{margin:0;font:16px sans-serif;background:#fff}
input{position:absolute;left:20px;width:240px;height:40px;box-sizing:border-box;
font:24px monospace;color:#000;background:#fff;border:1px solid #888}
#user{top:40px}#pw{top:120px}#code{top:200px}#go{position:absolute;left:20px;top:280px}</style>
</head><body><form method=post action=/login>
<input id=user name=user aria-label=Username>
<input id=pw name=password type=password aria-label=Password>
<input id=code name=code aria-label="One-time code" autocomplete=one-time-code>
<button id=go>Sign in</button></form>
<script>
for (const el of document.querySelectorAll('input'))
  el.addEventListener('input', () => console.log('typed ' + el.name + ': ' + el.value));
</script></body></html>"""

_ACCOUNT = """<!doctype html><html><head><meta charset=utf-8><title>Account</title></head><body>
<h1>{greeting}</h1><p id=prefs></p><p id=tab></p>
<script>
if ({fresh}) {{ sessionStorage.setItem('tab', 'tab-token-7'); localStorage.setItem('prefs', 'dark'); }}
document.getElementById('prefs').textContent = 'prefs: ' + localStorage.getItem('prefs');
document.getElementById('tab').textContent = 'tab: ' + sessionStorage.getItem('tab');
</script></body></html>"""

_IDB = """<!doctype html><html><head><meta charset=utf-8><title>IDB</title></head><body>
<p id=state>opening</p><script>
const r = indexedDB.open('app', {version});
r.onupgradeneeded = () => {{ const db = r.result;
  if (!db.objectStoreNames.contains('items')) db.createObjectStore('items', {{keyPath: 'id'}});
  if ({version} > 1 && !db.objectStoreNames.contains('more')) db.createObjectStore('more');
}};
r.onsuccess = () => {{ window.heldDb = r.result;  // held open; versionchange is ignored
  const tx = r.result.transaction('items', 'readwrite');
  tx.objectStore('items').put({{id: 'v{version}', when: new Date(0), bytes: new Uint8Array([1, 2, 3])}});
  tx.oncomplete = () => {{ document.getElementById('state').textContent = 'held v{version}'; }};
}};
</script></body></html>"""


_IDB_READ = """<!doctype html><html><head><meta charset=utf-8><title>IDB read</title></head><body>
<p id=items>reading</p><script>
indexedDB.databases().then((dbs) => {
  if (!dbs.some((d) => d.name === 'app')) { document.getElementById('items').textContent = 'no app'; return; }
  const r = indexedDB.open('app');
  r.onsuccess = () => { const db = r.result;
    const q = db.transaction('items').objectStore('items').getAll();
    q.onsuccess = () => { document.getElementById('items').textContent = 'items: ' + q.result.map(
      (i) => `${i.id} ${i.when.getUTCFullYear()} ${i.bytes.length}`).join(', '); db.close(); };
  };
});
</script></body></html>"""


@dataclass
class LoginSite:
    url: str  # http://127.0.0.1:PORT
    other: str  # http://localhost:PORT: the same site on another origin
    sessions: set[str]


def current_codes() -> set[str]:
    """The one-time codes valid around now (a step either side)."""
    import time

    seed = totp.parse(SEED)
    now = time.time()
    return {seed.code(now + step) for step in (-30, 0, 30)}


@contextlib.contextmanager
def serve_login_site() -> Iterator[LoginSite]:
    sessions: set[str] = set()

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def _send(self, status: int, body: str, headers: dict[str, str] | None = None) -> None:
            data = body.encode()
            self.send_response(status)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)

        def _session(self) -> str | None:
            for part in (self.headers.get("Cookie") or "").split(";"):
                name, _, value = part.strip().partition("=")
                if name == "session" and value in sessions:
                    return value
            return None

        def do_GET(self) -> None:
            parts = urlparse(self.path)
            query = parse_qs(parts.query)
            if parts.path == "/login.html":
                self._send(200, _LOGIN)
            elif parts.path == "/account.html":
                ok = self._session() is not None
                greeting = f"Welcome {USER}" if ok else "Please log in"
                fresh = "true" if query.get("fresh") == ["1"] else "false"
                self._send(200, _ACCOUNT.format(greeting=greeting, fresh=fresh))
            elif parts.path == "/idb.html":
                self._send(200, _IDB.format(version=int(query.get("v", ["1"])[0])))
            elif parts.path == "/idbread.html":
                self._send(200, _IDB_READ)
            elif parts.path == "/blank.html":
                self._send(200, "<!doctype html><title>blank</title>")
            else:
                self._send(404, "not found")

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            form = parse_qs(self.rfile.read(length).decode())
            ok = (
                form.get("user") == [USER]
                and form.get("password") == [PASSWORD]
                and (form.get("code") or [""])[0] in current_codes()
            )
            if not ok:
                self._send(401, "<!doctype html><title>Denied</title><h1>Wrong login</h1>")
                return
            token = secrets.token_urlsafe(16)
            sessions.add(token)
            self._send(
                303,
                "",
                {"Location": "/account.html?fresh=1", "Set-Cookie": f"session={token}; Path=/"},
            )

    port = free_port()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield LoginSite(f"http://127.0.0.1:{port}", f"http://localhost:{port}", sessions)
    finally:
        server.shutdown()
        server.server_close()
