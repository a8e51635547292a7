"""Issue 36 benchmark: what secrets and auth states cost, through the real API.

In one run, a service in this process (headless, free ports, temp BROWSERDECK_HOME) and
login sites on local servers (tests/support/loginsite.py):

* typing: ``POST /act`` type into a field, plain text against ``<secret>NAME</secret>``
  (the same length of value), interleaved, ``--rounds`` each (target: +5 ms or less);
* ``POST /states/save`` of a profile with tabs at 5 origins, each with localStorage,
  sessionStorage and an IndexedDB database (target: 1 s or less);
* ``POST /states/load`` of that state into a profile with no tab open (each origin is
  restored in a helper tab; target: 1 s or less).

    .venv/bin/python bench/bench_secrets.py [--rounds 40] [--states 10]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ORIGINS = 5


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


async def _ref(client: Any, target: str, name: str) -> str:
    snap = (await client.get("/snapshot", params={"targetId": target})).json()["snapshot"]
    found = re.search(rf'textbox "{re.escape(name)}"[^\n]*\[ref=([^\]]+)\]', snap)
    assert found, snap
    return found[1]


async def _open(client: Any, url: str, profile: str = "agent") -> str:
    tab = (await client.post("/tabs/open", params={"profile": profile}, json={"url": url})).json()
    await client.post(
        "/act", params={"profile": profile, "targetId": tab["targetId"]},
        json={"kind": "wait", "loadState": "load"},
    )
    return str(tab["targetId"])


async def run(rounds: int, states: int) -> list[tuple[str, float, str]]:
    from tests.support.loginsite import PASSWORD, serve_login_site
    from tests.support.net import free_port
    from tests.support.service import api_client, service_config

    from browserdeck import config
    from browserdeck.master import build_service
    from browserdeck.secrets import vault

    with contextlib.ExitStack() as stack:
        sites = [stack.enter_context(serve_login_site()) for _ in range(ORIGINS)]
        vault.shared().set("site", [sites[0].url], PASSWORD)
        cfg = service_config()
        cfg.profiles["fresh"] = config.ProfileConfig(
            "fresh", "managed", "#0066CC", cdp_port=free_port()
        )
        config.save(cfg)
        service = build_service(force_headless=True)
        await service.start()
        try:
            async with api_client(service) as client:
                target = await _open(client, f"{sites[0].url}/login.html")
                params = {"targetId": target}
                user = await _ref(client, target, "Username")
                plain_text = "x" * len(PASSWORD)
                plain: list[float] = []
                secret: list[float] = []
                for i in range(rounds + 3):  # the first rounds warm up
                    for text, into in (
                        (plain_text, plain),
                        ("<secret>site</secret>", secret),
                    ) if i % 2 else (
                        ("<secret>site</secret>", secret),
                        (plain_text, plain),
                    ):
                        started = time.perf_counter()
                        answer = await client.post(
                            "/act", params=params,
                            json={"kind": "type", "ref": user, "text": text, "waitMs": 0},
                        )
                        took = time.perf_counter() - started
                        assert answer.status_code == 200, answer.text
                        if i >= 3:
                            into.append(took)

                for site in sites:  # each origin: its storage, sessionStorage and IndexedDB
                    await _open(client, f"{site.url}/account.html?fresh=1")
                    held = await _open(client, f"{site.url}/idb.html?v=1")
                    await client.post(  # the database is written once the page says so
                        "/act", params={"targetId": held}, json={"kind": "wait", "text": "held v1"}
                    )
                saves: list[float] = []
                loads: list[float] = []
                summary: dict[str, Any] = {}
                for _ in range(states):
                    started = time.perf_counter()
                    saved = await client.post("/states/save", json={"name": "bench"})
                    saves.append(time.perf_counter() - started)
                    summary = saved.json()
                    assert saved.status_code == 200 and not summary["problems"], saved.text
                    started = time.perf_counter()
                    loaded = await client.post(
                        "/states/load", params={"profile": "fresh"}, json={"name": "bench"}
                    )
                    loads.append(time.perf_counter() - started)
                    assert loaded.status_code == 200 and not loaded.json()["problems"], loaded.text
                assert len(summary["origins"]) == ORIGINS and len(summary["indexedDb"]) == ORIGINS
        finally:
            await service.stop()
    extra = median_ms(secret) - median_ms(plain)
    return [
        ("type, plain text", median_ms(plain), ""),
        ("type, <secret>NAME</secret>", median_ms(secret), f"{extra:+.2f} ms (target <= +5 ms)"),
        (f"state save, {ORIGINS} origins", median_ms(saves), "target <= 1000 ms"),
        (f"state load, {ORIGINS} origins (no tab open)", median_ms(loads), "target <= 1000 ms"),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40, help="type calls of each kind")
    parser.add_argument("--states", type=int, default=10, help="saves and loads")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bd-bench-secrets-") as home:
        os.environ["BROWSERDECK_HOME"] = home
        os.environ.setdefault("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
        rows = asyncio.run(run(args.rounds, args.states))
    print(f"load: {Path('/proc/loadavg').read_text().split()[:3] if Path('/proc/loadavg').exists() else '?'}")
    print(f"{'measure':44} {'median ms':>10}  comparison")
    for name, value, note in rows:
        print(f"{name:44} {value:10.2f}  {note}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
