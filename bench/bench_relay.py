"""Issues 4 and 12 benchmark: the extension relay against direct CDP, side by side in one run.

One headless Chromium with the browserdeck extension loaded, paired with a relay on a
free port. The same tab is driven two ways at once:

  * direct: Chromium's own DevTools port (what a managed profile gets);
  * relay:  the relay's /cdp, i.e. relay -> extension -> chrome.debugger -> tab.

Measured (medians, interleaved rounds so drift hits both sides alike):
  * CDP Runtime.evaluate("1+1") round trip on a page session (target: <= +0.5 ms);
  * Input.dispatchMouseEvent as a click sends it: a move alone (it waits for a frame) and
    move+press+release pipelined;
  * a Puppeteer (puppeteer-core from npm) click through the relay vs direct (<= 1.15x),
    and where it goes: every CDP command of each click timed in Puppeteer's transport
    (commands per click, time a command was outstanding, round trip per method);
  * a Playwright click on the same page through the relay vs direct;
  * connect_over_cdp until the pages are ready, with 1 and with 20 shared tabs;
  * where a relayed round trip goes: the extension's turnaround as the relay sees it
    (relay -> Chrome's network service -> worker -> chrome.debugger -> back), the same
    chrome.debugger call timed inside the worker, and the Python relay's own share;
  * recovery after a relay restart: from the new relay listening until the shared tab is
    back, after short outages (target: <= 1 s) and a --long-outage (default 40 s) long
    enough for Chrome to stop the idle worker (target: <= 30 s, the alarm);
  * probes while no relay listens: a TCP listener that accepts and drops every connection
    counts them per phase (target: <= 1/s for the first 25 s, then only the alarm's).

    .venv/bin/python bench/bench_relay.py [--evals 400] [--clicks 60] [--connects 5]
        [--outages 3,9.5,22] [--long-outage 40]   (--long-outage 0 skips it)
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import peers  # noqa: E402
from playwright.async_api import Page, async_playwright  # noqa: E402
from tests.relay.fake_extension import FakeExtension, FakeTab  # noqa: E402
from tests.relay.harness import (  # noqa: E402
    ExtBrowser,
    ProbeCounter,
    launch_ext_browser,
    start_site,
)
from tests.support.browsers import find_chromium  # noqa: E402
from tests.support.node import NODE_CLIENTS  # noqa: E402

from browserdeck.chrome.cdp import CDPClient  # noqa: E402
from browserdeck.relay.server import RelayServer  # noqa: E402
from browserdeck.secrets.tokens import new_token  # noqa: E402


def ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def p90(samples: list[float]) -> float:
    return statistics.quantiles(samples, n=10)[-1] * 1000


async def eval_round_trips(cdp: CDPClient, sid: str, n: int) -> list[float]:
    out = []
    for _ in range(n):
        start = time.perf_counter()
        await cdp.send("Runtime.evaluate", {"expression": "1+1"}, session_id=sid)
        out.append(time.perf_counter() - start)
    return out


async def mouse_round_trips(cdp: CDPClient, sid: str, n: int, *, press: bool) -> list[float]:
    """``Input.dispatchMouseEvent`` as a click sends it: a move alone (its ack waits for the
    next frame: input is aligned to frames), or move, press and release pipelined."""
    kinds = ("mouseMoved", "mousePressed", "mouseReleased") if press else ("mouseMoved",)
    out = []
    for i in range(n):
        start = time.perf_counter()
        await asyncio.gather(
            *(
                cdp.send(
                    "Input.dispatchMouseEvent",
                    # A spot beside the button (nothing to click), moving a pixel each time.
                    {"type": kind, "x": 400 + i % 2, "y": 300, "button": "left", "clickCount": 1},
                    session_id=sid,
                )
                for kind in kinds
            )
        )
        out.append(time.perf_counter() - start)
    return out


async def clicks(page: Page, n: int) -> list[float]:
    out = []
    for _ in range(n):
        start = time.perf_counter()
        await page.click("#b")
        out.append(time.perf_counter() - start)
    return out


# Each client's transport is wrapped to time every CDP command of a click (send to reply):
# where a relayed click spends its extra time (docs/extension.md, Performance).
PUPPETEER_CLICKS = """
const puppeteer = require('puppeteer-core');
const { NodeWebSocketTransport } = require('puppeteer-core/lib/cjs/puppeteer/node/NodeWebSocketTransport.js');
async function traced(url, headers, trace) {
  const transport = await NodeWebSocketTransport.create(url, headers);
  const send = transport.send.bind(transport);
  const sent = new Map();
  transport.send = (text) => { sent.set(JSON.parse(text).id, [performance.now(), JSON.parse(text).method]); send(text); };
  let handler = null;
  Object.defineProperty(transport, 'onmessage', {
    set(h) { handler = h; },
    get() { return (text) => {
      const id = JSON.parse(text).id, start = sent.get(id);
      if (start) { sent.delete(id); if (trace.on) trace.commands.push([start[1], start[0], performance.now()]); }
      if (handler) handler(text);
    }; },
  });
  return transport;
}
(async () => {
  const traces = { direct: { on: false, commands: [] }, relay: { on: false, commands: [] } };
  const direct = await puppeteer.connect({ transport: await traced(process.env.DIRECT, {}, traces.direct), defaultViewport: null });
  const relay = await puppeteer.connect({ defaultViewport: null, transport: await traced(process.env.RELAY,
    { Authorization: 'Bearer ' + process.env.TOKEN }, traces.relay) });
  const pick = async (b) => (await b.pages()).find((p) => p.url().includes('title=Bench'));
  const pd = await pick(direct), pr = await pick(relay);
  const n = Number(process.env.N), out = { direct: [], relay: [] };
  const run = async (page, name, k) => { for (let i = 0; i < k; i++) {
    const trace = traces[name]; trace.commands = []; trace.on = true;
    const t = performance.now(); await page.click('#b'); const end = performance.now();
    trace.on = false;
    out[name].push({ ms: end - t, commands: trace.commands.map(([m, a, b]) => [m, a - t, b - t]) }); } };
  await run(pd, 'direct', 10); await run(pr, 'relay', 10); out.direct = []; out.relay = [];
  for (let r = 0; r < 6; r++) { await run(pd, 'direct', n / 6); await run(pr, 'relay', n / 6); }
  await direct.disconnect(); await relay.disconnect();
  console.log('RESULT ' + JSON.stringify(out));
})().catch((e) => { console.error(e); process.exit(1); });
"""


class ClickTrace:
    """One path's Puppeteer clicks: each click's time and its CDP commands
    (method, sent, answered; ms from the click's start)."""

    def __init__(self, clicks: list[dict[str, Any]]) -> None:
        self.times = [c["ms"] / 1000 for c in clicks]
        self.clicks = clicks

    def commands_per_click(self) -> float:
        return statistics.median(len(c["commands"]) for c in self.clicks)

    def waiting(self) -> float:
        """Median per click of the time at least one command was outstanding (ms)."""
        out = []
        for click in self.clicks:
            busy, until = 0.0, float("-inf")
            for _, start, end in sorted(click["commands"], key=lambda c: c[1]):
                if end > until:
                    busy += end - max(start, until)
                    until = end
            out.append(busy)
        return statistics.median(out)

    def by_method(self) -> dict[str, float]:
        """Median round trip per CDP method (ms)."""
        times: dict[str, list[float]] = {}
        for click in self.clicks:
            for method, start, end in click["commands"]:
                times.setdefault(method, []).append(end - start)
        return {m: statistics.median(v) for m, v in times.items()}


async def puppeteer_clicks(ext: ExtBrowser, relay: RelayServer, n: int) -> dict[str, ClickTrace]:
    modules = NODE_CLIENTS / "node_modules"
    if not (modules / "puppeteer-core").is_dir():
        modules = peers.MODULES
    proc = await asyncio.create_subprocess_exec(
        "node",
        "-e",
        PUPPETEER_CLICKS,
        stdout=asyncio.subprocess.PIPE,
        env={
            **os.environ,
            "NODE_PATH": str(modules),
            "DIRECT": ext.chromium.ws_url,
            "RELAY": relay.ws_url,
            "TOKEN": relay.token_headers()["Authorization"][7:],
            "N": str(n),
        },
    )
    out, _ = await proc.communicate()
    line = next(x for x in out.decode().splitlines() if x.startswith("RESULT "))
    result: dict[str, list[dict[str, Any]]] = json.loads(line[7:])
    return {k: ClickTrace(v) for k, v in result.items()}


WORKER_ROUND_TRIPS = """(async () => {
  const tabId = [...browserdeck.state.attached][0];
  const out = [];
  for (let i = 0; i < %d; i++) {
    const t = performance.now();
    await chrome.debugger.sendCommand({ tabId }, "Runtime.evaluate", { expression: "1+1" });
    out.push(performance.now() - t);
  }
  out.sort((a, b) => a - b);
  return out[Math.floor(out.length / 2)];
})()"""


class ExtensionTurnaround:
    """Times each forwarded command from the relay writing it to the extension's socket to
    the relay reading the reply: the Chrome side of a relayed round trip. Wraps the live
    link's two methods on the instance (measurement only; nothing else changes)."""

    def __init__(self, relay: RelayServer) -> None:
        link = relay.relay.link
        assert link is not None, "the extension is not connected"
        self.link = link
        self.samples: list[float] = []
        self._sent: dict[int, float] = {}

    def __enter__(self) -> ExtensionTurnaround:
        link, send_raw, on_reply = self.link, self.link.send_raw, self.link.on_reply

        async def timed_send(text: str) -> None:
            await send_raw(text)
            if text.startswith('{"id":'):
                self._sent[int(text[6 : text.index(",")])] = time.perf_counter()

        async def timed_reply(header: dict[str, Any], body: str | None) -> None:
            sent = self._sent.pop(header.get("id"), None)  # type: ignore[arg-type]
            if sent is not None:
                self.samples.append(time.perf_counter() - sent)
            await on_reply(header, body)

        link.send_raw = timed_send  # type: ignore[method-assign]
        link.on_reply = timed_reply  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: object) -> None:
        del self.link.send_raw, self.link.on_reply  # back to the class's own methods


