"""Issue 29 item 4: agent sessions opened and closed in a row leave no tabs behind.

Each session is what an MCP client does for one agent, through the official Python SDK
client: spawn `browserdeck mcp` (the real stdio bridge) or open an HTTP session on
`/mcp`, navigate (the session's first tab), open a second tab, then end. The endings
rotate: the client closes (the bridge deletes its session on the end of its stdin),
the bridge is killed with SIGKILL (no goodbye: the service sees its pid go), and an
HTTP session deleted by the SDK's streamable HTTP client. One `browserdeck serve
--headless` runs for the whole run with the default settings (maxTabs 40), so a tab
left behind by each session would get the 40th-odd session refused.

Target: 0 refused, at most 5 tabs open at the end.

    .venv/bin/python bench/bench_sessions.py [--sessions 200] [--baseline DIR]

``--baseline DIR`` runs the same sessions against another checkout (its ``app/`` on
PYTHONPATH, this venv; e.g. ``git archive main | tar -x -C DIR`` for "before"), its own
service beside ours, the two sides' sessions interleaved (same load for both).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx2  # noqa: E402
from bench.bench_startup import ours_env, write_config  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from tests.mcp.site import serve_site  # noqa: E402
from tests.support.browsers import find_chromium  # noqa: E402

from browserdeck.util import uds  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402

PY = str(ROOT / ".venv" / "bin" / "python")
ENDINGS = ("client closes", "bridge killed", "HTTP DELETE")


def env_for(home: Path, chromium: str, app: Path) -> dict[str, str]:
    return {**ours_env(home, chromium), "PYTHONPATH": str(app)}


def start_service(home: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [PY, "-m", "browserdeck", "serve", "--headless"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while not (home / "state" / "instance.json").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return proc


def open_tabs(home: Path) -> int:
    _, _, body = uds.request(str(home / "run" / "api.sock"), "GET", "/tabs", timeout=30)
    return len(json.loads(body)["tabs"])


def token_of(env: dict[str, str]) -> str:
    done = subprocess.run(
        [PY, "-m", "browserdeck", "token"], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def bridge_child() -> psutil.Process | None:
    for child in psutil.Process().children():
        try:
            if "mcp" in child.cmdline():
                return child
        except psutil.Error:
            continue
    return None


async def one_session(
    n: int, ending: str, params: StdioServerParameters, url: str, token: str, site: str
) -> list[str]:
    """One agent session; the text of each tool error it got."""
    errors: list[str] = []

    async def work(client: Client) -> None:
        for tool, args in (
            ("browser_navigate", {"url": f"{site}/shop.html?session={n}"}),
            ("browser_tabs", {"action": "new"}),
        ):
            result = await client.call_tool(tool, args)
            if result.is_error:
                errors.append(" ".join(c.text for c in result.content if c.type == "text"))

    if ending == "HTTP DELETE":
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=90) as http,
            # The handshake protocol: a session of its own, which the client deletes (on
            # the stateless one a client names a session with X-Browserdeck-Session).
            Client(
                streamable_http_client(url, http_client=http), mode="legacy",
                read_timeout_seconds=90,
            ) as c,
        ):
            await work(c)
        return errors
    async with Client(params, read_timeout_seconds=90) as client:
        await work(client)
        if ending == "bridge killed":
            bridge = bridge_child()
            if bridge is not None:  # the SDK client reaps it as it closes
                bridge.send_signal(signal.SIGKILL)
    return errors


class Side:
    """One checkout's service and its sessions' outcomes."""

    def __init__(self, label: str, app: Path, chromium: str, home: Path) -> None:
        self.label, self.home = label, home
        env = env_for(home, chromium, app)
        write_config(home, chromium)  # this tree's config module: the same file
        self.service = start_service(home, env)
        instance = json.loads((home / "state" / "instance.json").read_text())
        self.url, self.token = f"{instance['url']}/mcp", token_of(env)
        self.params = StdioServerParameters(
            command=PY, args=["-m", "browserdeck", "mcp"], env=env, cwd=str(home)
        )
        self.refused = self.other = 0
        self.first_refused: int | None = None
        self.took: list[float] = []  # sessions that were not refused: a refusal is quick

    async def session(self, n: int, site: str) -> None:
        ending = ENDINGS[n % len(ENDINGS)]
        started = time.perf_counter()
        errors = await one_session(n, ending, self.params, self.url, self.token, site)
        if any("maxTabs" in e for e in errors):
            self.refused += 1
            self.first_refused = self.first_refused or n + 1
        else:
            self.took.append(time.perf_counter() - started)
        others = [e for e in errors if "maxTabs" not in e]
        self.other += len(others)
        for e in others[:1]:
            print(f"  {self.label}, session {n + 1} ({ending}): {e[:300]}", flush=True)

    async def tabs_left(self) -> int:
        """Once the count holds for a second (the last ending's tabs close a moment after
        its client has gone), at most 10 s."""
        deadline = time.monotonic() + 10
        left, held_since = open_tabs(self.home), time.monotonic()
        while time.monotonic() - held_since < 1 and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
            now = open_tabs(self.home)
            if now != left:
                left, held_since = now, time.monotonic()
        return left

    def stop(self) -> None:
        self.service.send_signal(signal.SIGTERM)
        try:
            self.service.wait(30)
        except subprocess.TimeoutExpired:
            self.service.kill()


async def run(
    checkouts: list[tuple[str, Path]], sessions: int, chromium: str, site: str
) -> list[dict[str, object]]:
    """Every side's n-th session before any side's n+1-th: the same load for each."""
    with contextlib.ExitStack() as stack:
        sides = []
        for label, app in checkouts:
            home = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bd-sessions-")))
            side = Side(label, app, chromium, home)
            stack.callback(side.stop)
            sides.append(side)
        for n in range(sessions):
            for side in sides if n % 2 else reversed(sides):
                await side.session(n, site)
        return [
            {
                "side": side.label,
                "sessions": sessions,
                "refused": side.refused,
                "first refused": side.first_refused or "-",
                "other errors": side.other,
                "tabs at end": await side.tabs_left(),
                "median s/session (not refused)": round(statistics.median(side.took), 2)
                if side.took
                else "-",
            }
            for side in sides
        ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--baseline", type=Path, help="another checkout, interleaved")
    args = parser.parse_args()
    chromium = find_chromium()
    if chromium is None:
        print("no Chromium found (set BROWSERDECK_CHROME)", file=sys.stderr)
        return 2
    load = Path("/proc/loadavg").read_text().split()[:3]
    print(f"load {' '.join(load)}; endings rotate: {', '.join(ENDINGS)}")
    with serve_site() as site:
        sides = [("baseline", args.baseline / "app")] if args.baseline else []
        sides.append(("this tree", ROOT / "app"))
        rows = asyncio.run(run(sides, args.sessions, chromium, site))
    keys = list(rows[0])
    print("| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    for row in rows:
        print("| " + " | ".join(str(row[k]) for k in keys) + " |")
    ours = rows[-1]
    ok = ours["refused"] == 0 and int(str(ours["tabs at end"])) <= 5
    print(f"target (0 refused, at most 5 tabs at the end): {'met' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
