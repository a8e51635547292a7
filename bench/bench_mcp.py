"""Issue 6 benchmark: browserdeck's MCP server vs Playwright MCP, side by side in one run.

Both servers are driven over stdio by the same Python MCP client (the official SDK)
on the same local pages (served here on 127.0.0.1), each launching its own headless
Chromium from the same binary:

  * browserdeck: `python -m browserdeck mcp` in a temp BROWSERDECK_HOME with no
    service running, i.e. the in-process fallback (first call starts the browser);
  * Playwright MCP: `playwright-mcp --executable-path /usr/bin/chromium --headless
    --isolated --no-sandbox`, run in a temp working directory (it writes files there).

Measured: median latency per call for navigate, snapshot, click, type, screenshot, and
a tab listing (``tabs list``: little but the MCP server's own per-call overhead);
snapshot size (characters of the tool result's text) per page, with a check that
every element Playwright MCP gives an actionable ref also has a ref in ours; and the
size of `tools/list` (JSON characters) for our `core` and `all` vs theirs.

Playwright MCP is not part of browserdeck. Install it outside the repo:

    make peers     # npm, into ../peers beside the checkout (bench/peers.py)

or point PLAYWRIGHT_MCP at its `playwright-mcp` binary. Without it the script
measures browserdeck alone and says so.

    .venv/bin/python bench/bench_mcp.py [--rounds 15] [--baseline OTHER/app] [--no-peer]

``--baseline`` adds a third side, browserdeck from another checkout's ``app`` folder
(run with this tree's venv), interleaved with ours, and a table of ours against it.
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
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import peers  # noqa: E402
from tests.mcp.site import PAGES, serve_site  # noqa: E402
from tests.support.browsers import find_chromium  # noqa: E402
from tests.support.net import free_port  # noqa: E402
from tests.support.service import stop_lingering_service  # noqa: E402

from browserdeck.mcpserver import snapshot as snap  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402

PEER_CANDIDATES = (str(peers.BIN / "playwright-mcp"),)
# A mid-sized page like a real one: navigation, cards, a form, a table, a footer.
PAGES["/catalog.html"] = (
    "<!doctype html><html><head><meta charset='utf-8'><title>Catalog</title></head><body>"
    "<header><nav>"
    + "".join(f"<a href='/c/{i}'>Category {i}</a> " for i in range(12))
    + "</nav><input type='search' aria-label='Search'><button>Search</button></header><main>"
    + "".join(
        f"<article><h2>Product {i}</h2><p>Description of product {i}, a fine thing.</p>"
        f"<span>${10 + i}</span><button>Add to cart</button><a href='/p/{i}'>Details</a>"
        f"</article>"
        for i in range(40)
    )
    + "<form><label>Email <input type='email' name='e'></label><label><input type='checkbox'>"
    "Subscribe</label><select aria-label='Freq'><option>Weekly</option><option>Monthly"
    "</option></select><button>Send</button></form><table>"
    + "".join(
        f"<tr><td>Row {i}</td><td>{i * 3}</td><td><a href='/r/{i}'>Open</a></td></tr>"
        for i in range(20)
    )
    + "</table></main><footer><ul>"
    + "".join(f"<li><a href='/f/{i}'>Footer link {i}</a></li>" for i in range(10))
    + "</ul></footer></body></html>"
)
SNAPSHOT_PAGES = ("/shop.html", "/form.html", "/frames.html", "/catalog.html")
THINK_SECONDS = 1.0
TARGETED = ("navigate", "snapshot", "click", "type", "screenshot")


def find_peer() -> str | None:
    env = os.environ.get("PLAYWRIGHT_MCP")
    if env:
        return env if os.access(env, os.X_OK) else None
    for path in PEER_CANDIDATES:
        if os.access(path, os.X_OK):
            return path
    return shutil.which("playwright-mcp")


def texts(result: Any) -> str:
    return "\n".join(c.text for c in result.content if c.type == "text")


def yaml_part(text: str) -> str:
    """The snapshot inside Playwright MCP's markdown answer (```yaml ... ```)."""
    m = re.search(r"```yaml\n(.*?)```", text, re.S)
    return m.group(1) if m else text


