"""A recording holds no secret of the vault: not in its text, not in its images.

An agent types a vault secret by name into a plain text input (one no rule about input
kinds would hide) and opens a page whose address holds the value, through the official
MCP SDK client. The recorded step's images paint that input over; no file the service
wrote (the recording, its exports, the logs) holds the value.
"""

from __future__ import annotations

import io
from pathlib import Path
from urllib.parse import quote_plus

from PIL import Image, ImageStat

from browserdeck.deck import Deck
from browserdeck.door import admin
from browserdeck.door.call import Caller
from browserdeck.recording.shots import CAPTION_PX, MASK
from browserdeck.secrets import vault
from tests.mcp.harness import call, http_client, ref_of
from tests.support.loginsite import PASSWORD, serve_login_site
from tests.support.service import running_service

GUI = Caller(client="browserdeck-gui", via="gui")


def _colour(data: bytes, box: list[float]) -> tuple[float, ...]:
    x, y, w, h = box
    image = Image.open(io.BytesIO(data)).convert("RGB")
    inner = (int(x) + 3, int(y) + CAPTION_PX + 3, int(x + w) - 3, int(y + h) + CAPTION_PX - 3)
    return tuple(ImageStat.Stat(image.crop(inner)).mean)


async def test_a_recording_holds_no_secret(bd_home: Path) -> None:
    with serve_login_site() as site:
        vault.shared().set("site", [site.url], PASSWORD)
        async with running_service() as (service, _api):
            async with http_client(f"{service.url}/mcp", service.api_token) as client:
                await call(client, "browser_navigate", {"url": f"{site.url}/login.html"})
                snap = await call(client, "browser_snapshot")
                user = ref_of(snap, "textbox", "Username")
                await call(client, "browser_type", {"ref": user, "text": "<secret>site</secret>"})
                await call(client, "browser_console_messages")
                await call(
                    client,
                    "browser_navigate",
                    {"url": f"{site.url}/blank.html?pw={quote_plus(PASSWORD)}"},
                )
            deck = Deck(service)
            session = next(s for s in deck.recorded_sessions() if s.via == "mcp")
            await deck.recorder.settled(session.id)
            steps = deck.recorded_session(session.id).steps
            typed = next(s for s in steps if s.kind == "type")
            assert typed.target and typed.after
            shown = deck.recorded_image(session.id, typed.after)
            assert shown
            colour = _colour(shown, typed.target)
            assert all(abs(c - m) < 12 for c, m in zip(colour, MASK, strict=True)), colour
            went = steps[-1]
            assert "pw=<secret>site</secret>" in went.url, went.url
            for fmt in ("trace", "html"):
                await deck.export_session(GUI, admin.ExportSession(session=session.id, format=fmt))
    secret = PASSWORD.encode()
    spelled = quote_plus(PASSWORD).encode()
    # All but the vault itself and the browser's own profile (its cache keeps the URL).
    written = [
        p
        for p in bd_home.rglob("*")
        if p.is_file() and p.name != "vault.json" and "user-data" not in p.parts
    ]
    assert any(p.suffix == ".zip" for p in written) and any(p.suffix == ".html" for p in written)
    leaks = [p for p in written if secret in p.read_bytes() or spelled in p.read_bytes()]
    assert leaks == []
