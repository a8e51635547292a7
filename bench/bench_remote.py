"""Remote-service benchmark: a Browserless-backed profile beside a local managed one, one run.

Same Chromium binary (Browserless's playwright-core is pointed at this machine's), same
page, one service. Each call runs interleaved on both profiles; medians.

  * per call (snapshot, click, navigate): browserdeck's overhead on each profile is its
    HTTP time minus a bare Playwright call on the same page over the same connection,
    taken back to back (median of the paired differences)
    (the engine's own Page object: on the remote profile that call pays the service's
    hop too). Target: remote overhead - local overhead <= +3 ms, i.e. browserdeck adds
    at most 3 ms per call beyond the service's own hop.
  * the service's hop itself: one CDP round trip (Runtime.evaluate "1") on each.
  * connect-to-first-snapshot for a new pooled session (GET /snapshot with a new
    X-Browserdeck-Session: the service launches a browser), beside a bare Playwright
    connect_over_cdp to the same endpoint + aria_snapshot of its first page.

    .venv/bin/python bench/bench_remote.py [--runs 15] [--elements 300] [--connects 5]

Needs Browserless from npm (`make browserless`, part of `make test`).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import secrets
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ["BROWSERDECK_HOME"] = tempfile.mkdtemp(prefix="bench-remote-")
os.environ["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"

from playwright.async_api import async_playwright  # noqa: E402
from tests.engine.site import start_site  # noqa: E402
from tests.remote import browserless as bl  # noqa: E402
from tests.support.net import free_port  # noqa: E402
from tests.support.service import running_service, service_config  # noqa: E402

from browserdeck.config import ProfileConfig  # noqa: E402
from browserdeck.drivers import leases as remote  # noqa: E402

Timed = Callable[[], Awaitable[Any]]


async def timed(fn: Timed) -> float:
    start = time.perf_counter()
    await fn()
    return time.perf_counter() - start


async def interleave(runs: int, fns: dict[str, Timed]) -> dict[str, float]:
    """Medians (ms) of each function, and of each http-X minus bare-X pair ("d-X").

    The pairs are taken back to back in the same round, so the machine's load (shared by
    several test runs here) moves both halves of a difference alike; the median of the
    differences is the overhead estimate, steadier than a difference of medians.
    """
    samples: dict[str, list[float]] = {name: [] for name in fns}
    for fn in fns.values():
        await fn()
    for _ in range(runs):
        for name, fn in fns.items():
            samples[name].append(await timed(fn))
    out = {name: statistics.median(s) * 1000 for name, s in samples.items()}
    for name in fns:
        if name.startswith("http-") and f"bare-{name[5:]}" in samples:
            pairs = zip(samples[name], samples[f"bare-{name[5:]}"], strict=True)
            out[f"d-{name[5:]}"] = statistics.median(a - b for a, b in pairs) * 1000
    return out


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--elements", type=int, default=300)
    parser.add_argument("--connects", type=int, default=5)
    args = parser.parse_args()
    why = bl.npm_missing()
    if why:
        print(f"skipped: {why}")
        return 0
    bl.install()
    server = bl.Browserless(free_port(), secrets.token_hex(16), concurrent=10, queued=2)
    server.start()
    site = start_site()
    cfg = service_config()
    cfg.profiles.pop("chrome", None)
    cfg.no_sandbox = hasattr(os, "geteuid") and os.geteuid() == 0
    ws = server.ws_url(token=False)
    cfg.profiles["farm"] = ProfileConfig(name="farm", driver="remote", cdp_url=ws)
    cfg.profiles["pool"] = ProfileConfig(name="pool", driver="remote", cdp_url=ws, pool=True)
    remote.store_token("farm", server.token)
    remote.store_token("pool", server.token)
    rows: list[tuple[str, str, float, float, float, str]] = []
    try:
        async with running_service(cfg) as (service, client), async_playwright() as pw:
            engine = service.engine
            assert engine is not None
            url = site.url(f"big.html?n={args.elements}")
            sides: dict[str, dict[str, Any]] = {}
            for name in ("agent", "farm"):
                q = {"profile": name}
                tab = (await client.post("/tabs/open", params=q, json={"url": url})).json()
                tid = tab["targetId"]
                await client.post("/tabs/focus", params=q, json={"targetId": tid})
                ctx = service.profile(name)
                cdp_url = await ctx.ensure_browser()
                state = await engine.page_state(cdp_url, tid, ctx.headers)
                sides[name] = {"q": {**q, "targetId": tid}, "state": state, "page": state.page}
            print(
                f"page: big.html?n={args.elements}; {args.runs} interleaved runs, medians; "
                f"local = managed profile, remote = Browserless {bl.VERSION} on loopback\n"
            )

            # --- the service's own hop: one CDP round trip ---------------------------
            def rtt(side: dict[str, Any]) -> Timed:
                return lambda: side["state"].cdp.send("Runtime.evaluate", {"expression": "1"})

            t = await interleave(args.runs, {n: rtt(s) for n, s in sides.items()})
            hop = t["farm"] - t["agent"]
            rows.append(("CDP round trip", "", t["agent"], t["farm"], hop, "(the hop)"))

            # --- what the service adds per request before the engine: the tab lookup -------
            def lookup(name: str, side: dict[str, Any]) -> Timed:
                ctx = service.profile(name)

                async def go() -> None:
                    await ctx.ensure_browser()
                    await ctx.resolve_target(side["q"]["targetId"])

                return go

            t = await interleave(args.runs, {n: lookup(n, s) for n, s in sides.items()})
            rows.append(
                ("tab lookup", "", t["agent"], t["farm"], t["farm"] - t["agent"], "(service)")
            )

            # --- snapshot ----------------------------------------------------------------
            def http_snapshot(side: dict[str, Any]) -> Timed:
                async def go() -> None:
                    r = await client.get("/snapshot", params=side["q"])
                    assert r.status_code == 200, r.text

                return go

            def bare_snapshot(side: dict[str, Any]) -> Timed:
                return lambda: side["page"].aria_snapshot(mode="ai")

            fns = {}
            for n, s in sides.items():
                fns[f"http-{n}"] = http_snapshot(s)
                fns[f"bare-{n}"] = bare_snapshot(s)
            t = await interleave(args.runs, fns)
            add_rows(rows, "snapshot", t)

            # --- click -------------------------------------------------------------------
            refs = {}
            bare_refs = {}
            for n, s in sides.items():
                snap = (await client.get("/snapshot", params=s["q"])).json()["snapshot"]
                refs[n] = re.search(r'button "Button 7" \[ref=([^\]]+)\]', snap).group(1)  # type: ignore[union-attr]
                bare = await s["page"].aria_snapshot(mode="ai")
                bare_refs[n] = re.search(r'button "Button 7" \[ref=([^\]]+)\]', bare).group(1)  # type: ignore[union-attr]

            def http_click(n: str, side: dict[str, Any]) -> Timed:
                async def go() -> None:
                    r = await client.post(
                        "/act", params=side["q"], json={"kind": "click", "ref": refs[n]}
                    )
                    assert r.status_code == 200, r.text

                return go

            def bare_click(n: str, side: dict[str, Any]) -> Timed:
                return lambda: side["page"].locator(f"aria-ref={bare_refs[n]}").click()

            fns = {}
            for n, s in sides.items():
                fns[f"http-{n}"] = http_click(n, s)
                fns[f"bare-{n}"] = bare_click(n, s)
            t = await interleave(args.runs, fns)
            add_rows(rows, "click", t)

            # --- navigate ----------------------------------------------------------------
            small = site.url("big.html?n=20")

            def http_nav(side: dict[str, Any]) -> Timed:
                async def go() -> None:
                    r = await client.post("/navigate", params=side["q"], json={"url": small})
                    assert r.status_code == 200, r.text

                return go

            def bare_nav(side: dict[str, Any]) -> Timed:
                return lambda: side["page"].goto(small)

            fns = {}
            for n, s in sides.items():
                fns[f"http-{n}"] = http_nav(s)
                fns[f"bare-{n}"] = bare_nav(s)
            t = await interleave(args.runs, fns)
            add_rows(rows, "navigate", t)

            # --- connect to first snapshot, a new pooled session -------------------------
            ours: list[float] = []
            theirs: list[float] = []
            endpoint, headers = service.profile("pool").impl.service.endpoint()  # type: ignore[attr-defined]
            for _ in range(args.connects):
                session = {"X-Browserdeck-Session": uuid.uuid4().hex}
                start = time.perf_counter()
                tabs = await client.get("/tabs", params={"profile": "pool"}, headers=session)
                tid = tabs.json()["tabs"][0]["targetId"]
                snap = await client.get(
                    "/snapshot", params={"profile": "pool", "targetId": tid}, headers=session
                )
                assert snap.status_code == 200, snap.text
                ours.append(time.perf_counter() - start)
                await client.post("/sessions/release", json={"session": session[
                    "X-Browserdeck-Session"]})
                start = time.perf_counter()
                browser = await pw.chromium.connect_over_cdp(endpoint, headers=headers)
                await browser.contexts[0].pages[0].aria_snapshot(mode="ai")
                theirs.append(time.perf_counter() - start)
                await browser.close()
                await asyncio.sleep(0.5)  # let the service end the browser before the next
            connect = (statistics.median(ours) * 1000, statistics.median(theirs) * 1000)
    finally:
        site.close()
        server.stop()

    print(
        f"{'call':<15} {'':<10} {'local ms':>9} {'remote ms':>10} {'remote-local':>13} "
        f"{'target':>10}"
    )
    print("-" * 72)
    for what, how, local, rem, delta, target in rows:
        print(f"{what:<15} {how:<10} {local:9.1f} {rem:10.1f} {delta:+13.1f} {target:>10}")
    print(
        f"\nconnect-to-first-snapshot, new pooled session ({args.connects} runs, median): "
        f"browserdeck {connect[0]:.0f} ms; bare Playwright connect_over_cdp + aria_snapshot "
        f"{connect[1]:.0f} ms ({connect[0] - connect[1]:+.0f} ms)"
    )
    return 0


def add_rows(
    rows: list[tuple[str, str, float, float, float, str]], what: str, t: dict[str, float]
) -> None:
    rows.append((what, "bare", t["bare-agent"], t["bare-farm"], t["bare-farm"] - t["bare-agent"], ""))
    rows.append((what, "HTTP", t["http-agent"], t["http-farm"], t["http-farm"] - t["http-agent"], ""))
    ours_local = t["d-agent"]  # median of paired (HTTP - bare) differences
    ours_remote = t["d-farm"]
    rows.append(
        (
            what,
            "overhead",
            ours_local,
            ours_remote,
            ours_remote - ours_local,
            "<= +3 ms",
        )
    )


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