def ref_of(text: str, role: str, name: str) -> str:
    m = re.search(rf'{role} "{re.escape(name)}"[^\n]*?\[ref=([^\]]+)\]', text)
    if not m:
        raise RuntimeError(f"no ref for {role} {name!r} in:\n{text[:2000]}")
    return m.group(1)


def actionable_names(yaml_text: str) -> set[tuple[str, str]]:
    """(role, name) of every element with a ref that an agent can act on."""
    out: set[tuple[str, str]] = set()

    def walk(nodes: list[snap.Node]) -> None:
        for node in nodes:
            if node.role is not None and node.ref and (snap._is_actionable(node)):
                out.add((node.role, node.name or ""))
            walk(node.children)

    walk(snap.parse(yaml_text))
    return out


# role "name" [attr]... [ref=eN] anywhere on a line: the compact form puts a table row's
# or a list item's controls on the row's line.
_WITH_REF = re.compile(r'(?<![\w"])([a-z][\w-]*)( "(?:[^"\\]|\\.)*")?((?: \[[^\]]*\])*)')


def ref_names(text: str) -> set[tuple[str, str]]:
    out: set[tuple[str, str]] = set()
    for line in text.splitlines():
        for m in _WITH_REF.finditer(line):
            if "[ref=" in (m.group(3) or ""):
                out.add((m.group(1), (m.group(2) or "").strip()))
    return out


class Side:
    def __init__(self, name: str, params: StdioServerParameters, ref_arg: str) -> None:
        self.name = name
        self.params = params
        self.ref_arg = ref_arg  # "ref" (ours) or "target" (Playwright MCP 0.0.7x+)
        self.times: dict[str, list[float]] = {}
        self.snapshot_chars: dict[str, int] = {}
        self.snapshot_text: dict[str, str] = {}
        self.tools_chars = 0

    async def call(
        self, client: Client, tool: str, args: dict[str, Any], label: str | None = None
    ) -> Any:
        start = time.perf_counter()
        result = await client.call_tool(tool, args)
        elapsed = time.perf_counter() - start
        if result.is_error:
            raise RuntimeError(f"{self.name} {tool} failed: {texts(result)}")
        if label:
            self.times.setdefault(label, []).append(elapsed)
        return result


@asynccontextmanager
async def connect(params: StdioServerParameters) -> AsyncIterator[Client]:
    async with Client(params, read_timeout_seconds=120) as client:
        yield client


async def tools_list_chars(params: StdioServerParameters) -> int:
    async with connect(params) as client:
        tools = (await client.list_tools()).tools
    data = [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in tools]
    return len(json.dumps(data))


async def prepare(side: Side, client: Client, site: str) -> None:
    tools = (await client.list_tools()).tools
    side.tools_chars = len(
        json.dumps([t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in tools])
    )
    await side.call(client, "browser_navigate", {"url": site + "/next.html"})  # warm-up
    for path in SNAPSHOT_PAGES:
        await side.call(client, "browser_navigate", {"url": site + path})
        result = await side.call(client, "browser_snapshot", {})
        side.snapshot_text[path] = texts(result)
        side.snapshot_chars[path] = len(side.snapshot_text[path])


