"""Secrets the model never sees: an agent logs in with placeholders (issue 36).

A real service and Chromium, the official MCP SDK client at /mcp: the agent types the
username, ``<secret>site</secret>`` and ``<totp>site</totp>`` into a login page on a
local server and signs in. The password and the one-time code then appear in no MCP
answer (the page even logs what is typed to its console), in no activity entry, in no
snapshot (the code's textbox reads as bullets), in no log file, and the screenshot shows
the code's input covered; a script of the agent's may not read the page back, nor a PDF
print it. The same placeholder on another origin of the same site is refused, naming
that origin.
"""

from __future__ import annotations

import base64
import io
import re
from typing import Any
from urllib.parse import quote_plus

from PIL import Image

from browserdeck.events import ActivityEntry
from browserdeck.secrets import vault
from browserdeck.secrets.redact import MASK
from browserdeck.util import paths
from tests.mcp.harness import http_client, ref_of
from tests.support.loginsite import CODE_BOX, PASSWORD, SEED, USER, current_codes, serve_login_site
from tests.support.service import running_service


def _leaks(text: str) -> list[str]:
    """The secret values ``text`` holds (the password, a code valid around now)."""
    return [v for v in (PASSWORD, *current_codes()) if v in text]


async def test_an_agent_logs_in_with_placeholders_and_never_sees_the_values() -> None:
    entries: list[ActivityEntry] = []
    said: list[str] = []  # every text an MCP answer carried
    images: list[bytes] = []
    with serve_login_site() as site:
        vault.shared().set("site", [site.url], PASSWORD, totp_seed=SEED)
        async with running_service() as (service, _api):
            service.events.api_call.connect(lambda *, entry, **_: entries.append(entry))
            async with http_client(f"{service.url}/mcp?tools=all", service.api_token) as client:

                async def tool(name: str, args: dict[str, Any] | None = None, *, ok: bool = True) -> str:
                    result = await client.call_tool(name, args or {})
                    text = "\n".join(c.text for c in result.content if c.type == "text")
                    images.extend(
                        base64.b64decode(c.data) for c in result.content if c.type == "image"
                    )
                    said.append(text)
                    assert result.is_error != ok, f"{name}: {text}"
                    return text

                listed = await tool("browser_secrets")
                assert "<secret>site</secret>" in listed and site.url in listed
                await tool("browser_resize", {"width": 800, "height": 600})
                await tool("browser_navigate", {"url": f"{site.url}/login.html"})
                snap = await tool("browser_snapshot")
                user = ref_of(snap, "textbox", "Username")
                password = ref_of(snap, "textbox", "Password")
                code = ref_of(snap, "textbox", "One-time code")
                await tool("browser_type", {"ref": user, "text": USER})
                await tool("browser_type", {"ref": password, "text": "<secret>site</secret>"})
                await tool("browser_type", {"ref": code, "text": "<totp>site</totp>"})

                typed = await tool("browser_snapshot")
                line = re.search(rf'textbox "One-time code"[^\n]*\[ref={code}\]: (.*)', typed)
                assert line and line[1] == MASK, typed
                assert USER in typed  # only secrets are masked
                console = await tool("browser_console_messages")
                # The page logged what was typed; the agent reads placeholders.
                assert "typed password: <secret>site</secret>" in console, console
                assert "typed code: <totp>site</totp>" in console, console
                refused = await tool(
                    "browser_evaluate", {"function": "() => btoa(pw.value)"}, ok=False
                )
                assert "secret was typed" in refused, refused
                # A PDF prints the code's input as text, out of redaction's reach: refused.
                printed = await tool("browser_pdf_save", ok=False)
                assert "PDF is refused on this page: a secret was typed" in printed, printed

                await tool("browser_take_screenshot")
                _assert_covered(images[-1], CODE_BOX, viewport_width=800)

                done = await tool("browser_click", {"ref": ref_of(typed, "button", "Sign in"),
                                                    "snapshot": True})
                assert f"Welcome {USER}" in done, done
                assert site.sessions, "the site saw no good login"

                # A page whose address holds the value (a form sent with GET does that):
                # the navigation's answer and the tab list say the placeholder.
                moved = await tool(
                    "browser_navigate", {"url": f"{site.url}/blank.html?pw={quote_plus(PASSWORD)}"}
                )
                assert "pw=<secret>site</secret>" in moved, moved
                tabs = await tool("browser_tabs", {"action": "list"})
                assert "pw=<secret>site</secret>" in tabs, tabs

                # The same placeholder on another origin of the same site: refused.
                await tool("browser_navigate", {"url": f"{site.other}/login.html"})
                other = await tool("browser_snapshot")
                refusal = await tool(
                    "browser_type",
                    {"ref": ref_of(other, "textbox", "Password"), "text": "<secret>site</secret>"},
                    ok=False,
                )
                assert site.other in refusal and site.url in refusal, refusal
                after = await tool("browser_snapshot")
                assert 'textbox "Password"' in after and "••••" not in after, after
    for text in said:
        assert not _leaks(text), text
    assert entries, "no activity was recorded"
    for entry in entries:
        assert not _leaks(str(entry)), entry
    for log in paths.log_dir().rglob("*"):
        if log.is_file():
            assert not _leaks(log.read_text(errors="replace")), log


def _assert_covered(png: bytes, box: tuple[int, int, int, int], *, viewport_width: int) -> None:
    """Every pixel inside ``box`` (CSS pixels) is the mask's black: no digit shows."""
    image = Image.open(io.BytesIO(png)).convert("RGB")
    scale = image.width / viewport_width
    x, y, w, h = (round(v * scale) for v in box)
    region = image.crop((x + 2, y + 2, x + w - 2, y + h - 2))
    colours = {c for _, c in region.getcolors(maxcolors=1 << 20) or []}
    assert colours == {(0, 0, 0)}, f"the code's input shows through: {sorted(colours)[:8]}"
