"""Issue 11 benchmark: load, cross-talk, and big-page snapshots, through a real `serve`.

In one run, against a `browserdeck serve` process (free ports, temp BROWSERDECK_HOME):

* load: ``--calls`` API calls (default 10,000) at ``--concurrency`` (default 32), a mix
  of GET /tabs, GET /, GET /console and GET /snapshot over the agents' tabs; prints
  errors, p50/p99 latency and the peak RSS of serve and of its Playwright driver;
* cross-talk: ``--agents`` agents (default 8), each in its own tab, loop for
  ``--seconds``: navigate to a page carrying its own token, snapshot, click its button,
  check the title; any other agent's token seen is cross-talk; plus stale refs (a ref
  from before a navigation) that must be refused;
* big page: a page of ``--elements`` (default 10,000) elements; GET /snapshot full, with
  interactive=true&limit=50, with a selector naming one row, and format=aria; beside
  Playwright's own ``ariaSnapshot`` of the same page over a direct connection (the peer:
  what the snapshot costs without browserdeck).

    .venv/bin/python bench/bench_reliability.py [--calls 10000] [--agents 8]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.engine.site import start_site  # noqa: E402
from tests.support.net import free_port  # noqa: E402

TOKEN = "bench-token"


def rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


class RssWatch:
    """Peak RSS of serve and of its direct children that are not Chromium (the driver)."""

    def __init__(self, pid: int) -> None:
        self.pid, self.serve, self.driver = pid, 0.0, 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.serve = max(self.serve, rss_mb(self.pid))
            for child in children(self.pid):
                try:
                    cmd = Path(f"/proc/{child}/cmdline").read_bytes()
                except OSError:
                    continue
                if b"node" in cmd or b"playwright" in cmd:
                    self.driver = max(self.driver, rss_mb(child))
            time.sleep(0.2)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


async def load(api: httpx.AsyncClient, tabs: list[str], calls: int, concurrency: int) -> dict[str, Any]:
    latencies: list[float] = []
    errors: dict[str, int] = {}
    queue = list(range(calls))

    async def worker() -> None:
        while queue:
            i = queue.pop()
            tab = tabs[i % len(tabs)]
            kind = i % 4
            start = time.perf_counter()
            try:
                if kind == 0:
                    resp = await api.get("/tabs")
                elif kind == 1:
                    resp = await api.get("/")
                elif kind == 2:
                    resp = await api.get("/console", params={"targetId": tab, "limit": 5})
                else:
                    resp = await api.get("/snapshot", params={"targetId": tab})
                if resp.status_code != 200:
                    key = f"{resp.status_code} {resp.json().get('error', {}).get('code')}"
                    errors[key] = errors.get(key, 0) + 1
            except httpx.HTTPError as exc:
                errors[type(exc).__name__] = errors.get(type(exc).__name__, 0) + 1
            latencies.append(time.perf_counter() - start)

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return {
        "calls": calls,
        "seconds": time.perf_counter() - started,
        "errors": errors,
        "p50": pct(latencies, 0.50),
        "p99": pct(latencies, 0.99),
    }


async def agent(api: httpx.AsyncClient, me: int, tab: str, until: float, out: dict[str, int]) -> None:
    n = 0
    while time.monotonic() < until:
        n += 1
        token = f"agent{me}-{n}-{random.randrange(10**9)}"
        page = (
            f"data:text/html,<title>{token}</title><p id=t>{token}</p>"
            f"<button onclick=\"document.title='clicked-{token}'\">Go {token}</button>"
        )
        old = await api.get("/snapshot", params={"targetId": tab})
        old_ref = None
        if old.status_code == 200:
            for line in old.json()["snapshot"].splitlines():
                if "button" in line and "[ref=" in line:
                    old_ref = line.split("[ref=", 1)[1].split("]", 1)[0]
        resp = await api.post("/navigate", json={"url": page, "targetId": tab})
        if resp.status_code != 200:
            out["errors"] += 1
            continue
        if old_ref:
            stale = await api.post("/act", json={"kind": "click", "ref": old_ref, "targetId": tab})
            out["stale_tried"] += 1
            if stale.status_code in (404, 409):
                out["stale_refused"] += 1
        snap = await api.get("/snapshot", params={"targetId": tab})
        text = snap.json().get("snapshot", "") if snap.status_code == 200 else ""
        if token not in text:
            out["errors" if snap.status_code != 200 else "crosstalk"] += 1
            continue
        if "agent" in text.replace(token, ""):
            out["crosstalk"] += 1
        ref = next(
            (ln.split("[ref=", 1)[1].split("]", 1)[0] for ln in text.splitlines()
             if "button" in ln and "[ref=" in ln),
            None,
        )
        click = await api.post("/act", json={"kind": "click", "ref": ref, "targetId": tab})
        if click.status_code != 200:
            out["errors"] += 1
            continue
        title = await api.post(
            "/act", json={"kind": "evaluate", "fn": "() => document.title", "targetId": tab}
        )
        if title.json().get("result") != f"clicked-{token}":
            out["crosstalk"] += 1
        out["rounds"] += 1


async def timed(coro: Any, runs: int) -> tuple[float, Any]:
    samples, last = [], None
    for _ in range(runs):
        start = time.perf_counter()
        last = await coro()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1000, last


async def big_page(api: httpx.AsyncClient, site_url: str, elements: int, runs: int) -> list[tuple[str, float, str]]:
    tab = (await api.post("/tabs/open", json={"url": site_url})).json()["targetId"]
    rows: list[tuple[str, float, str]] = []
    cases = [
        ("snapshot (full)", {}),
        ("interactive=true&limit=50", {"interactive": "true", "limit": 50}),
        ("limit=50", {"limit": 50}),
        ("selector (one row)", {"selector": "div.row:nth-of-type(7)"}),
        ("format=aria", {"format": "aria"}),
    ]
    for label, params in cases:
        async def call(params: dict[str, Any] = params) -> httpx.Response:
            return await api.get("/snapshot", params={"targetId": tab, **params}, timeout=120)

        ms, resp = await timed(call, runs)
        size = f"{resp.status_code} {len(resp.text):,} B"
        rows.append((label, ms, size))
    # The peer: Playwright's own aria snapshot of the same page, no browserdeck in between.
    from playwright.async_api import async_playwright

    status = (await api.get("/")).json()
    async with async_playwright() as pw:
        # The managed browser's CDP endpoint takes the API token (security issue).
        browser = await pw.chromium.connect_over_cdp(
            status["cdpUrl"], headers={"Authorization": f"Bearer {TOKEN}"}
        )
        page = next(p for c in browser.contexts for p in c.pages if p.url == site_url)

        async def peer() -> str:
            return await page.locator("body").aria_snapshot(timeout=120_000)

        ms, text = await timed(peer, runs)
        rows.append(("peer: Playwright ariaSnapshot (body)", ms, f"{len(text):,} chars"))
        await browser.close()
    return rows


async def run(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory(prefix="bd-bench-rel-") as tmp:
        home = Path(tmp) / "home"
        env = dict(os.environ, BROWSERDECK_HOME=str(home), BROWSERDECK_TOKEN=TOKEN,
                   PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring")
        os.environ["BROWSERDECK_HOME"] = str(home)
        from browserdeck import config

        cfg = config.default_config()
        cfg.control_port, cfg.relay_port = free_port(), free_port()
        cfg.profiles["agent"].cdp_port = free_port()
        config.save(cfg)
        serve = subprocess.Popen(
            [sys.executable, "-m", "browserdeck", "serve", "--headless"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        site = start_site()
        watch = RssWatch(serve.pid)
        try:
            async with httpx.AsyncClient(
                base_url=f"http://127.0.0.1:{cfg.control_port}",
                headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60, trust_env=False,
                limits=httpx.Limits(max_connections=64),
            ) as api:
                # serve took 47 s to come up on a loaded shared machine: wait up to 120 s.
                up_by = time.monotonic() + 120
                while time.monotonic() < up_by:
                    try:
                        if (await api.get("/health")).status_code == 200:
                            break
                    except httpx.HTTPError:
                        pass
                    await asyncio.sleep(0.1)
                assert (await api.post("/start")).status_code == 200
                tabs = []
                for i in range(args.agents):
                    resp = await api.post(
                        "/tabs/open", json={"url": f"data:text/html,<title>a{i}</title><p>a{i}</p>"}
                    )
                    tabs.append(resp.json()["targetId"])

                result = await load(api, tabs, args.calls, args.concurrency)
                # At once: a later phase that fails must not lose these figures.
                print(f"load errors: {result['errors'] or 0}", flush=True)
                counts = {"rounds": 0, "errors": 0, "crosstalk": 0, "stale_tried": 0,
                          "stale_refused": 0}
                until = time.monotonic() + args.seconds
                await asyncio.gather(*(agent(api, i, t, until, counts) for i, t in enumerate(tabs)))
                big = await big_page(api, site.url(f"big.html?n={args.elements}"), args.elements,
                                     args.runs)
        finally:
            watch.stop()
            serve.terminate()
            try:
                serve.wait(20)
            except subprocess.TimeoutExpired:
                serve.kill()
            site.close()

    print(f"\nload: {result['calls']:,} calls at {args.concurrency} concurrent "
          f"in {result['seconds']:.1f} s ({result['calls'] / result['seconds']:.0f}/s)")
    print("| metric | value |\n| --- | --- |")
    print(f"| errors | {sum(result['errors'].values())} {result['errors'] or ''} |")
    print(f"| p50 | {result['p50']:.1f} ms |")
    print(f"| p99 | {result['p99']:.1f} ms |")
    print(f"| peak RSS serve | {watch.serve:.0f} MB |")
    print(f"| peak RSS Playwright driver | {watch.driver:.0f} MB |")
    print(f"\ncross-talk: {args.agents} agents x {args.seconds} s, each in its own tab")
    print("| metric | value |\n| --- | --- |")
    for key, value in counts.items():
        print(f"| {key} | {value} |")
    print(f"\nbig page: {args.elements:,} elements, median of {args.runs} "
          "(targets: full <= 2000 ms, limit=50 <= 300 ms)")
    print("| call | median ms | answer |\n| --- | ---: | --- |")
    peer = big[-1][1]
    for label, ms, size in big:
        print(f"| {label} | {ms:.0f} ({ms / peer:.2f}x peer) | {size} |")
    bad = sum(result["errors"].values()) + counts["crosstalk"] + (
        counts["stale_tried"] - counts["stale_refused"]
    )
    return 1 if bad else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--agents", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--elements", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    return asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    raise SystemExit(main())