async def one_round(side: Side, client: Client, site: str) -> None:
    start = time.perf_counter()
    await side.call(client, "browser_navigate", {"url": site + "/shop.html"}, "navigate")
    text = texts(await side.call(client, "browser_snapshot", {}, "snapshot"))
    side.times.setdefault("navigate+snapshot", []).append(time.perf_counter() - start)
    button = ref_of(text, "button", "Add to cart")
    search = ref_of(text, "searchbox", "Search")
    await side.call(client, "browser_click", {side.ref_arg: button}, "click")
    await side.call(client, "browser_type", {side.ref_arg: search, "text": "chair"}, "type")
    # Almost nothing but the MCP server's own path (one tab listing): its per-call overhead.
    await side.call(client, "browser_tabs", {"action": "list"}, "tabs list")
    result = await side.call(client, "browser_take_screenshot", {}, "screenshot")
    assert any(c.type == "image" for c in result.content), "screenshot has an image"
    # As an agent works: it reads the navigate result (here: a second) before it asks
    # for the snapshot.
    await side.call(client, "browser_navigate", {"url": site + "/form.html"})
    await asyncio.sleep(THINK_SECONDS)
    await side.call(client, "browser_snapshot", {}, "snapshot after think")


async def drive(sides: list[Side], site: str, rounds: int) -> None:
    """Both servers up at once, rounds interleaved, so load on the machine hits both alike."""
    async with contextlib.AsyncExitStack() as stack:
        clients = [await stack.enter_async_context(connect(side.params)) for side in sides]
        for side, client in zip(sides, clients, strict=True):
            await prepare(side, client, site)
        for i in range(rounds):
            order = list(zip(sides, clients, strict=True))
            for side, client in order if i % 2 == 0 else reversed(order):
                await one_round(side, client, site)


def ours_params(
    home: Path, chromium: str, tools: str = "core", pythonpath: str | None = None
) -> StdioServerParameters:
    env = {
        "BROWSERDECK_HOME": str(home),
        "BROWSERDECK_CHROME": chromium,
        "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", ""),
    }
    if pythonpath or "PYTHONPATH" in os.environ:  # another checkout: PYTHONPATH=<it>/app
        env["PYTHONPATH"] = pythonpath or os.environ["PYTHONPATH"]
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "browserdeck", "mcp", "--tools", tools],
        env=env,
        cwd=str(home),
    )


def report_baseline(ours: Side, base: Side) -> None:
    print("\nAgainst the baseline checkout, median ms (interleaved; ratio = ours / baseline)")
    print(f"{'tool':22} {'browserdeck':>12} {'baseline':>9} {'ratio':>7}")
    for label in ours.times:
        a, b = median_ms(ours.times[label]), median_ms(base.times.get(label, []))
        print(f"{label:22} {a:12.1f} {b:9.1f} {a / b:7.2f}")


def write_config(home: Path) -> None:
    os.environ["BROWSERDECK_HOME"] = str(home)
    from browserdeck import config

    cfg = config.default_config()
    cfg.control_port, cfg.relay_port = free_port(), free_port()
    cfg.profiles["agent"].cdp_port = free_port()
    del cfg.profiles["chrome"]  # no extension relay for this run
    cfg.no_sandbox = os.geteuid() == 0
    config.save(cfg)


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000 if samples else float("nan")


