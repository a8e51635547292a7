"""Real widget libraries through MCP: browserdeck beside Playwright MCP and chrome-devtools-mcp.

The tasks of the widget suite (tests/widgets/tasks.py: a rich-text editor in an iframe,
a virtualised data grid, a drag-to-reorder list, two code editors, a date picker, a custom
select, a tree, tabs, a modal dialog, an API explorer, a virtual list, an editable grid),
each on the library's own dist files (installed by `make widgets` into .cache/widgets)
served by a local server, driven the way an agent does: find the element by name and
role in the latest snapshot, act on its ref, check the page with the server's evaluate.
Every server runs the same tasks with the official MCP SDK client over stdio, each with
its own headless Chromium from the same binary, tasks interleaved (each round starts
with another server).

Printed: per task, how many runs each server completed (and why the first failure
failed), the snapshot size in characters (the median of the snapshots a task took), and
the tasks Playwright MCP completed where browserdeck did not (the target: none).

``--baseline DIR``: another browserdeck's ``app`` folder (``git archive main app | tar
-x -C /tmp/base``, then ``--baseline /tmp/base/app``) runs the same tasks beside.

    .venv/bin/python bench/bench_widgets.py [--runs 3] [--only browserdeck,playwright]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench import peers  # noqa: E402
from tests.support.browsers import find_chromium  # noqa: E402
from tests.widgets.agent import (  # noqa: E402
    Agent,
    Browserdeck,
    ChromeDevtoolsMcp,
    Dialect,
    PlaywrightMcp,
)
from tests.widgets.server import missing, serve_widgets  # noqa: E402
from tests.widgets.tasks import TASKS  # noqa: E402

from bench_bigpages import ours  # noqa: E402
from bench_mcp import write_config  # noqa: E402
from bench_startup import peer_params, stop_service  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402

TASK_TIMEOUT = 120.0  # s; a task that takes longer failed (an agent would have given up)


@dataclass
class Side:
    name: str
    params: StdioServerParameters
    dialect: type[Dialect]
    home: Path | None = None  # a browserdeck side's, to stop its service after
    done: dict[str, int] = field(default_factory=dict)
    why: dict[str, str] = field(default_factory=dict)  # the first failure per task
    chars: dict[str, list[int]] = field(default_factory=dict)
    seconds: dict[str, list[float]] = field(default_factory=dict)


def sides_for(tmp: Path, chromium: str, baseline: str | None) -> list[Side]:
    out = []
    home = tmp / "browserdeck"
    home.mkdir()
    write_config(home)
    out.append(Side("browserdeck", ours(home, chromium, 2_000_000), Browserdeck, home))
    if baseline is not None:
        base = tmp / "baseline"
        base.mkdir()
        write_config(base)
        params = ours(base, chromium, 2_000_000, app=baseline)
        out.append(Side("baseline", params, Browserdeck, base))
    root = os.geteuid() == 0
    pw = peers.BIN / "playwright-mcp"
    if pw.exists():
        cwd = tmp / "playwright"
        cwd.mkdir()
        flags = ["--headless", "--isolated", "--executable-path", chromium]
        flags += ["--output-dir", str(cwd / "out")] + (["--no-sandbox"] if root else [])
        out.append(Side("Playwright MCP", peer_params(pw, flags, cwd), PlaywrightMcp))
    else:
        print(f"(Playwright MCP skipped: no {pw}; install the peers: {peers.INSTALL})")
    cdt = peers.BIN / "chrome-devtools-mcp"
    if cdt.exists():
        cwd = tmp / "cdt"
        cwd.mkdir()
        flags = ["--headless", "--isolated", "--executablePath", chromium]
        flags += ["--no-usage-statistics", "--no-performance-crux"]
        flags += ["--chrome-arg=--no-sandbox"] if root else []
        out.append(Side("chrome-devtools-mcp", peer_params(cdt, flags, cwd), ChromeDevtoolsMcp))
    else:
        print(f"(chrome-devtools-mcp skipped: no {cdt})")
    return out


async def run_task(side: Side, client: Client, task_name: str, site: str) -> None:
    task = next(t for t in TASKS if t.name == task_name)
    agent = Agent(client, side.dialect())
    start = time.perf_counter()
    try:
        await asyncio.wait_for(task.run(agent, site), TASK_TIMEOUT)
    except (AssertionError, TimeoutError, StopIteration, Exception) as exc:
        side.done.setdefault(task.name, 0)
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        side.why.setdefault(task.name, first[:110])
    else:
        side.done[task.name] = side.done.get(task.name, 0) + 1
        side.seconds.setdefault(task.name, []).append(time.perf_counter() - start)
    side.chars.setdefault(task.name, []).extend(agent.snapshot_chars)


def report(sides: list[Side], runs: int) -> None:
    width = 18
    print(f"\nTasks completed of {runs} run(s) each; median snapshot chars in ()")
    print(f"{'task':16} {'library':24} " + " ".join(f"{s.name:>{width}}" for s in sides))
    for task in TASKS:
        cells = []
        for side in sides:
            chars = side.chars.get(task.name) or [0]
            cells.append(f"{side.done.get(task.name, 0)}/{runs} ({statistics.median(chars):,.0f})")
        print(f"{task.name:16} {task.library:24} " + " ".join(f"{c:>{width}}" for c in cells))
    totals = [sum(s.done.values()) for s in sides]
    print(f"{'total':41} " + " ".join(f"{t}/{runs * len(TASKS):>{width - 3}}" for t in totals))
    for side in sides:
        all_chars = [c for chars in side.chars.values() for c in chars]
        if all_chars:
            print(
                f"  {side.name}: snapshot chars median {statistics.median(all_chars):,.0f}, "
                f"mean {statistics.mean(all_chars):,.0f} over {len(all_chars)} snapshots"
            )
    ours_side = sides[0]
    for peer in sides[1:]:
        if peer.name == "baseline":
            continue
        worse = [t.name for t in TASKS if peer.done.get(t.name, 0) > ours_side.done.get(t.name, 0)]
        print(f"tasks {peer.name} completed more often than browserdeck: {worse or 'none'}")
    print("\nFirst failure per task:")
    for side in sides:
        for name, why in side.why.items():
            print(f"  {side.name:20} {name:16} {why}")


async def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", help="servers to run, comma-separated names (prefixes)")
    parser.add_argument("--tasks", help="task names to run, comma-separated")
    parser.add_argument("--baseline", help="another browserdeck's app folder, run beside")
    args = parser.parse_args()
    why = missing()
    if why is not None:
        print(why, file=sys.stderr)
        return 1
    chromium = find_chromium()
    if not chromium:
        print("no Chromium found: run `make browser`", file=sys.stderr)
        return 1
    # The peers launch it themselves: Debian's wrapper script, as bench_bigpages does.
    wrapper = "/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK) else chromium
    names = [t.name for t in TASKS]
    if args.tasks:
        names = [n for n in names if n in {s.strip() for s in args.tasks.split(",")}]
    print(f"load: {Path('/proc/loadavg').read_text().strip()}")
    with tempfile.TemporaryDirectory(prefix="bd-bench-widgets-") as tmp, serve_widgets() as site:
        sides = sides_for(Path(tmp), wrapper, args.baseline)
        if args.only:
            keep = [s.strip().lower() for s in args.only.split(",")]
            sides = [s for s in sides if any(s.name.lower().startswith(k) for k in keep)]
        async with contextlib.AsyncExitStack() as stack:
            clients = []
            for side in sides:
                if side.home is not None:
                    stack.callback(stop_service, side.home)
                clients.append(
                    await stack.enter_async_context(Client(side.params, read_timeout_seconds=120))
                )
            for run in range(args.runs):
                for i, name in enumerate(names):
                    order = list(zip(sides, clients, strict=True))
                    k = (run + i) % len(order)
                    for side, client in order[k:] + order[:k]:
                        await run_task(side, client, name, site)
    report(sides, args.runs)
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
