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

``--baseline DIR`` runs the same sessions against another checkout first (its ``app/``
on PYTHONPATH, this venv), e.g. ``git archive main | tar -x -C DIR`` for "before".
"""

from __future__ import annotations

import argparse
import asyncio
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

from browserdeck import uds  # noqa: E402
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


async def run(label: str, app: Path, sessions: int, chromium: str, site: str) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="bd-sessions-") as tmp:
        home = Path(tmp)
        env = env_for(home, chromium, app)
        write_config(home, chromium)  # this tree's config module: the same file
        service = start_service(home, env)
        try:
            instance = json.loads((home / "state" / "instance.json").read_text())
            url, token = f"{instance['url']}/mcp", token_of(env)
            params = StdioServerParameters(
                command=PY, args=["-m", "browserdeck", "mcp"], env=env, cwd=str(home)
            )
            refused = other = 0
            first_refused: int | None = None
            took: list[float] = []  # sessions that were not refused: a refusal is quick
            for n in range(sessions):
                ending = ENDINGS[n % len(ENDINGS)]
                started = time.perf_counter()
                errors = await one_session(n, ending, params, url, token, site)
                if any("maxTabs" in e for e in errors):
                    refused += 1
                    first_refused = n + 1 if first_refused is None else first_refused
                else:
                    took.append(time.perf_counter() - started)
                others = [e for e in errors if "maxTabs" not in e]
                other += len(others)
                for e in others[:1]:
                    print(f"  {label}, session {n + 1} ({ending}): {e[:300]}", flush=True)
            # The last ending may still be under way (its tabs close a moment after the
            # client has gone): read until the count holds for a second, at most 10 s.
            deadline = time.monotonic() + 10
            left, held_since = open_tabs(home), time.monotonic()
            while time.monotonic() - held_since < 1 and time.monotonic() < deadline:
                await asyncio.sleep(0.1)
                now = open_tabs(home)
                if now != left:
                    left, held_since = now, time.monotonic()
            return {
                "side": label,
                "sessions": sessions,
                "refused": refused,
                "first refused": first_refused or "-",
                "other errors": other,
                "tabs at end": left,
                "median s/session (not refused)": round(statistics.median(took), 2)
                if took
                else "-",
            }
        finally:
            service.send_signal(signal.SIGTERM)
            try:
                service.wait(30)
            except subprocess.TimeoutExpired:
                service.kill()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--baseline", type=Path, help="another checkout to run first")
    args = parser.parse_args()
    chromium = find_chromium()
    if chromium is None:
        print("no Chromium found (set BROWSERDECK_CHROME)", file=sys.stderr)
        return 2
    load = Path("/proc/loadavg").read_text().split()[:3]
    print(f"load {' '.join(load)}; endings rotate: {', '.join(ENDINGS)}")
    rows = []
    with serve_site() as site:
        sides = [("baseline", args.baseline / "app")] if args.baseline else []
        sides.append(("this tree", ROOT / "app"))
        for label, app in sides:
            rows.append(asyncio.run(run(label, app, args.sessions, chromium, site)))
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