def report(ours: Side, theirs: Side | None, ours_all: int) -> None:
    print("\nPer-call latency, median ms (same pages, same client, same Chromium)")
    print(f"{'tool':18} {'browserdeck':>12} {'Playwright MCP':>15} {'ratio':>7}  target")
    for label in (
        "navigate",
        "snapshot",
        "click",
        "type",
        "screenshot",
        "tabs list",
        "navigate+snapshot",
        "snapshot after think",
    ):
        a = median_ms(ours.times.get(label, []))
        b = median_ms(theirs.times.get(label, [])) if theirs else float("nan")
        ratio = f"{a / b:7.2f}" if theirs else "      -"
        ok = "" if not theirs else ("ok" if a <= b else "MISSED")
        target = f"<= 1.00 {ok}" if label in TARGETED else "(for reference)"
        print(f"{label:18} {a:12.1f} {b:15.1f} {ratio}  {target}")

    print("\nSnapshot size, characters of the browser_snapshot result")
    print(
        f"{'page':16} {'browserdeck':>12} {'Playwright MCP':>15} {'ratio':>7}  actionable refs kept"
    )
    for path in SNAPSHOT_PAGES:
        a = ours.snapshot_chars[path]
        if theirs:
            b = theirs.snapshot_chars[path]
            wanted = actionable_names(yaml_part(theirs.snapshot_text[path]))
            missing = wanted - ref_names(ours.snapshot_text[path])
            kept = f"{len(wanted) - len(missing)}/{len(wanted)}"
            if missing:
                kept += " missing: " + ", ".join(f"{r} {n}" for r, n in sorted(missing)[:5])
            print(f"{path:16} {a:12,} {b:15,} {a / b:7.2f}  {kept}  (target <= 0.80)")
        else:
            print(f"{path:16} {a:12,} {'-':>15}")

    print("\ntools/list JSON size, characters")
    if theirs:
        print(
            f"{'browserdeck core':22} {ours.tools_chars:8,}  {ours.tools_chars / theirs.tools_chars:.2f}x"
            " theirs (target <= 0.60)"
        )
        print(f"{'browserdeck all':22} {ours_all:8,}  {ours_all / theirs.tools_chars:.2f}x theirs")
        print(f"{'Playwright MCP':22} {theirs.tools_chars:8,}")
    else:
        print(f"{'browserdeck core':22} {ours.tools_chars:8,}")
        print(f"{'browserdeck all':22} {ours_all:8,}")


async def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--baseline", help="another checkout's app folder to run beside ours")
    parser.add_argument("--no-peer", action="store_true", help="leave Playwright MCP out")
    args = parser.parse_args()
    chromium = find_chromium()
    if not chromium:
        print("no Chromium found: run `make browser`", file=sys.stderr)
        return 1
    peer = None if args.no_peer else find_peer()
    if peer is None:
        print(
            "Playwright MCP not found; measuring browserdeck alone. To compare, install it "
            "outside the repo:\n  " + peers.INSTALL + "\n"
            "(or set PLAYWRIGHT_MCP to its playwright-mcp binary)\n",
            file=sys.stderr,
        )
    # Debian's /usr/bin/chromium wrapper adds the distribution's flags; both sides use it
    # when present, so both launch the same browser the same way.
    wrapper = "/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK) else chromium
    with tempfile.TemporaryDirectory(prefix="bd-bench-mcp-") as tmp, serve_site() as site:
        home = Path(tmp) / "home"
        home.mkdir()
        write_config(home)
        ours = Side("browserdeck", ours_params(home, wrapper), "ref")
        ours_all = await tools_list_chars(ours_params(home, wrapper, "all"))
        theirs = None
        if peer:
            work = Path(tmp) / "pw"
            work.mkdir()
            flags = [
                "--executable-path",
                wrapper,
                "--headless",
                "--isolated",
                "--output-dir",
                str(work / "out"),
            ]
            if os.geteuid() == 0:
                flags.append("--no-sandbox")
            theirs = Side(
                "Playwright MCP",
                StdioServerParameters(
                    command=peer,
                    args=flags,
                    cwd=str(work),
                    env={"PATH": os.environ.get("PATH", ""), "HOME": str(work)},
                ),
                "target",
            )
        print(
            f"browserdeck MCP vs {'Playwright MCP (' + peer + ')' if peer else 'nothing'}; "
            f"{args.rounds} rounds; Chromium {wrapper}"
        )
        base = None
        if args.baseline:
            base_home = Path(tmp) / "baseline"
            base_home.mkdir()
            write_config(base_home)
            params = ours_params(base_home, wrapper, pythonpath=str(Path(args.baseline).absolute()))
            base = Side("baseline", params, "ref")
        try:
            sides = [s for s in (ours, base, theirs) if s is not None]
            await drive(sides, site, args.rounds)
        finally:
            # `browserdeck mcp` started a service that outlives it on purpose (docs/mcp.md).
            stop_lingering_service(home)
            if base is not None:
                stop_lingering_service(Path(tmp) / "baseline")
        report(ours, theirs, ours_all)
        if base is not None:
            report_baseline(ours, base)
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
