"""Issue 9 benchmark: is the observation after an async action true, and what does it cost?

Five MCP servers, driven over stdio by the same Python MCP client (the official SDK), on
the same pages (tests/support/asyncsite.py, served here on 127.0.0.1), in one run, with
rounds interleaved so the machine's load hits all alike:

  * browserdeck (this tree): `python -m browserdeck mcp`, in-process service;
  * baseline: the same from a baseline checkout with its own venv (BASELINE_DIR, default
    ../browserdeck-baseline, the wave's baseline f51f05f as bench/BASELINE.md makes it; the
    restructuring's is 5850a54), named by its commit; see bench/BASELINE.md;
  * Playwright MCP, default (it sleeps a settle time after each action);
  * Playwright MCP with `--timeout-settle 0`;
  * chrome-devtools-mcp.

Every server launches its own headless Chromium from the same binary. Measured:

  * correctness: after each async action, the very next snapshot shows the outcome
    (a click whose fetch answers after D = 400 ms; a link to a page served after 400 ms;
    a form POST + redirect; a pushState route that renders after a fetch; a page with a
    WebSocket, an EventSource stream and a long poll open);
  * latency of those actions (median), the D + 80 ms target for the delayed-fetch click;
  * a click with no network effect, beside a direct Playwright click on the same page,
    interleaved with the rounds
    (Python Playwright on its own Chromium), target +10 ms;
  * navigate and snapshot medians beside the baseline (target within +5%).

Peers live outside the repo (`make peers`, see bench/peers.py); a missing one is skipped
and said so.

    .venv/bin/python bench/bench_truth.py [--rounds 20] [--speed-rounds 30]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import peers  # noqa: E402
from tests.support.asyncsite import AsyncSite, start_async_site  # noqa: E402
from tests.support.browsers import find_chromium  # noqa: E402
from tests.support.net import free_port  # noqa: E402
from tests.support.service import stop_lingering_service  # noqa: E402

from mcp import Client, StdioServerParameters  # noqa: E402

PEERS = peers.BIN
# Absolute: the servers run with their own working directories.
BASELINE_DIR = Path(os.environ.get("BASELINE_DIR") or ROOT.parent / "browserdeck-baseline").absolute()
D_MS = 400


@dataclass
class Side:
    name: str
    params: StdioServerParameters
    kind: str  # "ours" (browserdeck, either tree), "pw" (Playwright MCP), "cdt"
    ref_arg: str = "ref"
    times: dict[str, list[float]] = field(default_factory=dict)
    right: dict[str, int] = field(default_factory=dict)
    runs: dict[str, int] = field(default_factory=dict)
    wrong_example: dict[str, str] = field(default_factory=dict)
    client: Client | None = None

    page_id: int | None = None  # chrome-devtools-mcp names the page in every call

    async def call(self, tool: str, args: dict[str, Any], label: str | None = None) -> str:
        assert self.client is not None
        if self.page_id is not None and tool != "list_pages":
            args = {"pageId": self.page_id, **args}
        start = time.perf_counter()
        result = await self.client.call_tool(tool, args)
        elapsed = time.perf_counter() - start
        text = "\n".join(c.text for c in result.content if c.type == "text")
        if result.is_error:
            raise RuntimeError(f"{self.name} {tool} failed: {text[:500]}")
        if label:
            self.times.setdefault(label, []).append(elapsed)
        return text

    # The three servers name the same tools differently.
    async def navigate(self, url: str, label: str | None = None) -> str:
        if self.kind == "cdt":
            return await self.call("navigate_page", {"type": "url", "url": url}, label)
        return await self.call("browser_navigate", {"url": url}, label)

    async def snapshot(self, label: str | None = None) -> str:
        if self.kind == "cdt":
            return await self.call("take_snapshot", {}, label)
        return await self.call("browser_snapshot", {}, label)

    async def click(self, ref: str, label: str | None = None) -> str:
        if self.kind == "cdt":
            return await self.call("click", {"uid": ref}, label)
        return await self.call("browser_click", {self.ref_arg: ref}, label)

    async def type_submit(self, ref: str, text: str, label: str | None = None) -> str:
        if self.kind == "cdt":
            await self.call("fill", {"uid": ref, "value": text}, label)
            return await self.call("press_key", {"key": "Enter"}, None)
        return await self.call(
            "browser_type", {self.ref_arg: ref, "text": text, "submit": True}, label
        )


def ref_of(text: str, role: str, name: str) -> str:
    # Ours and Playwright MCP: `- button "Load" [ref=e5]`; chrome-devtools-mcp: `uid=1_5 button "Load"`.
    m = re.search(rf'{role} "{re.escape(name)}"[^\n]*?\[ref=([^\]]+)\]', text)
    if m:
        return m.group(1)
    m = re.search(rf'uid=(\S+) {role} "{re.escape(name)}"', text)
    if m:
        return m.group(1)
    raise AssertionError(f"no {role} {name!r} in:\n{text[:2000]}")


# --- scenarios: (label, page, act, what the snapshot right after must show) -----------


async def _fetch_click(side: Side, site: AsyncSite) -> str:
    await side.navigate(site.url("/fetch.html", D_MS))
    ref = ref_of(await side.snapshot(), "button", "Load")
    await side.click(ref, "click, fetch answers in 400 ms")
    return "Loaded: 42"


async def _link_late(side: Side, site: AsyncSite) -> str:
    await side.navigate(site.url("/link.html", D_MS))
    ref = ref_of(await side.snapshot(), "link", "Go slow")
    await side.click(ref, "click, link to a page served in 400 ms")
    return "Arrived"


async def _form_post(side: Side, site: AsyncSite) -> str:
    await side.navigate(site.url("/form.html", D_MS))
    ref = ref_of(await side.snapshot(), "textbox", "Name")
    await side.type_submit(ref, "Ann", "type + submit, POST answers in 400 ms")
    return "Thanks, Ann"


async def _spa(side: Side, site: AsyncSite) -> str:
    await side.navigate(site.url("/spa.html", D_MS))
    ref = ref_of(await side.snapshot(), "button", "Items")
    await side.click(ref, "click, pushState + fetch 400 ms")
    return "Items: 3"


async def _live(side: Side, site: AsyncSite) -> str:
    await side.navigate(site.url("/live.html", D_MS))
    ref = ref_of(await side.snapshot(), "button", "Load")
    await side.click(ref, "click beside WebSocket/SSE/long poll")
    return "Loaded: 42"


SCENARIOS: list[tuple[str, Callable[[Side, AsyncSite], Awaitable[str]]]] = [
    ("delayed fetch", _fetch_click),
    ("late link target", _link_late),
    ("form POST + redirect", _form_post),
    ("pushState SPA", _spa),
    ("WebSocket/SSE page", _live),
]


async def correctness_round(side: Side, site: AsyncSite) -> None:
    for name, scenario in SCENARIOS:
        expected = await scenario(side, site)
        snap = await side.snapshot()
        side.runs[name] = side.runs.get(name, 0) + 1
        if expected in snap:
            side.right[name] = side.right.get(name, 0) + 1
        else:
            side.wrong_example.setdefault(name, snap[:300])


async def speed_round(side: Side, site: AsyncSite) -> None:
    await side.navigate(site.url("/static.html"), "navigate")
    text = await side.snapshot("snapshot (right after navigate)")
    await side.click(ref_of(text, "button", "Count"), "click, no network effect")
    await side.snapshot("snapshot (after a click)")


# --- the servers ------------------------------------------------------------------------


def browserdeck_params(
    python: str, home: Path, chromium: str, pythonpath: str | None = None
) -> StdioServerParameters:
    env = {
        "BROWSERDECK_HOME": str(home),
        "BROWSERDECK_CHROME": chromium,
        "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", ""),
    }
    if pythonpath:  # a baseline checkout without a venv of its own, run with ours
        env["PYTHONPATH"] = pythonpath
    return StdioServerParameters(
        command=python, args=["-m", "browserdeck", "mcp"], env=env, cwd=str(home)
    )


def write_config(python: str, home: Path, pythonpath: str | None = None) -> None:
    # Written by that tree's own code, so its schema matches.
    script = (
        "import os\nfrom browserdeck import config\n"
        "cfg = config.default_config()\n"
        f"cfg.control_port, cfg.relay_port = {free_port()}, {free_port()}\n"
        f"cfg.profiles['agent'].cdp_port = {free_port()}\n"
        "cfg.profiles.pop('chrome', None)\n"
        "cfg.no_sandbox = os.geteuid() == 0\n"
        "config.save(cfg)\n"
    )
    env = dict(os.environ, BROWSERDECK_HOME=str(home))
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    import subprocess

    subprocess.run([python, "-c", script], env=env, check=True, cwd=str(home))


def peer_params(binary: Path, args: list[str], cwd: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=str(binary),
        args=args,
        cwd=str(cwd),
        env={"PATH": os.environ.get("PATH", ""), "HOME": str(cwd)},
    )


@asynccontextmanager
async def started(side: Side) -> AsyncIterator[Side]:
    async with Client(side.params, read_timeout_seconds=120) as client:
        side.client = client
        tools = {t.name: t for t in (await client.list_tools()).tools}
        click = tools.get("browser_click")
        if click is not None:
            props = click.input_schema.get("properties", {})
            side.ref_arg = "target" if "target" in props and "ref" not in props else "ref"
        if side.kind == "cdt":
            listed = await side.call("list_pages", {})
            found = re.search(r"(\d+):", listed)
            side.page_id = int(found.group(1)) if found else 1
        yield side


@asynccontextmanager
async def direct_playwright(site: AsyncSite, chromium: str) -> AsyncIterator[Callable[[], Awaitable[float]]]:
    """A direct Playwright click on its own Chromium, to interleave with the rounds."""
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = await browser.new_page()
        await page.goto(site.url("/static.html"))
        button = page.get_by_role("button", name="Count")

        async def click() -> float:
            start = time.perf_counter()
            await button.click()
            return time.perf_counter() - start

        try:
            yield click
        finally:
            await browser.close()


def med(samples: list[float]) -> float:
    return statistics.median(samples) * 1000 if samples else float("nan")


def checkout_rev(path: Path) -> str:
    """The short commit a baseline checkout is at, so the table says what it compared."""
    out = subprocess.run(
        ["git", "-C", str(path), "rev-parse", "--short=7", "HEAD"],
        capture_output=True, text=True, check=False,
    )
    return out.stdout.strip() or path.name


async def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=20, help="correctness runs per scenario")
    parser.add_argument("--speed-rounds", type=int, default=30, help="navigate/snapshot/click runs")
    parser.add_argument("--only", default="", help="comma-separated side names to run")
    args = parser.parse_args()
    chromium = find_chromium()
    if chromium is None:
        print("no Chromium found", file=sys.stderr)
        return 2
    site = start_async_site()
    tmp = Path(tempfile.mkdtemp(prefix="bench-truth-"))
    sides: list[Side] = []
    try:
        ours_py = str(ROOT / ".venv" / "bin" / "python")
        home = tmp / "ours"
        home.mkdir()
        write_config(ours_py, home)
        sides.append(Side("browserdeck", browserdeck_params(ours_py, home, chromium), "ours"))
        base_py = BASELINE_DIR / ".venv" / "bin" / "python"
        # A checkout with no venv of its own runs with ours (the same dependencies).
        base_path = None if base_py.exists() else str(BASELINE_DIR / "app")
        if base_py.exists() or (BASELINE_DIR / "app" / "browserdeck").is_dir():
            python = str(base_py) if base_py.exists() else ours_py
            home = tmp / "baseline"
            home.mkdir()
            write_config(python, home, base_path)
            sides.append(
                Side(
                    f"baseline {checkout_rev(BASELINE_DIR)}",
                    browserdeck_params(python, home, chromium, base_path),
                    "ours",
                )
            )
        else:
            print(f"(baseline skipped: no {base_py})")
        pw = PEERS / "playwright-mcp"
        if pw.exists():
            flags = ["--headless", "--isolated", "--no-sandbox", "--executable-path", chromium]
            for name, extra in (("Playwright MCP", []), ("PW MCP settle 0", ["--timeout-settle", "0"])):
                cwd = tmp / name.replace(" ", "_")
                cwd.mkdir()
                sides.append(Side(name, peer_params(pw, flags + extra, cwd), "pw"))
        else:
            print(f"(Playwright MCP skipped: no {pw})")
        cdt = PEERS / "chrome-devtools-mcp"
        if cdt.exists():
            cwd = tmp / "cdt"
            cwd.mkdir()
            flags = [
                "--headless", "--isolated", "--executablePath", chromium,
                "--chrome-arg=--no-sandbox", "--no-usage-statistics",
            ]
            sides.append(Side("chrome-devtools-mcp", peer_params(cdt, flags, cwd), "cdt"))
        else:
            print(f"(chrome-devtools-mcp skipped: no {cdt})")
        if args.only:
            keep = {s.strip() for s in args.only.split(",")}
            sides = [s for s in sides if s.name in keep]

        direct: list[float] = []
        async with contextlib.AsyncExitStack() as stack:
            direct_click = await stack.enter_async_context(direct_playwright(site, chromium))
            for side in sides:
                await stack.enter_async_context(started(side))
                await side.navigate(site.url("/static.html"))  # warm-up: browser started
                await side.snapshot()
            for i in range(args.rounds):
                for side in sides if i % 2 == 0 else list(reversed(sides)):
                    await correctness_round(side, site)
            for i in range(args.speed_rounds):
                for side in sides if i % 2 == 0 else list(reversed(sides)):
                    await speed_round(side, site)
                direct.append(await direct_click())
        report(sides, direct, args)
    finally:
        site.close()
        # `browserdeck mcp` started services that outlive it on purpose (docs/mcp.md).
        for home in (tmp / "ours", tmp / "baseline"):
            stop_lingering_service(home)
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


def report(sides: list[Side], direct: list[float], args: argparse.Namespace) -> None:
    names = [s.name for s in sides]
    width = max(12, *(len(n) for n in names))
    print(f"\nCorrectness: the snapshot right after the action shows the outcome ({args.rounds} runs)")
    print(f"{'scenario':26}" + "".join(f"{n:>{width + 2}}" for n in names))
    for name, _ in SCENARIOS:
        row = "".join(
            f"{f'{s.right.get(name, 0)}/{s.runs.get(name, 0)}':>{width + 2}}" for s in sides
        )
        print(f"{name:26}{row}")
    labels: list[str] = []
    for s in sides:
        for label in s.times:
            if label not in labels:
                labels.append(label)
    print("\nLatency, median ms per call (interleaved; ratio = browserdeck / that side)")
    print(f"{'call':42}" + "".join(f"{n:>{width + 2}}" for n in names))
    for label in labels:
        print(f"{label:42}" + "".join(f"{med(s.times.get(label, [])):>{width + 2}.1f}" for s in sides))
    ours = sides[0]
    print("\nRatios browserdeck / other (below 1.00: browserdeck faster)")
    print(f"{'call':42}" + "".join(f"{n:>{width + 2}}" for n in names[1:]))
    for label in labels:
        a = med(ours.times.get(label, []))
        print(
            f"{label:42}"
            + "".join(f"{a / med(s.times.get(label, [])):>{width + 2}.2f}" for s in sides[1:])
        )
    print("\nTargets")
    fetch = med(ours.times.get("click, fetch answers in 400 ms", []))
    print(f"  delayed-fetch click returns within D+80 = {D_MS + 80} ms: {fetch:.1f} ms "
          f"{'ok' if fetch <= D_MS + 80 else 'MISSED'}")
    nonet = med(ours.times.get("click, no network effect", []))
    d = med(direct)
    print(f"  no-network click within +10 ms of a direct Playwright click ({d:.1f} ms): "
          f"{nonet:.1f} ms (+{nonet - d:.1f}) {'ok' if nonet - d <= 10 else 'MISSED'}")
    base = next((s for s in sides if s.name.startswith("baseline")), None)
    if base is not None:
        for label in ("navigate", "snapshot (right after navigate)", "snapshot (after a click)"):
            a, b = med(ours.times.get(label, [])), med(base.times.get(label, []))
            print(f"  {label} within +5% of the baseline: {a:.1f} vs {b:.1f} ms "
                  f"({a / b:.2f}x) {'ok' if a <= b * 1.05 else 'MISSED'}")
    right = sum(ours.right.values())
    runs = sum(ours.runs.values())
    print(f"  correctness {right}/{runs} for browserdeck {'ok' if right == runs else 'MISSED'}")
    for s in sides:
        for name, example in s.wrong_example.items():
            print(f"  ({s.name}, {name}: a wrong observation began {json.dumps(example[:160])})")


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