def click_breakdown(direct: ClickTrace, relay: ClickTrace) -> list[tuple[str, float, float]]:
    rows = [
        ("click (ms)", ms(direct.times), ms(relay.times)),
        ("  frames of 16.7 ms per click", ms(direct.times) / 16.67, ms(relay.times) / 16.67),
        ("  CDP commands per click", direct.commands_per_click(), relay.commands_per_click()),
        ("  time a command was outstanding (ms)", direct.waiting(), relay.waiting()),
        (
            "  Puppeteer's own work between replies (ms)",
            ms(direct.times) - direct.waiting(),
            ms(relay.times) - relay.waiting(),
        ),
    ]
    d_methods, r_methods = direct.by_method(), relay.by_method()
    for method in sorted(d_methods, key=lambda m: -d_methods[m]):
        if method in r_methods:
            rows.append((f"  round trip: {method} (ms)", d_methods[method], r_methods[method]))
    return rows


async def python_relay_round_trips(n: int) -> list[float]:
    """The Python relay alone: a client, the relay and an instant fake extension (all in
    this process, two loopback WebSocket hops), the same evaluate as above."""
    relay = RelayServer(port=0, token=new_token(), profile="fake")
    await relay.start()
    fake = await FakeExtension.connect(relay, tabs=[FakeTab(1, "A" * 32, "https://a.test/")])
    try:
        via = await CDPClient.connect(relay.ws_url, headers=relay.auth_headers())
        event = via.expect_event("Target.attachedToTarget")
        await via.send(
            "Target.setAutoAttach",
            {"autoAttach": True, "waitForDebuggerOnStart": False, "flatten": True},
        )
        sid = (await event)["sessionId"]
        await eval_round_trips(via, sid, 50)
        out = await eval_round_trips(via, sid, n)
        await via.close()
        await asyncio.sleep(0.3)  # let the relay's debugger release reach the fake
        return out
    finally:
        await fake.close()
        await relay.stop()


