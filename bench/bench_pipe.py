"""The managed browser's CDP endpoint: what the extra hop costs, in one run.

One small round trip (``Runtime.evaluate`` of ``1+1`` on a page, returning a number),
medians over --runs calls, interleaved in blocks so machine noise hits every path:

  * direct pipe: browserdeck's own client on Chrome's ``--remote-debugging-pipe``
    (``BrowserPipe.call`` on a page session), the floor every client now sits on;
  * endpoint: a raw WebSocket client (``websockets``, JSON both ways) through
    browserdeck's CDP endpoint, token checked at connect, into that same pipe;
  * Chrome's own port (what managed browsers had before): the same client on a second
    Chromium started with ``--remote-debugging-port``, for reference.

Target (issue 10 item 2): endpoint minus direct pipe <= 0.3 ms at the median.

    .venv/bin/python bench/bench_pipe.py [--runs 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import websockets

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.browsers import find_chromium, launch_raw_chromium  # noqa: E402
from tests.support.net import free_port  # noqa: E402

from browserdeck.chrome.launcher import LaunchOptions, launch  # noqa: E402

TARGET_MS = 0.3
EXPRESSION = {"expression": "1+1", "returnByValue": True}


class WsClient:
    """A minimal CDP client on one WebSocket: send, wait for the answer with that id."""

    def __init__(self, ws: websockets.ClientConnection) -> None:
        self.ws = ws
        self.ids = itertools.count(1)

    async def call(self, method: str, params: dict[str, object], session: str | None) -> object:
        call_id = next(self.ids)
        message: dict[str, object] = {"id": call_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        await self.ws.send(json.dumps(message))
        while True:
            reply = json.loads(await self.ws.recv())
            if reply.get("id") == call_id:
                return reply.get("result")


async def page_session(client: WsClient) -> str:
    created = await client.call("Target.createTarget", {"url": "about:blank"}, None)
    target = created["targetId"]  # type: ignore[index]
    attached = await client.call(
        "Target.attachToTarget", {"targetId": target, "flatten": True}, None
    )
    return str(attached["sessionId"])  # type: ignore[index]


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--block", type=int, default=100)
    args = parser.parse_args()
    chromium = find_chromium()
    if chromium is None:
        print("no Chromium found", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="bench-pipe-") as tmp:
        root = Path(tmp)
        opts = LaunchOptions(
            "bench", free_port(), root / "managed" / "user-data", "#FF4500", True, False,
            executable=chromium,
        )
        opts.token = lambda: "bench-token"
        managed = await launch(opts)
        raw = await launch_raw_chromium(chromium, root / "raw")
        try:
            assert managed.pipe is not None
            pipe = managed.pipe
            created = await pipe.call("Target.createTarget", {"url": "about:blank"})
            attached = await pipe.call(
                "Target.attachToTarget", {"targetId": created["targetId"], "flatten": True}
            )
            direct_session = str(attached["sessionId"])
            via = WsClient(await websockets.connect(
                managed.ws_url, additional_headers=managed.auth_headers(), max_size=None,
                compression=None,
            ))
            via_session = await page_session(via)
            port = WsClient(await websockets.connect(raw.ws_url, max_size=None, compression=None))
            port_session = await page_session(port)

            async def direct_call() -> None:
                await pipe.call("Runtime.evaluate", EXPRESSION, session=direct_session)

            async def via_call() -> None:
                await via.call("Runtime.evaluate", EXPRESSION, via_session)

            async def port_call() -> None:
                await port.call("Runtime.evaluate", EXPRESSION, port_session)

            paths = {"direct pipe": direct_call, "endpoint": via_call, "Chrome's own port": port_call}
            samples: dict[str, list[float]] = {name: [] for name in paths}
            for fn in paths.values():  # warm up
                for _ in range(50):
                    await fn()
            for _ in range(max(1, args.runs // args.block)):
                for name, fn in paths.items():
                    for _ in range(args.block):
                        start = time.perf_counter()
                        await fn()
                        samples[name].append(time.perf_counter() - start)
            await via.ws.close()
            await port.ws.close()
        finally:
            await managed.stop()
            await raw.close()

    def stat(name: str, q: float) -> float:
        data = sorted(samples[name])
        return data[min(len(data) - 1, int(q * len(data)))] * 1000

    base = statistics.median(samples["direct pipe"]) * 1000
    print(f"\nRuntime.evaluate(1+1) round trip, {len(samples['direct pipe'])} calls per path, "
          f"interleaved in blocks of {args.block}")
    print(f"{'path':<20} {'median ms':>10} {'p90 ms':>8} {'vs direct pipe':>15}")
    for name in paths:
        median = statistics.median(samples[name]) * 1000
        print(f"{name:<20} {median:>10.3f} {stat(name, 0.9):>8.3f} "
              f"{median - base:>+12.3f} ms ({median / base:.2f}x)")
    hop = statistics.median(samples["endpoint"]) * 1000 - base
    verdict = "met" if hop <= TARGET_MS else "MISSED"
    print(f"\nextra hop of the endpoint: {hop:+.3f} ms at the median "
          f"(target <= {TARGET_MS} ms): {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
