"""The pages the recording tests drive, served on 127.0.0.1 by a real HTTP server.

``/login.html`` signs in with a delayed fetch: the click's effect (a green banner, a
console error, a failed request) arrives 400 ms after the click, so a recording that does
not wait for it shows nothing changed. ``/anim.html`` repaints on every frame (a live view
has something to send); ``/noise.html`` is random pixels (images as large as they get).
"""

from __future__ import annotations

import contextlib
import time

from tests.mcp import site

LOGIN = """<!doctype html><html><head><meta charset="utf-8"><title>Sign in</title>
<style>body{font:16px sans-serif;margin:40px} #banner{height:120px;margin-top:30px}
.ok{background:#2e7d32;color:#fff}</style></head><body>
<h1>Sign in</h1>
<label>User <input name="user" aria-label="User"></label><br><br>
<label>Password <input type="password" name="pw" aria-label="Password"></label><br><br>
<button id="go" onclick="signIn()">Sign in</button>
<div id="banner">not signed in</div>
<script>
async function signIn() {
  const r = await fetch('/slow-login');
  const text = await r.text();
  const b = document.getElementById('banner');
  b.textContent = text; b.className = 'ok';
  console.error('audit log unreachable');
  fetch('/missing-audit').catch(() => {});
}
</script></body></html>"""

ANIM = """<!doctype html><html><head><title>Animated</title>
<style>html,body{margin:0;height:100%} #box{position:absolute;width:200px;height:200px;
background:#c62828;top:200px}</style></head><body><div id="box"></div>
<script>let x = 0; function f() { x = (x + 7) % 1000;
document.getElementById('box').style.left = x + 'px'; requestAnimationFrame(f); }
requestAnimationFrame(f);</script></body></html>"""

# Random pixels over the whole viewport, new ones at each click: each recorded image is as
# large as a JPEG of the page gets (the disk-limit test fills the limit fast).
NOISE = """<!doctype html><html><head><title>Noise</title><style>html,body{margin:0}
canvas{display:block}</style></head><body><canvas id="c"></canvas>
<button id="again" style="position:absolute;top:10px;left:10px" onclick="paint()">Again</button>
<script>const c = document.getElementById('c'); c.width = innerWidth; c.height = innerHeight;
function paint() { const g = c.getContext('2d'), img = g.createImageData(c.width, c.height);
for (let i = 0; i < img.data.length; i++) img.data[i] = (i % 4 === 3) ? 255 : Math.random() * 256;
g.putImageData(img, 0, 0); }
paint();</script></body></html>"""

PAGES = {"/login.html": LOGIN, "/anim.html": ANIM, "/noise.html": NOISE}


class _Handler(site._Handler):
    def page(self, path: str) -> str | None:
        if path == "/slow-login":
            time.sleep(0.4)
            return "Welcome back"
        return PAGES.get(path)


def serve_site() -> contextlib.AbstractContextManager[str]:
    return site.serve_site(_Handler)