async def outage(
    relay: RelayServer, ext: ExtBrowser, seconds: float, token: str
) -> tuple[RelayServer, float, ProbeCounter]:
    """Stop the relay for ``seconds`` (probes counted), restart it on the same port, and
    return the new relay, the time until the shared tab was back, and the counter."""
    port = relay.port
    await relay.stop()
    counter = ProbeCounter()
    await counter.start(port)
    start = time.monotonic()
    await asyncio.sleep(seconds)
    await counter.stop()
    counter.times = [t - start for t in counter.times]
    fresh = RelayServer(port=port, token=token, profile="chrome")
    await fresh.start()
    ext.relay = fresh
    listening = time.monotonic()
    while fresh.status()["tabs"] < 1:
        if time.monotonic() - listening > 90:
            raise RuntimeError("the shared tab never came back")
        await asyncio.sleep(0.005)
    return fresh, time.monotonic() - listening, counter


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--evals", type=int, default=400)
    parser.add_argument("--clicks", type=int, default=60)
    parser.add_argument("--connects", type=int, default=5)
    # Whole seconds are the worst case: the worker's probes are a second apart from the
    # moment the relay went away, so the relay comes back just after a failed probe. A
    # fractional length shows a typical case.
    parser.add_argument("--outages", default="3,9.5,22", help="short outages, seconds")
    parser.add_argument("--long-outage", type=float, default=40.0, help="0: skip")
    args = parser.parse_args()
    chromium_path = find_chromium()
    if chromium_path is None:
        print("no Chromium found (set BROWSERDECK_CHROME)")
        return 2

    site = start_site()
    relay = RelayServer(port=0, token=new_token(), profile="chrome")
    await relay.start()
    workdir = Path(tempfile.mkdtemp(prefix="bench-relay-"))
    ext: ExtBrowser = await launch_ext_browser(chromium_path, workdir / "chromium", relay)
    rows: list[tuple[str, float, float, str]] = []
    click_rows: list[tuple[str, float, float]] = []
    mouse_rows: list[tuple[str, list[float], list[float]]] = []
    recovery: list[tuple[str, float, str]] = []
    profile: list[tuple[str, float]] = []
    try:
        await ext.pair()
        await relay.wait_for_extension(20)
        _, target = await ext.open_shared(site.url("/page?title=Bench"))
        await ext.detach_worker()

        # -- 1. raw CDP round trips ------------------------------------------------
        direct = ext.cdp
        direct_sid = (
            await direct.send("Target.attachToTarget", {"targetId": target, "flatten": True})
        )["sessionId"]
        via = await CDPClient.connect(
            f"ws://127.0.0.1:{relay.port}/cdp", headers=relay.auth_headers()
        )
        event = via.expect_event("Target.attachedToTarget")
        await via.send(
            "Target.setAutoAttach",
            {"autoAttach": True, "waitForDebuggerOnStart": False, "flatten": True},
        )
        relay_sid = (await event)["sessionId"]
        await eval_round_trips(direct, direct_sid, 50)  # warm-up (and the relay's lazy attach)
        await eval_round_trips(via, relay_sid, 50)
        d_evals: list[float] = []
        r_evals: list[float] = []
        rounds = 8
        with ExtensionTurnaround(relay) as turnaround:
            for _ in range(rounds):
                d_evals += await eval_round_trips(direct, direct_sid, args.evals // rounds)
                r_evals += await eval_round_trips(via, relay_sid, args.evals // rounds)
        for press, name in ((False, "mouse move alone"), (True, "mouse move+press+release")):
            d_mouse: list[float] = []
            r_mouse: list[float] = []
            for _ in range(3):
                d_mouse += await mouse_round_trips(direct, direct_sid, 10, press=press)
                r_mouse += await mouse_round_trips(via, relay_sid, 10, press=press)
            mouse_rows.append((f"{name}, median (ms)", d_mouse, r_mouse))
        # Where the relay's extra time goes: chrome.debugger inside the worker (tab still
        # attached by the relay session above), and the Python relay with a fake extension.
        worker_ms = float(await ext.sw_eval(WORKER_ROUND_TRIPS % args.evals))
        await ext.detach_worker()
        await via.close()
        await direct.send("Target.detachFromTarget", {"sessionId": direct_sid})
        python_ms = ms(await python_relay_round_trips(args.evals))
        rows.append(
            (
                "Runtime.evaluate round trip, median (ms)",
                ms(d_evals),
                ms(r_evals),
                "relay <= 1.5 ms",
            )
        )
        rows.append(("Runtime.evaluate round trip, p90 (ms)", p90(d_evals), p90(r_evals), ""))
        for name, d_mouse, r_mouse in mouse_rows:
            rows.append((name, ms(d_mouse), ms(r_mouse), ""))
        extra = ms(r_evals) - ms(d_evals)
        turn_ms = ms(turnaround.samples)
        profile = [
            ("relay - direct, per round trip", extra),
            ("  extension turnaround seen by the relay (Chrome side)", turn_ms),
            ("    of which chrome.debugger.sendCommand in the worker", worker_ms),
            (
                "    so Chrome's network service + worker WebSocket + JSON",
                turn_ms - worker_ms,
            ),
            ("  Chrome side over a direct round trip", turn_ms - ms(d_evals)),
            ("  Python relay + its 2 loopback hops (relay - turnaround)", ms(r_evals) - turn_ms),
            ("  (Python relay + 2 hops with an instant fake extension)", python_ms),
        ]

        pup = await puppeteer_clicks(ext, relay, args.clicks)
        rows.append(
            (
                "Puppeteer click, median (ms)",
                ms(pup["direct"].times),
                ms(pup["relay"].times),
                "relay <= 1.15x",
            )
        )
        click_rows = click_breakdown(pup["direct"], pup["relay"])

        async with async_playwright() as pw:
            # -- 2. Playwright clicks ----------------------------------------------
            pw_direct = await pw.chromium.connect_over_cdp(ext.chromium.cdp_url)
            pw_relay = await pw.chromium.connect_over_cdp(
                relay.cdp_url, headers=relay.auth_headers()
            )
            page_d = next(
                p for ctx in pw_direct.contexts for p in ctx.pages if "title=Bench" in p.url
            )
            page_r = pw_relay.contexts[0].pages[0]
            await clicks(page_d, 10)
            await clicks(page_r, 10)
            d_clicks: list[float] = []
            r_clicks: list[float] = []
            rounds = 6
            for _ in range(rounds):
                d_clicks += await clicks(page_d, args.clicks // rounds)
                r_clicks += await clicks(page_r, args.clicks // rounds)
            await pw_relay.close()
            await pw_direct.close()
            rows.append(("Playwright click, median (ms)", ms(d_clicks), ms(r_clicks), ""))

            # -- 3. connect_over_cdp with 1 and 20 shared tabs -----------------------
            async def connect_times(
                url: str, headers: dict[str, str] | None, want: int
            ) -> list[float]:
                out = []
                for _ in range(args.connects):
                    start = time.perf_counter()
                    browser = await pw.chromium.connect_over_cdp(url, headers=headers)
                    pages = [
                        p
                        for ctx in browser.contexts
                        for p in ctx.pages
                        if p.url.startswith(site.base)
                    ]
                    assert len(pages) == want, (len(pages), want)
                    out.append(time.perf_counter() - start)
                    await browser.close()
                    await asyncio.sleep(0.2)  # let the relay release the debuggers
                return out

            for count in (1, 20):
                while relay.status()["tabs"] < count:
                    await ext.open_shared(site.url(f"/page?title=T{relay.status()['tabs']}"))
                d_conn = await connect_times(ext.chromium.cdp_url, None, count)
                r_conn = await connect_times(relay.cdp_url, relay.auth_headers(), count)
                rows.append(
                    (
                        f"connect_over_cdp, {count} tab{'s' if count > 1 else ''}, median (ms)",
                        ms(d_conn),
                        ms(r_conn),
                        "",
                    )
                )

        # -- 4. recovery after relay restarts ------------------------------------------
        token = relay.token_headers()["Authorization"][7:]
        lengths = [float(x) for x in args.outages.split(",") if x]
        if args.long_outage:
            lengths.append(args.long_outage)
        for length in lengths:
            relay, took, counter = await outage(relay, ext, length, token)
            first = [t for t in counter.times if t < 25]
            later = [t for t in counter.times if t >= 25]
            gaps = [b - a for a, b in itertools.pairwise(first)]
            target = "<= 1 s" if length <= 25 else "<= 30 s (alarm)"
            recovery.append(
                (
                    f"{length:g} s outage: back after (s)",
                    took,
                    f"{target}; probes {len(first)} in the first {min(length, 25):g} s"
                    f" (min gap {min(gaps, default=0):.2f} s), {len(later)} after",
                )
            )
    finally:
        await ext.close()
        await relay.stop()
        site.server.shutdown()

    print(
        f"\nextension relay vs direct CDP (Chromium {relay.relay.product}, {args.evals} evals, {args.clicks} clicks, {args.connects} connects)\n"
    )
    print(f"{'metric':<46} {'direct':>9} {'relay':>9} {'ratio':>7}  target")
    print("-" * 90)
    for name, d, r, target in rows:
        print(f"{name:<46} {d:>9.2f} {r:>9.2f} {r / d:>6.2f}x  {target}")
    print()
    if profile:
        print(f"{'where a relayed round trip goes (medians)':<62} {'ms':>7}")
        print("-" * 90)
        for name, value in profile:
            print(f"{name:<62} {value:>7.2f}")
        print(
            "  (the turnaround runs from the relay writing a command to the extension's\n"
            "   socket until its reply is read; the fake-extension line has client, relay\n"
            "   and fake in one process)"
        )
        print()
    if click_rows:
        print(
            f"{'where a Puppeteer click goes (medians per click)':<62} {'direct':>9} {'relay':>9}"
        )
        print("-" * 90)
        for name, d, r in click_rows:
            print(f"{name:<62} {d:>9.2f} {r:>9.2f}")
        print(
            "  (a click is a chain of dependent commands: each one's reply is awaited before\n"
            "   the next is sent, so every relayed round trip's extra time adds up; the\n"
            "   waits for a rendered frame make the total move in steps of a frame)"
        )
        print()
    print(f"{'recovery after a relay restart':<46} {'seconds':>9}  target / probes seen")
    print("-" * 90)
    for name, took, note in recovery:
        print(f"{name:<46} {took:>9.2f}  {note}")
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
