from __future__ import annotations

import json
import urllib.request

from tests.support.browsers import RawChromium


async def test_raw_chromium_answers_json_version(chromium: RawChromium) -> None:
    with urllib.request.urlopen(f"{chromium.cdp_url}/json/version", timeout=5) as resp:
        info = json.load(resp)
    assert info["webSocketDebuggerUrl"].startswith("ws://127.0.0.1:")
    assert "Chrome" in info["Browser"]
