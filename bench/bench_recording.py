"""Session recording's cost, and the live view's rate and CPU (the targets: docs/performance.md).

1. **Recording on vs off** for what an agent does most: a click, then a snapshot, on a
   page whose button changes it at once. One service (in-process, headless Chromium),
   one recorded agent session; rounds alternate on and off (``Recorder.enabled``) so the
   machine's load hits both alike. Beside them, the recorder's own screenshot before an
   action (the one thing on the action's path), alone. Target: the median overhead is at
   most one such screenshot + 10 ms.
2. **Live view** of a 1280x720 tab that repaints every frame: frames a second and this
   process's CPU while one view is open (the service's side: the frames arrive here over
   our own CDP connection), and while none is. Target: at least 5 fps, under 25% of one
   core.

    .venv/bin/python bench/bench_recording.py [--rounds 30] [--seconds 10]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PAGE = (
    "data:text/html,<title>Bench</title><h1>Recording bench</h1>"
    "<button onclick=\"document.getElementById('n').textContent = +document.getElementById('n')"
    ".textContent + 1\">Add one</button><p id=n>0</p>"
    + "".join(f"<p>Paragraph {i} <a href='#{i}'>link {i}</a></p>" for i in range(60))
)


def _median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


async def main(rounds: int, seconds: float) -> None:
    home = Path(tempfile.mkdtemp(prefix="bench-recording-"))
    os.environ["BROWSERDECK_HOME"] = str(home)
    os.environ.setdefault("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    from tests.recording.site import serve_site
    from tests.support.service import service_config

    from browserdeck import config
    from browserdeck.deck import Deck
    from browserdeck.door.call import Caller
    from browserdeck.engine import options as o
    from browserdeck.master import build_service

    cfg = service_config()
    cfg.profiles.pop("chrome", None)
    config.save(cfg)
    service = build_service(force_headless=True)
    await service.start()
    deck = Deck(service)
    agent = Caller(client="bench-agent", session="bench-1")
    user = Caller(client="browserdeck-gui", via="gui")
    try:
        tab = await deck.open_tab(agent, None, PAGE)
        target = tab.target_id
        await deck.on_tab(agent, o.act_of({"kind": "resize", "width": 1280, "height": 720}),
                          target=target)
        snap = await deck.on_tab(agent, o.SnapshotOptions(), target=target)
        ref = snap.snapshot.split('button "Add one" [ref=')[1].split("]")[0]
        recorder = deck.recorder
        sid = recorder.sessions()[0].id
        click = o.ClickAct(kind="click", ref=ref)
        on: list[float] = []
        off: list[float] = []
        shots: list[float] = []
        for i in range(rounds * 2 + 4):
            recording = i % 2 == 0
            recorder.enabled = recording
            await recorder.settled(sid)
            t0 = time.perf_counter()
            await deck.on_tab(agent, click, target=target)
            await deck.on_tab(agent, o.SnapshotOptions(), target=target)
            ms = (time.perf_counter() - t0) * 1000
            t1 = time.perf_counter()
            await deck.on_tab(user, o.RecordShot(ref=ref), target=target)
            shot = (time.perf_counter() - t1) * 1000
            if i >= 4:  # the first rounds warm up
                (on if recording else off).append(ms)
                shots.append(shot)
        recorder.enabled = True
        await recorder.settled(sid)
        m_on, m_off, m_shot = _median(on), _median(off), _median(shots)
        overhead = m_on - m_off
        print(f"load: {Path('/proc/loadavg').read_text().strip()}")
        print(f"\nclick + snapshot, {rounds} rounds each, interleaved (ms, median)")
        print(f"  {'recording off':<28}{m_off:8.1f}")
        print(f"  {'recording on':<28}{m_on:8.1f}")
        print(f"  {'overhead':<28}{overhead:8.1f}   ({m_on / m_off:.2f}x)")
        print(f"  {'the shot before, alone':<28}{m_shot:8.1f}")
        target_ms = m_shot + 10
        verdict = "met" if overhead <= target_ms else "MISSED"
        print(f"  target: overhead <= shot + 10 ms = {target_ms:.1f} ms: {verdict}")

        # --- the live view --------------------------------------------------------------
        with serve_site() as site:
            anim = await deck.open_tab(agent, None, f"{site}/anim.html")
            await deck.on_tab(agent, o.act_of({"kind": "resize", "width": 1280, "height": 720}),
                              target=anim.target_id)
            idle_cpu = await _cpu_over(seconds / 2)
            frames: list[float] = []
            sizes: list[int] = []

            def on_frame(frame: object) -> None:
                data = base64.b64decode(frame.jpeg)  # type: ignore[attr-defined]
                sizes.append(len(data))
                frames.append(time.monotonic())

            view = await deck.watch_tab(user, None, anim.target_id, on_frame)
            await asyncio.sleep(1.0)  # the first frames
            start = len(frames)
            live_cpu = await _cpu_over(seconds)
            got = len(frames) - start
            await view.stop()
            fps = got / seconds
            print(f"\nlive view of a 1280x720 tab repainting every frame, {seconds:g} s")
            print(f"  frames a second            {fps:8.1f}   (capped at 8)")
            print(f"  frame size (median)        {_median([float(s) for s in sizes]) / 1024:8.1f} KiB")
            print(f"  this process's CPU, live   {live_cpu:8.1f} % of one core")
            print(f"  this process's CPU, idle   {idle_cpu:8.1f} % of one core")
            ok = fps >= 5 and live_cpu < 25
            print(f"  target: >= 5 fps and < 25% of one core: {'met' if ok else 'MISSED'}")
    finally:
        await service.stop()


async def _cpu_over(seconds: float) -> float:
    """This process's CPU (user + system) over ``seconds``, in % of one core."""
    before, t0 = os.times(), time.monotonic()
    await asyncio.sleep(seconds)
    after, t1 = os.times(), time.monotonic()
    used = (after.user - before.user) + (after.system - before.system)
    return used / (t1 - t0) * 100


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    asyncio.run(main(args.rounds, args.seconds))
