"""The agent's network: what routes, an allow list and a HAR recording cost a page load.

One in-process service (free ports, a temp BROWSERDECK_HOME, its managed headless
Chromium), one agent session working in a tab of its own through the HTTP API, and a
page of 20 subresources (10 images, 5 stylesheets, 5 scripts) on a local server, every
load with fresh URLs, none of them cacheable (nothing comes from or goes to the cache).
Conditions, interleaved round by round so the machine's load falls on each alike:

* ``plain``: no routes, no origin rules;
* ``20 routes``: the session's 20 routes (mocks of paths the page never asks for: what
  an agent that mocks an API carries while the rest of the page loads);
* ``allow 20``: ``allowedOrigins`` of 20 origins, the page's among them;
* ``har``: a HAR recording of the tab running (bodies embedded), stopped after the load;
* ``plain again``: ``plain`` once more at another place in the round: its ratio to
  ``plain`` is the run's noise.

Each load is ``POST /navigate`` (wait for ``load``), timed at the client, and the page's
own ``loadEventEnd`` (the navigation timing, in the browser). Prints medians and the
ratio to ``plain`` from the same run.

    .venv/bin/python bench/bench_network.py [--rounds 25]
"""

from __future__ import annotations

import argparse
import asyncio
import http.server
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.network.site import PNG  # noqa: E402

SESSION = {"X-Browserdeck-Session": "bench-agent"}


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        path, _, query = self.path.partition("?")
        if path == "/page.html":
            parts = ["<!doctype html><title>Bench</title>"]
            parts += [f'<link rel=stylesheet href="/s{i}.css?{query}">' for i in range(5)]
            parts += [f'<img src="/i{i}.png?{query}" width=1 height=1>' for i in range(10)]
            parts += [f'<script src="/j{i}.js?{query}"></script>' for i in range(5)]
            body, ctype = "".join(parts).encode(), "text/html"
        elif path.endswith(".png"):
            body, ctype = PNG, "image/png"
        elif path.endswith(".css"):
            body, ctype = b"body { margin: 0 }", "text/css"
        else:
            body, ctype = b"window.x = (window.x || 0) + 1;", "text/javascript"
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        # Kept from the cache in every condition alike: a tab with routes skips the HTTP
        # cache (network.md), and writing a fresh page's 21 files there costs plain loads
        # more than anything measured here.
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)


def start_site() -> tuple[http.server.ThreadingHTTPServer, str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


LOAD_END = "() => performance.getEntriesByType('navigation')[0].loadEventEnd"


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=25)
    args = parser.parse_args()
    home = tempfile.mkdtemp(prefix="bench-network-")
    os.environ["BROWSERDECK_HOME"] = home
    os.environ.setdefault("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    from tests.support.service import running_service, service_config

    server, base = start_site()
    cfg = service_config()
    cfg.profiles.pop("chrome", None)
    cfg.no_sandbox = os.geteuid() == 0
    allow = [f"https://site{i}.example" for i in range(19)] + [base]
    routes = [{"pattern": f"**/never-{i}/api/*", "body": "{}"} for i in range(20)]
    times: dict[str, list[float]] = {}
    loads: dict[str, list[float]] = {}
    async with running_service(cfg) as (service, client):
        tab = (await client.post("/tabs/open", json={"url": "about:blank"}, headers=SESSION)).json()
        params = {"targetId": tab["targetId"]}
        counter = iter(range(1_000_000))

        async def load(label: str) -> None:
            url = f"{base}/page.html?r={next(counter)}"
            started = time.perf_counter()
            resp = await client.post("/navigate", params=params, headers=SESSION, json={"url": url})
            elapsed = (time.perf_counter() - started) * 1000
            assert resp.status_code == 200, resp.text
            end = await client.post(
                "/act", params=params, headers=SESSION, json={"kind": "evaluate", "fn": LOAD_END}
            )
            times.setdefault(label, []).append(elapsed)
            loads.setdefault(label, []).append(float(end.json()["result"]))

        async def plain() -> None:
            await load("plain")

        async def plain_again() -> None:  # the same, elsewhere in the round: the noise
            await load("plain again")

        async def with_routes() -> None:
            for route in routes:
                resp = await client.post("/network/routes", params=params, headers=SESSION, json=route)
                assert resp.status_code == 200, resp.text
            await load("20 routes")
            await client.delete("/network/routes", params=params, headers=SESSION)

        async def with_allow_list() -> None:
            await service.update_settings(lambda c: setattr(c, "allowed_origins", allow))
            await load("allow 20")
            await service.update_settings(lambda c: setattr(c, "allowed_origins", []))

        async def with_har() -> None:
            await client.post("/network/har/start", params=params, headers=SESSION, json={})
            await load("har")
            stopped = await client.post("/network/har/stop", params=params, headers=SESSION, json={})
            Path(stopped.json()["path"]).unlink()

        conditions = [plain, with_routes, plain_again, with_allow_list, with_har]
        for warm in conditions:  # each once, untimed: first loads compile and connect
            await warm()
        times.clear()
        loads.clear()
        for i in range(args.rounds):
            order = conditions[i % len(conditions) :] + conditions[: i % len(conditions)]
            for condition in order:
                await condition()
    server.shutdown()
    report(times, loads, args.rounds)
    return 0


def report(times: dict[str, list[float]], loads: dict[str, list[float]], rounds: int) -> None:
    with open("/proc/loadavg") as f:
        load_avg = " ".join(f.read().split()[:3])
    print(f"page load, 20 subresources, {rounds} rounds interleaved (load average {load_avg})")
    print(f"{'condition':<12} {'navigate ms':>12} {'ratio':>7} {'loadEventEnd ms':>16} {'ratio':>7}")
    base_t = statistics.median(times["plain"])
    base_l = statistics.median(loads["plain"])
    for label in ("plain", "plain again", "20 routes", "allow 20", "har"):
        t, lo = statistics.median(times[label]), statistics.median(loads[label])
        print(f"{label:<12} {t:>12.1f} {t / base_t:>7.3f} {lo:>16.1f} {lo / base_l:>7.3f}")


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
