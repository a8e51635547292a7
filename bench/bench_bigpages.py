"""Big pages (issue 11 item 10, issue 14 items 5-7): snapshot time and size, one command.

Part 1, the engine on a page of ``--elements`` (default 10,000) elements, in process
against one headless Chromium: GET /snapshot's work for full, limit=50, interactive,
viewport and a one-row selector, beside Playwright's own ``aria_snapshot(mode="ai")``
of the same page (the floor: what the snapshot costs without browserdeck). Medians.

Part 2, through one MCP client (the official Python SDK over stdio), browserdeck's
`browserdeck mcp` beside Playwright MCP (npm, outside the repo: see bench/peers.py), each with
its own headless Chromium from the same binary, calls interleaved:

* snapshot after a click on the 2,000-element table (another row's Edit each round, so
  every click changes the page; click untimed, then browser_snapshot timed), median and min-max, and the CPU its service's main thread
  spent on it (ours and ``--baseline``: the Python share, which holds still on a busy
  machine). Not the whole of what an agent pays: Playwright MCP's ``browser_click``
  itself waits 500 ms for the page to settle and takes a full snapshot (to a file), so
  the same round is also timed as a whole, the click and the snapshot after it, and
  the snapshot is timed once more on the unchanged page (docs/performance.md, "Is the
  comparison like for like?");
* snapshot size with the cap out of the way (ours ``--max-chars 2000000``): a 200-row
  table with two buttons per row (target <= 0.5x Playwright MCP, every button with a
  ref) and a text-heavy article (target <= 1.05x its visible text + 10 chars per link);
* the 2,000-element table at our default 20,000-char cap: chars, folded or not, whether
  the last row and the control after the table are still visible.

``--baseline DIR``: another browserdeck's ``app`` folder (e.g. an earlier revision,
``git archive <rev> app | tar -x -C /tmp/base``, then ``--baseline /tmp/base/app``) runs
beside this one in the snapshot-after-click loop, interleaved, with its own service and
Chromium: an A/B on a shared, busy machine, where runs minutes apart do not compare.

    .venv/bin/python bench/bench_bigpages.py [--runs 5] [--elements 10000] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import statistics
import sys
import tempfile
import time
import urllib.request
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench import peers  # noqa: E402
from tests.mcp.site import PAGES, serve_site  # noqa: E402
from tests.support import bigpages  # noqa: E402
from tests.support.browsers import find_chromium, launch_raw_chromium  # noqa: E402

from bench_mcp import find_peer, texts, write_config, yaml_part  # noqa: E402
from bench_startup import instance_pid, stop_service  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402

PAGES["/table2000.html"] = bigpages.table_2000()
PAGES["/table200.html"] = bigpages.table(200, buttons=2)
PAGES["/article.html"] = bigpages.article()


def med(samples: list[float]) -> str:
    if not samples:
        return "-"
    ms = [s * 1000 for s in samples]
    return f"{statistics.median(ms):8.0f} ({min(ms):.0f}-{max(ms):.0f})"


async def timed(fn: Callable[[], Awaitable[Any]], runs: int) -> tuple[list[float], Any]:
    samples, last = [], None
    for _ in range(runs):
        start = time.perf_counter()
        last = await fn()
        samples.append(time.perf_counter() - start)
    return samples, last


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=10) as resp:
        return bytes(resp.read())


# --- part 1: the engine ---------------------------------------------------------------


async def engine_part(chromium: str, site: str, elements: int, runs: int) -> None:
    from browserdeck.engine import Engine, options

    PAGES["/elements.html"] = bigpages.elements(elements)
    with tempfile.TemporaryDirectory(prefix="bd-bench-big-") as tmp:
        browser = await launch_raw_chromium(chromium, Path(tmp))
        engine = Engine()
        await engine.start()
        try:
            tabs = json.loads(await asyncio.to_thread(_get, browser.cdp_url + "/json/list"))
            tid = next(t["id"] for t in tabs if t["type"] == "page")
            url = site + "/elements.html"
            await engine.navigate(browser.cdp_url, tid, None, options.NavigateOptions(url=url))
            state = await engine.page_state(browser.cdp_url, tid, None)
            await state.page.aria_snapshot(mode="ai")  # warm: the first one compiles
            cases: list[tuple[str, dict[str, Any]]] = [
                ("full", {}),
                ("limit=50", {"limit": 50}),
                ("interactive", {"interactive": True}),
                ("interactive, limit=50", {"interactive": True, "limit": 50}),
                ("viewport", {"viewport": True}),
                ("selector (one row)", {"selector": "#r7"}),
                ("format=aria", {"format": "aria"}),
            ]
            print(f"\nPart 1: engine snapshot, {elements:,}-element page; ms median (min-max)")
            print(f"{'case':28} {'ms':>20} {'chars':>9}  target")
            for label, kw in cases:
                try:
                    o = options.SnapshotOptions.model_validate(kw)
                except Exception as exc:  # an option this build does not have
                    print(f"{label:28} {'n/a':>20}  ({type(exc).__name__})")
                    continue

                async def call(o: Any = o) -> Any:
                    return await engine.snapshot(browser.cdp_url, tid, None, o)

                samples, result = await timed(call, runs)
                target = {"full": "<= 2000", "limit=50": "<= 300"}.get(label, "")
                print(f"{label:28} {med(samples):>20} {len(result.snapshot):9,}  {target}")

            async def peer() -> str:
                return await state.page.aria_snapshot(mode="ai")

            samples, text = await timed(peer, runs)
            print(f"{'Playwright aria_snapshot ai':28} {med(samples):>20} {len(text):9,}  (floor)")
            await marks_cost(engine, browser.cdp_url, tid, site, runs)
        finally:
            await engine.stop()
            await browser.close()


async def marks_cost(engine: Any, cdp_url: str, tid: str, site: str, runs: int) -> None:
    """The engine's snapshot with and without the DOM's marks (engine/marks.py: one walk
    per frame after Playwright's), interleaved in one process on the bench pages."""
    from browserdeck.engine import marks, options

    async def none(_state: Any) -> Any:
        return {}, []

    real = marks.read
    print("\nThe marks' walk after each snapshot (engine/marks.py), interleaved; ms median")
    print(f"{'page':28} {'with marks':>20} {'without':>20}  ratio")
    for path in ("/elements.html", "/table2000.html", "/table200.html", "/article.html"):
        await engine.navigate(cdp_url, tid, None, options.NavigateOptions(url=site + path))
        both: dict[bool, list[float]] = {True: [], False: []}
        for i in range(2 * max(runs, 5)):
            on = i % 2 == 0
            marks.read = real if on else none  # type: ignore[assignment]
            try:
                start = time.perf_counter()
                await engine.snapshot(cdp_url, tid, None, options.SnapshotOptions())
                both[on].append(time.perf_counter() - start)
            finally:
                marks.read = real  # type: ignore[assignment]
        ratio = statistics.median(both[True]) / statistics.median(both[False])
        print(f"{path:28} {med(both[True]):>20} {med(both[False]):>20}  {ratio:.2f}")


# --- part 2: MCP beside Playwright MCP ------------------------------------------------


class Side:
    def __init__(
        self, name: str, params: StdioServerParameters, ref_arg: str, home: Path | None = None
    ) -> None:
        self.name, self.params, self.ref_arg = name, params, ref_arg
        self.home = home  # a browserdeck side's: where its service's pid is
        self.after_click: list[float] = []
        self.click: list[float] = []  # the click itself (Playwright MCP's walks the page)
        self.again: list[float] = []  # a second snapshot, of the unchanged page
        self.cpu: list[float] = []  # its service's main-thread CPU per timed snapshot
        self.sizes: dict[str, str] = {}


def thread_cpu(pid: int | None) -> float | None:
    """Seconds of CPU the main thread of ``pid`` has run (Linux; None elsewhere).

    The scheduler's nanoseconds (psutil's 10 ms ticks are too coarse for one call), and
    the thread that runs the event loop: what a call costs the service, which holds
    still on a busy machine where wall-clock medians do not."""
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/schedstat") as f:
            return int(f.read().split()[0]) / 1e9
    except (OSError, ValueError, IndexError):
        return None


async def call(client: Client, tool: str, args: dict[str, Any]) -> str:
    result = await client.call_tool(tool, args)
    text = texts(result)
    if result.is_error:
        raise RuntimeError(f"{tool} failed: {text[:500]}")
    return text


def ours(
    home: Path, chromium: str, max_chars: int, app: str | None = None
) -> StdioServerParameters:
    env = {
        "BROWSERDECK_HOME": str(home),
        "BROWSERDECK_CHROME": chromium,
        "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", ""),
    }
    if app is not None:  # another browserdeck (--baseline): its package first on the path
        env["PYTHONPATH"] = app
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "browserdeck", "mcp", "--max-chars", str(max_chars)],
        env=env,
        cwd=str(home),
    )


