"""Chrome launcher benchmark: browserdeck's launch/stop beside bare Chromium, in one run.

Measured side by side (medians over --runs, interleaved so machine noise hits both):
  * bare Chromium: Popen -> /json/version answers (same binary and flags, fresh profile);
  * launch(), cold: port check, bootstrap + decoration, spawn, /json/version + WS handshake;
  * launch(), warm: the same profile again (decoration re-applied, files exist);
  * stop(): Browser.close -> exit -> process group gone, beside SIGTERM to the bare group;
  * GET /json/version: our raw-asyncio fetch vs a fresh httpx.AsyncClient per call;
  * one CDP round trip (Browser.getVersion) on an open CDPClient.

    .venv/bin/python bench/bench_chrome.py [--runs 10]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.net import free_port  # noqa: E402

from browserdeck.chrome.cdp import CDPClient  # noqa: E402
from browserdeck.chrome.endpoint import fetch_version  # noqa: E402
from browserdeck.chrome.executables import find_browser  # noqa: E402
from browserdeck.chrome.flags import LaunchOptions, child_env, chrome_args  # noqa: E402
from browserdeck.chrome.launcher import launch  # noqa: E402
from browserdeck.chrome.procs import process_group_alive  # noqa: E402


def ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


async def bare_spawn(executable: str, root: Path, run: int) -> tuple[float, float]:
    """Spawn with browserdeck's own flags but none of its logic; poll /json/version at 5 ms."""
    opts = LaunchOptions(
        f"bare{run}", free_port(), root / f"bare{run}" / "user-data", "#FF4500", True, False
    )
    opts.user_data_dir.mkdir(parents=True)
    opts.pipe = False  # bare Chromium answers on its own port
    start = time.perf_counter()
    proc = subprocess.Popen(
        [executable, *chrome_args(opts)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env=child_env(opts),
    )
    url = f"http://127.0.0.1:{opts.port}"
    while True:
        try:
            await fetch_version(url, timeout=0.5)
            break
        except Exception:
            await asyncio.sleep(0.005)
    ready = time.perf_counter() - start
    start = time.perf_counter()
    os.killpg(proc.pid, signal.SIGTERM)
    await asyncio.to_thread(proc.wait, 10)
    while process_group_alive(proc.pid):  # noqa: ASYNC110 (helpers are not our children: no exit event)
        await asyncio.sleep(0.005)
    return ready, time.perf_counter() - start


async def managed(executable: str, opts: LaunchOptions) -> tuple[float, float]:
    start = time.perf_counter()
    browser = await launch(opts)
    ready = time.perf_counter() - start
    start = time.perf_counter()
    await browser.stop()
    return ready, time.perf_counter() - start


async def fetch_compare(
    url: str, n: int, headers: dict[str, str]
) -> tuple[list[float], list[float]]:
    raw: list[float] = []
    via_httpx: list[float] = []
    for _ in range(n):
        start = time.perf_counter()
        await fetch_version(url, headers=headers)
        raw.append(time.perf_counter() - start)
        start = time.perf_counter()
        async with httpx.AsyncClient(trust_env=False, headers=headers) as client:
            (await client.get(f"{url}/json/version")).json()
        via_httpx.append(time.perf_counter() - start)
    return raw, via_httpx


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    executable = find_browser().path
    results: dict[str, list[float]] = {
        k: []
        for k in ("bare_ready", "bare_stop", "cold_ready", "cold_stop", "warm_ready", "warm_stop")
    }
    with tempfile.TemporaryDirectory(prefix="bench-chrome-") as tmp:
        root = Path(tmp)
        for run in range(args.runs):
            ready, stop = await bare_spawn(executable, root, run)
            results["bare_ready"].append(ready)
            results["bare_stop"].append(stop)
            opts = LaunchOptions(
                f"p{run}",
                free_port(),
                root / f"p{run}" / "user-data",
                "#FF4500",
                True,
                False,
                executable=executable,
            )
            ready, stop = await managed(executable, opts)
            results["cold_ready"].append(ready)
            results["cold_stop"].append(stop)
            opts.port = free_port()
            ready, stop = await managed(executable, opts)
            results["warm_ready"].append(ready)
            results["warm_stop"].append(stop)

        opts = LaunchOptions("io", free_port(), root / "io" / "user-data", "#FF4500", True, False)
        opts.token = lambda: "bench"
        browser = await launch(opts)
        try:
            raw, via_httpx = await fetch_compare(browser.cdp_url, 50, browser.auth_headers())
            async with await CDPClient.connect(
                browser.ws_url, headers=browser.auth_headers()
            ) as cdp:
                rtt = []
                for _ in range(200):
                    start = time.perf_counter()
                    await cdp.send("Browser.getVersion")
                    rtt.append(time.perf_counter() - start)
        finally:
            await browser.stop()

    bare = ms(results["bare_ready"])
    print(f"Chromium: {executable}; runs: {args.runs} (medians)\n")
    print(f"{'measure':<46} {'median ms':>10} {'vs bare':>8}")
    print("-" * 66)
    rows = [
        ("bare spawn -> /json/version", bare, None),
        (
            "launch() cold (new profile) -> ready",
            ms(results["cold_ready"]),
            ms(results["cold_ready"]) / bare,
        ),
        (
            "launch() warm (existing profile) -> ready",
            ms(results["warm_ready"]),
            ms(results["warm_ready"]) / bare,
        ),
        ("bare SIGTERM group -> group gone", ms(results["bare_stop"]), None),
        (
            "stop() Browser.close -> group gone (cold)",
            ms(results["cold_stop"]),
            ms(results["cold_stop"]) / ms(results["bare_stop"]),
        ),
        ("GET /json/version, raw asyncio", ms(raw), None),
        ("GET /json/version, new httpx.AsyncClient", ms(via_httpx), ms(via_httpx) / ms(raw)),
        ("CDP Browser.getVersion round trip", ms(rtt), None),
    ]
    for name, value, ratio in rows:
        print(f"{name:<46} {value:>10.2f} {'' if ratio is None else f'{ratio:.2f}x':>8}")
    print("\n(ratios: launch vs bare spawn; stop vs bare SIGTERM; httpx vs raw fetch)")
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
