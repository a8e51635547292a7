"""Issue 2 benchmark: managed-browser start and tab operations through the API vs bare Chromium.

Runs, in one go and side by side:
  * bare Chromium: spawn -> /json/version answers (same binary and flags class);
  * browserdeck: cold POST /start -> ready (the response returns once CDP answers);
  * POST /tabs/open -> the tab is listed;
  * GET /tabs through the API vs a direct GET /json/list on the browser.

The service runs as a separate `browserdeck serve` process (as users run it), on free
ports, with BROWSERDECK_HOME in a temp dir. Prints a table of medians and ratios.

    .venv/bin/python bench/bench_core.py [--runs 10]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.browsers import base_flags, find_chromium  # noqa: E402
from tests.support.net import free_port  # noqa: E402


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def bare_spawn(executable: str, workdir: Path) -> float:
    port = free_port()
    udd = workdir / f"bare-{port}"
    start = time.perf_counter()
    proc = subprocess.Popen(
        [executable, *base_flags(udd, port), "about:blank"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env=dict(os.environ, HOME=str(workdir)),
    )
    try:
        while True:
            try:
                httpx.get(f"http://127.0.0.1:{port}/json/version", timeout=0.5)
                return time.perf_counter() - start
            except httpx.HTTPError:
                time.sleep(0.005)
    finally:
        os.killpg(proc.pid, 15)
        proc.wait(10)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    executable = find_chromium()
    if not executable:
        print("no Chromium found: run `make browser`", file=sys.stderr)
        return 1

    with tempfile.TemporaryDirectory(prefix="bd-bench-") as tmp:
        home = Path(tmp)
        env = dict(
            os.environ,
            BROWSERDECK_HOME=str(home / "home"),
            PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring",
            BROWSERDECK_TOKEN="bench-token",
        )
        # A config on free ports, written through browserdeck's own config module.
        os.environ["BROWSERDECK_HOME"] = env["BROWSERDECK_HOME"]
        from browserdeck import config

        cfg = config.default_config()
        cfg.control_port, cfg.relay_port = free_port(), free_port()
        cfg.profiles["agent"].cdp_port = free_port()
        config.save(cfg)
        api = f"http://127.0.0.1:{cfg.control_port}"
        cdp = f"http://127.0.0.1:{cfg.profiles['agent'].cdp_port}"

        serve = subprocess.Popen(
            [sys.executable, "-m", "browserdeck", "serve", "--headless"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        client = httpx.Client(
            base_url=api,
            headers={"Authorization": "Bearer bench-token"},
            timeout=60,
            trust_env=False,
        )
        try:
            while True:
                try:
                    client.get("/health")
                    break
                except httpx.HTTPError:
                    time.sleep(0.05)

            bare, start, open_list, api_tabs, direct_tabs = [], [], [], [], []
            bare_spawn(executable, home)  # warm the page cache for both sides
            for _ in range(args.runs):
                bare.append(bare_spawn(executable, home))
                t0 = time.perf_counter()
                resp = client.post("/start")
                resp.raise_for_status()
                start.append(time.perf_counter() - t0)
                for _ in range(3):
                    t0 = time.perf_counter()
                    tab = client.post("/tabs/open", json={"url": "about:blank"}).json()
                    listed = client.get("/tabs").json()["tabs"]
                    open_list.append(time.perf_counter() - t0)
                    assert tab["targetId"] in {t["targetId"] for t in listed}
                direct = httpx.Client(timeout=10, trust_env=False)
                for _ in range(20):
                    t0 = time.perf_counter()
                    direct.get(f"{cdp}/json/list").raise_for_status()
                    direct_tabs.append(time.perf_counter() - t0)
                    t0 = time.perf_counter()
                    client.get("/tabs").raise_for_status()
                    api_tabs.append(time.perf_counter() - t0)
                direct.close()
                client.post("/stop").raise_for_status()
        finally:
            client.close()
            serve.terminate()
            serve.wait(30)

    rows = [
        ("bare Chromium spawn -> /json/version", median_ms(bare), ""),
        (
            "POST /start (cold) -> ready",
            median_ms(start),
            f"{median_ms(start) / median_ms(bare):.2f}x bare (target <= 1.5x)",
        ),
        ("POST /tabs/open + GET /tabs (listed)", median_ms(open_list), ""),
        ("direct GET /json/list", median_ms(direct_tabs), ""),
        (
            "GET /tabs via API",
            median_ms(api_tabs),
            f"+{median_ms(api_tabs) - median_ms(direct_tabs):.2f} ms over direct (target <= 5 ms)",
        ),
    ]
    print(f"browserdeck core benchmark — {args.runs} cold starts, Chromium {executable}")
    print(f"{'measure':42} {'median ms':>10}  comparison")
    print("-" * 96)
    for name, value, note in rows:
        print(f"{name:42} {value:10.1f}  {note}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