def playwright_mcp(peer: str, work: Path, chromium: str) -> StdioServerParameters:
    flags = ["--executable-path", chromium, "--headless", "--isolated"]
    flags += ["--output-dir", str(work / "out")]
    if os.geteuid() == 0:
        flags.append("--no-sandbox")
    return StdioServerParameters(
        command=peer,
        args=flags,
        cwd=str(work),
        env={"PATH": os.environ.get("PATH", ""), "HOME": str(work)},
    )


def nth_ref(text: str, role: str, name: str, n: int) -> str:
    """The ref of the ``n``-th (mod their count) element with this role and name."""
    refs = re.findall(rf'{role} "{re.escape(name)}"[^\n]*?\[ref=([^\]]+)\]', text)
    if not refs:
        raise RuntimeError(f"no ref for {role} {name!r} in:\n{text[:1500]}")
    return refs[n % len(refs)]


ARTICLE_TEXT = (
    "() => [document.body.innerText.length, document.querySelectorAll('a').length]"
)


async def mcp_part(
    chromium: str,
    site: str,
    runs: int,
    baseline: str | None = None,
    baseline_first: bool = False,
) -> None:
    peer = find_peer()
    with tempfile.TemporaryDirectory(prefix="bd-bench-bigmcp-") as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        write_config(home)
        sides = [Side("browserdeck", ours(home, chromium, 2_000_000), "ref", home)]
        # The baseline only joins the timed loop (its sizes are not the question).
        extra: list[Side] = []
        base_home = Path(tmp) / "baseline"
        if baseline is not None:
            base_home.mkdir()
            write_config(base_home)
            params = ours(base_home, chromium, 2_000_000, app=baseline)
            extra.append(Side("baseline", params, "ref", base_home))
        if peer:
            work = Path(tmp) / "pw"
            work.mkdir()
            sides.append(Side("Playwright MCP", playwright_mcp(peer, work, chromium), "target"))
        else:
            print(f"Playwright MCP not found (install the peers: {peers.INSTALL})")
        # `browserdeck mcp` starts a service that outlives it (docs/mcp.md): stop it here.
        async with contextlib.AsyncExitStack() as stack:
            stack.callback(stop_service, home)
            if extra:
                stack.callback(stop_service, base_home)
            # Which service starts first can matter on a loaded machine (docs/performance.md, "Where
            # a big snapshot's time goes"): --baseline-first starts the baseline's first.
            extra_clients = [
                await stack.enter_async_context(Client(s.params, read_timeout_seconds=120))
                for s in (extra if baseline_first else [])
            ]
            clients = [
                await stack.enter_async_context(Client(s.params, read_timeout_seconds=120))
                for s in sides
            ]
            extra_clients += [
                await stack.enter_async_context(Client(s.params, read_timeout_seconds=120))
                for s in ([] if baseline_first else extra)
            ]
            for client in extra_clients:  # the same pages first, as the sides below
                for path in ("/table200.html", "/article.html", "/table2000.html"):
                    await call(client, "browser_navigate", {"url": site + path})
                    await call(client, "browser_snapshot", {})
            for side, client in zip(sides, clients, strict=True):
                for path in ("/table200.html", "/article.html"):
                    await call(client, "browser_navigate", {"url": site + path})
                    text = await call(client, "browser_snapshot", {})
                    side.sizes[path] = text
                if side.name == "browserdeck":  # the article's visible text, from the page
                    measured = await call(client, "browser_evaluate", {"function": ARTICLE_TEXT})
                    side.sizes["article-text"] = measured
                await call(client, "browser_navigate", {"url": site + "/table2000.html"})
                await call(client, "browser_snapshot", {})
            for i in range(runs):
                pairs = list(zip(sides + extra, clients + extra_clients, strict=True))
                pairs = pairs[i % len(pairs) :] + pairs[: i % len(pairs)]  # each goes first
                for side, client in pairs:
                    text = await call(client, "browser_snapshot", {})
                    # Another row's Edit each round, so that every click changes the page
                    # ("clicked Edit <row>"): the same button each time left the text after
                    # the click the same from the second round on, which is not what an
                    # action usually does, and a text seen before is cheaper for us to read.
                    ref = nth_ref(text, "button", "Edit", i)
                    pid = instance_pid(side.home) if side.home is not None else None
                    clicked = time.perf_counter()
                    await call(client, "browser_click", {side.ref_arg: ref})
                    cpu = thread_cpu(pid)
                    start = time.perf_counter()
                    await call(client, "browser_snapshot", {})
                    end = time.perf_counter()
                    cpu_after = thread_cpu(pid)
                    side.click.append(start - clicked)
                    side.after_click.append(end - start)
                    if cpu is not None and cpu_after is not None:
                        side.cpu.append(cpu_after - cpu)
                    await call(client, "browser_snapshot", {})
                    side.again.append(time.perf_counter() - end)
        # Our default cap, on the 2,000-element table: is the page's shape still there?
        capped = Side("browserdeck capped", ours(home, chromium, 20_000), "ref")
        try:
            async with Client(capped.params, read_timeout_seconds=120) as client:
                await call(client, "browser_navigate", {"url": site + "/article.html"})
                capped_article = await call(client, "browser_snapshot", {})
                await call(client, "browser_navigate", {"url": site + "/table2000.html"})
                capped_text = await call(client, "browser_snapshot", {})
        finally:
            stop_service(home)

    print("\nPart 2: MCP, same client, same Chromium; ms median (min-max)")
    print(f"{'':40} " + " ".join(f"{s.name:>24}" for s in sides))
    print(
        f"{'snapshot after click, 2,000-el table':40} "
        + " ".join(f"{med(s.after_click):>24}" for s in sides)
    )
    def whole(s: Side) -> list[float]:  # the click and the snapshot after it, as one
        return [a + b for a, b in zip(s.click, s.after_click, strict=True)]

    rows: list[tuple[str, Callable[[Side], list[float]]]] = [
        ("  the click before it (untimed above)", lambda s: s.click),
        ("  click + snapshot, as one", whole),
        ("  snapshot again, unchanged page", lambda s: s.again),
    ]
    for label, pick in rows:
        print(f"{label:40} " + " ".join(f"{med(pick(s)):>24}" for s in sides))
    if len(sides) == 2:
        ratios: list[tuple[str, Callable[[Side], list[float]]]] = [
            ("ratio (target <= 1.00)", lambda s: s.after_click),
            ("  ratio, click + snapshot", whole),
            ("  ratio, snapshot of the unchanged page", lambda s: s.again),
        ]
        for label, pick in ratios:
            a, b = (statistics.median(pick(s)) for s in sides)
            print(f"{label:40} {a / b:24.2f}")
        b = statistics.median(sides[1].after_click)
        for side in extra:
            c = statistics.median(side.after_click)
            print(f"{side.name + ' (--baseline)':40} {med(side.after_click):>24}")
            print(f"{'  its ratio to Playwright MCP':40} {c / b:24.2f}")
    for side in sides + extra:  # the service's share, robust on a busy machine
        if side.cpu:
            label = f"service CPU per snapshot, {side.name}"
            mean = statistics.mean(side.cpu) * 1000
            print(f"{label:40} {med(side.cpu):>24}  (main thread; mean {mean:.1f})")

    print("\nSnapshot size, characters of the browser_snapshot result (ours uncapped)")
    ours_side = sides[0]
    t_ours = ours_side.sizes["/table200.html"]
    edits = len(re.findall(r'button "(?:Edit|Delete)" \[ref=', t_ours))
    row = f"{'200-row table, 2 buttons/row':32} {len(t_ours):9,}"
    if len(sides) == 2:
        t_pw = sides[1].sizes["/table200.html"]
        row += f" {len(yaml_part(t_pw)):9,} (yaml) {len(t_pw):9,} (all)  ratio {len(t_ours) / len(t_pw):.2f}"
    print(row + f"  target <= 0.50; buttons with a ref {edits}/400")
    art_len, links = (int(v) for v in re.findall(r"\d+", ours_side.sizes["article-text"])[:2])
    a_ours = ours_side.sizes["/article.html"]
    bound = 1.05 * art_len + 10 * links
    row = f"{'article':32} {len(a_ours):9,}"
    if len(sides) == 2:
        row += f" {len(sides[1].sizes['/article.html']):9,} (Playwright MCP)"
    print(
        row + f"  text {art_len:,} + {links} links: bound {bound:,.0f} "
        f"-> {len(a_ours) / bound:.2f}x the bound (target <= 1.00)"
    )

    linked = len(re.findall(r"link [^\n]*?\[ref=", capped_article))
    row = (
        f"{'article at our default cap (20,000)':32} {len(capped_article):9,}  links with a "
        f"ref {linked}/{links}"
    )
    if len(sides) == 2:
        row += f"  ratio {len(capped_article) / len(sides[1].sizes['/article.html']):.2f}"
    print(row + "  (long prose cut short over the cap, every link kept)")

    last_row = '"Order 400"' in capped_text
    folded = re.search(r"\d+ more like the above", capped_text) is not None
    print(
        f"\n2,000-element table at our default cap (20,000): {len(capped_text):,} chars; "
        f"last row visible: "
        f"{last_row}; folded: {folded}; 'Export' visible: {'Export' in capped_text}"
    )


async def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--elements", type=int, default=10_000)
    parser.add_argument("--skip-engine", action="store_true")
    parser.add_argument("--skip-mcp", action="store_true")
    parser.add_argument("--baseline", help="another browserdeck's app folder, timed beside")
    parser.add_argument(
        "--baseline-first", action="store_true", help="start the baseline's service before ours"
    )
    args = parser.parse_args()
    chromium = find_chromium()
    if not chromium:
        print("no Chromium found: run `make browser`", file=sys.stderr)
        return 1
    wrapper = "/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK) else chromium
    with serve_site() as site:
        if not args.skip_engine:
            await engine_part(chromium, site, args.elements, args.runs)
        if not args.skip_mcp:
            await mcp_part(wrapper, site, args.runs, args.baseline, args.baseline_first)
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
