"""Issue 14: the boot timeline of the service that `browserdeck mcp` starts when none runs.

Starts `browserdeck serve --headless --idle-exit` (as the bridge does) in a fresh
BROWSERDECK_HOME on free ports, then, as fast as it can, probes from outside: the API
socket accepts, `/mcp` answers `initialize`, then `tools/list`, then the first
`browser_navigate` (a local page). ``--think MS`` waits that long before that navigate,
as a model choosing its first call does; "its own time" is counted from sending it.
Marks from inside come from the service's own log lines (wall-clock timestamps, ms): the
service starting (its imports done), the engine (Playwright driver) started, Chromium
started, the engine connected and holding the blank tab. All relative to the spawn,
median of ``--rounds`` runs, ms.

    .venv/bin/python bench/boot_timeline.py [--rounds 3] [--compare OLD/app]

``--compare`` (repeatable) runs another checkout's ``app/`` (e.g. ``git archive <commit> app | tar -x
-C /tmp/old``) the same way, rounds alternating, and prints both columns; ``--chrome``
(repeatable) runs this checkout with each given browser binary instead (default: the one
browserdeck launches headless, `bench_startup.headless_browser()`). Then the import
profile of the service (``python -X importtime``), largest first.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_startup import (  # noqa: E402
    BD,
    PY,
    headless_browser,
    ours_env,
    stop_service,
    write_config,
)
from tests.mcp.site import serve_site  # noqa: E402
from tests.support.imports import MCP_SERVE_PATH  # noqa: E402

from browserdeck.util import uds  # noqa: E402

# Log lines that mark a step inside the service (logsetup's format: "%Y-%m-%d %H:%M:%S,mmm").
MARKS = {
    "service starting (imports done)": re.compile(r"browserdeck \S+ starting"),
    "API listening (log)": re.compile(r"control API on http"),
    "engine ready (Playwright driver)": re.compile(r"engine started"),
    "browser ready (Chromium)": re.compile(r"started \S+ \(.*\) for profile"),
    "engine connected to Chromium": re.compile(r"engine\.connection.*connected to "),
    "engine took in its tab ahead of a call": re.compile(r"engine took in \d+ tab"),
    "engine warmed up the blank tab": re.compile(r"engine warmed up a blank tab"),
}


def post(sock: str, body: dict[str, object], headers: dict[str, str]) -> tuple[int, bytes, dict[str, str]]:
    status, answer, raw = uds.request(
        sock,
        "POST",
        "/mcp",
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            **headers,
        },
        body=json.dumps(body).encode(),
        timeout=120,
    )
    return status, raw, answer


def one_round(
    home: Path, chromium: str, url: str, app: Path | None = None, think: float = 0.0
) -> dict[str, float]:
    env = ours_env(home, chromium)
    command = [BD, "serve", "--headless", "--idle-exit"]
    if app is not None:  # another checkout's package, ahead of the installed one
        env["PYTHONPATH"] = str(app)
        command = [PY, "-m", "browserdeck", "serve", "--headless", "--idle-exit"]
    sock = str(home / "run" / "api.sock")
    marks: dict[str, float] = {}
    wall0 = time.time()
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        command,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        while True:
            # A connect, as the bridge waits (a GET of another route would build the
            # FastAPI app, which a service serving only /mcp never does: api/staged.py).
            probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                probe.connect(sock)
                break
            except OSError:
                if proc.poll() is not None:
                    raise RuntimeError("the service exited") from None
                time.sleep(0.002)
            finally:
                probe.close()
        marks["socket answers (probe)"] = time.perf_counter() - t0
        headers = {"X-Browserdeck-Session": "timeline", "X-Browserdeck-Bridge": str(os.getpid())}
        init = {
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "timeline", "version": "1"}},
        }  # fmt: skip
        status, raw, answer = post(sock, init, headers)
        marks["/mcp initialize answered"] = time.perf_counter() - t0
        # CPU so far: less bent by a loaded machine than the wall clock (seconds, as marks).
        service = psutil.Process(proc.pid)
        cpu = service.cpu_times()
        marks["CPU: service process at initialize"] = cpu.user + cpu.system
        children = 0.0
        for child in service.children(recursive=True):
            with contextlib.suppress(psutil.Error):
                c = child.cpu_times()
                children += c.user + c.system
        marks["CPU: its children at initialize"] = children
        if status != 200:
            raise RuntimeError(f"initialize: {status} {raw[:300]!r}")
        sid = answer.get("mcp-session-id")
        if sid:
            headers["Mcp-Session-Id"] = sid
        headers["Mcp-Protocol-Version"] = "2025-06-18"
        post(sock, {"jsonrpc": "2.0", "method": "notifications/initialized"}, headers)
        post(sock, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers)
        marks["tools/list answered"] = time.perf_counter() - t0
        time.sleep(think)  # the model choosing its first call
        sent = time.perf_counter()
        call = {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                "params": {"name": "browser_navigate", "arguments": {"url": url}}}  # fmt: skip
        status, raw, _ = post(sock, call, headers)
        marks["first navigate answered"] = time.perf_counter() - t0
        marks["first navigate: its own time"] = time.perf_counter() - sent
        if status != 200 or b'"isError":true' in raw:
            raise RuntimeError(f"navigate: {status} {raw[:300]!r}")
    finally:
        stop_service(home)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    log = home / "state" / "log" / "browserdeck.log"
    text = log.read_text(encoding="utf-8") if log.exists() else ""
    for name, pattern in MARKS.items():
        for line in text.splitlines():
            if pattern.search(line):
                stamp = datetime.datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S,%f")
                marks[name] = stamp.timestamp() - wall0
                break
    log.unlink(missing_ok=True)
    ready = marks.get("engine ready (Playwright driver)")
    if ready is not None:  # the path after the driver has started, round by round
        marks["first navigate: after engine ready and sent"] = (
            marks["first navigate answered"] - max(ready, marks["tools/list answered"] + think)
        )
    return marks


def import_profile(home: Path, chromium: str, top: int) -> None:
    """What `serve` imports before it answers (the service, the API server and MCP,
    beside the driver it spawned first; not the engine, imported once the API listens,
    nor FastAPI, which a service started for MCP builds only when another route is
    used), largest cumulative first."""
    done = subprocess.run(
        [PY, "-X", "importtime", "-c", MCP_SERVE_PATH],
        env=ours_env(home, chromium), capture_output=True, text=True, check=True,
    )  # fmt: skip
    rows = []
    for line in done.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)", line)
        if m:
            rows.append((int(m.group(2)), len(m.group(3)), m.group(4)))
    total = sum(c for c, depth, _ in rows if depth == 1)
    print(f"\nimports of `serve` before it answers: {total / 1000:.0f} ms cumulative (top level)")
    for cumulative, _depth, name in sorted(rows, reverse=True)[:top]:
        print(f"  {cumulative / 1000:7.1f} ms  {name}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--think", type=float, default=0.0, metavar="MS",
                        help="wait this long after tools/list before the first navigate, "
                        "as a model choosing its first call does (default: none)")  # fmt: skip
    parser.add_argument("--compare", type=Path, metavar="APP_DIR", action="append", default=[],
                        help="another checkout's app/ folder, run alternately (repeatable)")  # fmt: skip
    parser.add_argument("--chrome", metavar="PATH", action="append", default=[],
                        help="run this checkout with this browser binary (repeatable; "
                        "default: the one browserdeck launches headless)")  # fmt: skip
    args = parser.parse_args()
    default = headless_browser()
    chromes = args.chrome or ([default] if default else [])
    if not chromes:
        print("no Chromium found", file=sys.stderr)
        return 2
    chromium = chromes[0]
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; "
          f"--compare sides run {chromium}")  # fmt: skip
    subprocess.run([PY, "-m", "compileall", "-q", str(ROOT / "app" / "browserdeck")], check=True)
    tmp = Path(tempfile.mkdtemp(prefix="boot-timeline-"))
    home = tmp / "home"
    home.mkdir()
    write_config(home, chromium)
    sides: dict[str, tuple[Path | None, str]] = {}
    for chrome in chromes:
        sides[f"this checkout, {Path(chrome).name}" if len(chromes) > 1 else "this checkout"] = (
            None,
            chrome,
        )
    for other in args.compare:
        subprocess.run([PY, "-m", "compileall", "-q", str(other)], check=True)
        sides[str(other)] = (other.resolve(), chromium)
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in sides}
    with serve_site() as site:
        for i in range(args.rounds + 1):  # round 0 warms disk caches and is not counted
            order = list(sides.items())
            order = order[i % len(order):] + order[: i % len(order)]  # each side first in turn
            for name, (app, chrome) in order:
                marks = one_round(home, chrome, f"{site}/form40.html?r={i}", app, args.think / 1000)
                if i:
                    runs[name].append(marks)
    every = [r for side in runs.values() for r in side]
    names = sorted({k for r in every for k in r}, key=lambda k: statistics.median(
        [r[k] for r in every if k in r]))  # fmt: skip
    print(f"\nboot timeline of `serve --headless --idle-exit`, {args.rounds} rounds, "
          "ms after spawn, median (min-max)")  # fmt: skip
    print(f"  {'':36}" + "".join(f"{name[-24:]:>26}" for name in sides))
    for key in names:
        cells = []
        for name in sides:
            values = [r[key] * 1000 for r in runs[name] if key in r]
            cells.append(f"{statistics.median(values):.0f} ({min(values):.0f}-{max(values):.0f})"
                         if values else "-")  # fmt: skip
        print(f"  {key:36}" + "".join(f"{c:>26}" for c in cells))
    import_profile(home, chromium, args.top)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
