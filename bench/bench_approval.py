"""Approval's cost (docs/approval.md): a click with approval off and with ``risky`` on a
page where nothing is risky, beside the same click with no approval addon at all (the
click as it was before approval existed), and the classification of an element on a
2,000-element page.

One service in this process (headless managed Chromium), clicks at its front door (``Deck``,
as every way in calls it; no wait for what the click caused) on three tabs of a page with
nothing risky, interleaved round by round (the variants share
the machine's load): ``none`` (the approval addon taken out of the front door), ``off``
(the addon, the profile's approval off) and ``risky`` (it reads the element's facts from
the page: one round trip), and the addon's own time in each click (its ``before``). Then
the facts of the last button of the 2,000-element table
(bench_bigpages' page) and of the submit button of a form of 600 fields, read as the
addon reads them (``CheckAction`` through the engine), and the Python verdict on them.

    .venv/bin/python bench/bench_approval.py [--rounds 40]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.approval.site import PAGES, serve  # noqa: E402
from tests.support import bigpages  # noqa: E402
from tests.support.asyncsite import ref_in  # noqa: E402
from tests.support.browsers import find_chromium  # noqa: E402
from tests.support.service import running_service, service_config  # noqa: E402

PAGES["/table2000.html"] = bigpages.table_2000()
PAGES["/form600.html"] = (
    "<!doctype html><html><head><title>Big form</title></head><body><form action='/order' "
    "method='post'>"
    + "".join(f"<label>Field {i} <input name='f{i}'></label>" for i in range(600))
    + "<label>Card <input name='card' autocomplete='cc-number'></label>"
    "<button type='submit'>Continue</button></form></body></html>"
)


def ms(samples: list[float]) -> tuple[float, float]:
    values = sorted(s * 1000 for s in samples)
    return statistics.median(values), values[int(len(values) * 0.9) - 1]


async def main(rounds: int) -> None:
    from browserdeck.deck import Deck
    from browserdeck.door.approval import hub_of, rules
    from browserdeck.door.approval.addon import Approval
    from browserdeck.door.approval.requests import CheckAction
    from browserdeck.door.call import Caller
    from browserdeck.engine.acts import ClickAct

    with serve() as site:
        cfg = service_config()
        cfg.no_sandbox = os.geteuid() == 0
        async with running_service(cfg) as (service, client):
            addon = next(a for a in service.addons if isinstance(a, Approval))
            assert hub_of(service.addons) is not None
            tabs = {}
            for name in ("none", "off", "risky"):
                target = (
                    await client.post("/tabs/open", json={"url": site.page("/safe.html")})
                ).json()["targetId"]
                snap = (await client.get("/snapshot", params={"targetId": target})).json()[
                    "snapshot"
                ]
                tabs[name] = (target, ref_in(snap, 'button "Count"'))
            samples: dict[str, list[float]] = {name: [] for name in tabs}
            hook: dict[str, list[float]] = {"off": [], "risky": []}  # the addon's own time
            before = addon.before

            async def timed_before(call: Any) -> None:
                start = time.perf_counter()
                try:
                    await before(call)
                finally:
                    if call.name == "act":
                        hook[current].append(time.perf_counter() - start)

            addon.before = timed_before  # type: ignore[method-assign]
            deck = Deck(service)
            caller = Caller(client="bench", session="bench", via="api")
            profile = service.config.profiles["agent"]
            order = list(tabs)
            current = "off"
            for i in range(rounds + 3):
                for name in order[i % 3 :] + order[: i % 3]:  # each goes first in turn
                    target, ref = tabs[name]
                    if name == "none":
                        service.addons.remove(addon)
                    current = "risky" if name == "risky" else "off"
                    profile.approval = current
                    click = ClickAct(kind="click", ref=ref, wait_ms=0)
                    start = time.perf_counter()
                    await deck.on_tab(caller, click, target=target)
                    took = time.perf_counter() - start
                    if name == "none":
                        service.addons.add(addon)
                    if i >= 3:  # the first rounds warm up
                        samples[name].append(took)
                    else:
                        hook[current].clear()
            print(f"a click at the front door, {rounds} interleaved rounds (median / p90 ms):")
            base = ms(samples["none"])[0]
            for name, label in (
                ("none", "no approval addon (the click before approval)"),
                ("off", "approval off"),
                ("risky", "approval risky, nothing risky on the page"),
            ):
                median, p90 = ms(samples[name])
                print(f"  {label:48s} {median:7.2f} / {p90:7.2f}   {median - base:+6.2f} ms")
            print("the approval addon's own time in the click (median / p90 ms):")
            for name in ("off", "risky"):
                median, p90 = ms(hook[name])
                print(f"  approval {name:39s} {median:7.3f} / {p90:7.3f}")
            addon.before = before  # type: ignore[method-assign]

            profile.approval = "risky"
            engine = service.engine
            assert engine is not None
            ctx = service.profile("agent")
            check_rules = rules.page_rules(service.config, "risky")
            print(f"\nclassifying the target (median / p90 ms of {rounds}):")
            for path, needle in (
                ("/table2000.html", 'button "Export"'),
                ("/form600.html", 'button "Continue"'),
            ):
                target = (await client.post("/tabs/open", json={"url": site.page(path)})).json()[
                    "targetId"
                ]
                snap = (await client.get("/snapshot", params={"targetId": target})).json()[
                    "snapshot"
                ]
                ref = ref_in(snap, needle)
                count = await client.post(
                    "/act",
                    json={
                        "kind": "evaluate",
                        "fn": "() => document.querySelectorAll('*').length",
                        "targetId": target,
                    },
                )
                request = CheckAction(ref=ref, rules=check_rules)
                times: list[float] = []
                verdict = None
                for _ in range(rounds + 3):
                    start = time.perf_counter()
                    raw = await engine.run(ctx.cdp_url, target, ctx.headers, request)
                    facts = rules.Facts.of(raw)
                    verdict = rules.why(facts, name=needle, words_=rules.words_of(service.config))
                    times.append(time.perf_counter() - start)
                median, p90 = ms(times[3:])
                elements = count.json()["result"]
                print(
                    f"  {path} ({elements} elements), {needle}: {median:.2f} / {p90:.2f}  -> {verdict or 'not risky'}"
                )
    print(f"\nload: {Path('/proc/loadavg').read_text().strip()}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=40)
    args = parser.parse_args()
    if find_chromium() is None:
        sys.exit("no Chromium found (make browser)")
    with tempfile.TemporaryDirectory() as home:
        os.environ["BROWSERDECK_HOME"] = home
        os.environ.setdefault("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
        asyncio.run(main(args.rounds))
