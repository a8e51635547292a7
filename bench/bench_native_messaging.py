"""Issue 12 item 6: would native messaging be a faster channel than the worker's WebSocket?

A prototype timing, not a product: one headless Chromium with a copy of the browserdeck
extension that also has the ``nativeMessaging`` permission, and two echo peers in Python:

  * websocket: the worker's WebSocket to a local echo server (the channel the relay uses;
    the frame is the relay's own, a header line and a CDP payload, parsed in the worker);
  * native:    ``chrome.runtime.connectNative`` to an echo host that Chrome starts (its
    manifest in the profile's NativeMessagingHosts folder), the same command as an object;
  * debugger:  ``chrome.debugger.sendCommand(Runtime.evaluate)`` on a tab, for scale.

Each is timed inside the service worker, in interleaved batches of 10 round trips
(performance.now() is coarsened to 0.1 ms in a worker); medians of the batch means.
A native-messaging relay would also need a second hop, from the host Chrome starts to
the browserdeck process, which this does not count (docs/extension.md, Performance).

    .venv/bin/python bench/bench_native_messaging.py [--round-trips 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.relay.harness import (  # noqa: E402
    EXTENSION_DIR,
    ExtBrowser,
    extension_flags,
    start_site,
)
from tests.support.browsers import find_chromium, launch_raw_chromium  # noqa: E402
from websockets.asyncio.server import ServerConnection, serve  # noqa: E402

from browserdeck.chrome.cdp import CDPClient  # noqa: E402
from browserdeck.relay.extension_id import EXTENSION_ID  # noqa: E402
from browserdeck.relay.server import RelayServer  # noqa: E402
from browserdeck.secrets.tokens import new_token  # noqa: E402

HOST_NAME = "com.browserdeck.echo"
COMMAND = '{"id":5,"method":"cdp","tabId":1,"cdpMethod":"Runtime.evaluate"}'
ECHO_HOST = """#!{python}
# Native messaging echo host: every message straight back (length prefix included).
import struct, sys
inp, out = sys.stdin.buffer, sys.stdout.buffer
while True:
    head = inp.read(4)
    if len(head) < 4:
        break
    out.write(head + inp.read(struct.unpack("<I", head)[0]))
    out.flush()
"""

WORKER = r"""(async () => {
  const N = %d, B = 10;
  const cmd = '%s\n{"expression":"1+1"}';
  const ws = new WebSocket('ws://127.0.0.1:%d/');
  await new Promise((r) => (ws.onopen = r));
  const port = chrome.runtime.connectNative('%s');
  const obj = { id: 5, method: 'cdp', tabId: 1, cdpMethod: 'Runtime.evaluate', params: { expression: '1+1' } };
  let tab;
  while (!(tab = (await chrome.tabs.query({})).find((t) => (t.url || t.pendingUrl || '').startsWith('http')))) {
    await new Promise((r) => setTimeout(r, 50));
  }
  const tabId = tab.id;
  await chrome.debugger.attach({ tabId }, '1.3');
  const kinds = {
    websocket: async () => {
      const got = new Promise((r) => (ws.onmessage = (e) => r(e.data)));
      ws.send(cmd);
      const data = await got, nl = data.indexOf('\n');
      JSON.parse(data.slice(0, nl)); JSON.parse(data.slice(nl + 1));
    },
    native: async () => {
      const got = new Promise((r) => { const f = (m) => { port.onMessage.removeListener(f); r(m); }; port.onMessage.addListener(f); });
      port.postMessage(obj);
      await got;
    },
    debugger: () => chrome.debugger.sendCommand({ tabId }, 'Runtime.evaluate', { expression: '1+1' }),
  };
  const out = {};
  for (const k in kinds) { out[k] = []; for (let i = 0; i < 20; i++) await kinds[k](); }
  for (let b = 0; b < N / B; b++) for (const k in kinds) {
    const t = performance.now();
    for (let i = 0; i < B; i++) await kinds[k]();
    out[k].push((performance.now() - t) / B);
  }
  ws.close(); port.disconnect(); await chrome.debugger.detach({ tabId });
  const res = {};
  for (const k in out) { const a = out[k].sort((x, y) => x - y); res[k] = a[Math.floor(a.length / 2)]; }
  return res;
})()"""


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--round-trips", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    chromium_path = find_chromium()
    if chromium_path is None:
        print("no Chromium found (set BROWSERDECK_CHROME)")
        return 2
    work = Path(tempfile.mkdtemp(prefix="bench-native-"))
    # A copy of the extension with the one extra permission (same key, so the same id).
    ext_dir = work / "extension"
    shutil.copytree(EXTENSION_DIR, ext_dir)
    manifest = json.loads((ext_dir / "manifest.json").read_text())
    manifest["permissions"].append("nativeMessaging")
    (ext_dir / "manifest.json").write_text(json.dumps(manifest))
    host = work / "echo_host.py"
    host.write_text(ECHO_HOST.format(python=sys.executable))
    host.chmod(0o700)
    profile = work / "profile"
    # Chromium on Linux reads per-user host manifests from <user-data-dir>/NativeMessagingHosts.
    (profile / "NativeMessagingHosts").mkdir(parents=True)
    (profile / "NativeMessagingHosts" / f"{HOST_NAME}.json").write_text(
        json.dumps(
            {
                "name": HOST_NAME,
                "description": "browserdeck bench echo",
                "path": str(host),
                "type": "stdio",
                "allowed_origins": [f"chrome-extension://{EXTENSION_ID}/"],
            }
        )
    )

    async def echo(ws: ServerConnection) -> None:
        async for message in ws:
            assert isinstance(message, str)
            await ws.send(message.replace(COMMAND, '{"id":5}'))

    server = await serve(echo, "127.0.0.1", 0, compression=None)
    port = next(iter(server.sockets)).getsockname()[1]
    site = start_site()
    chromium = await launch_raw_chromium(chromium_path, profile, extension_flags(ext_dir))
    runs: list[dict[str, float]] = []
    try:
        cdp = await CDPClient.connect(chromium.ws_url)
        await cdp.send("Target.createTarget", {"url": site.url("/page?title=P")})
        ext = ExtBrowser(chromium, cdp, RelayServer(port=0, token=new_token()))
        for _ in range(args.runs):
            runs.append(
                await ext.sw_eval(WORKER % (args.round_trips, COMMAND, port, HOST_NAME), wait=300)
            )
        await cdp.close()
    finally:
        await chromium.close()
        server.close()
        site.server.shutdown()
        shutil.rmtree(work, ignore_errors=True)

    print(f"\nchannel round trip inside the extension's service worker ({args.round_trips} each)\n")
    print(f"{'channel':<58} " + " ".join(f"{'run ' + str(i + 1):>8}" for i in range(len(runs))))
    print("-" * 90)
    names = {
        "websocket": "worker WebSocket <-> Python echo server (today's channel)",
        "native": "native messaging <-> Python echo host",
        "debugger": "chrome.debugger.sendCommand(Runtime.evaluate), for scale",
    }
    for key, name in names.items():
        print(f"{name:<58} " + " ".join(f"{run[key]:>7.2f}ms" for run in runs))
    print("\n(a native-messaging relay adds a hop: host process <-> browserdeck)\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
