"""An MCP session leaves a timeline a person can read, and exports it without secrets.

One agent session through the official MCP SDK client: it navigates, reads, types a user
name and a password, signs in (the page answers 400 ms later with a fetch), and tries a
ref that is not there. Its recording has a step per call; the click's images before and
after differ where the banner came and nowhere else; the click knows the console error
and the failed request it caused, and the snapshot lines it changed. The session is
exported three ways: the trace zip holds the actions and Playwright's own trace viewer
lists them; the HTML report renders every step in Chromium with its images; the video is
a WebM. The typed password is in none of the files the service wrote.
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

from PIL import Image, ImageChops, ImageStat

from browserdeck.deck import Deck
from browserdeck.door import admin
from browserdeck.door.call import Caller
from browserdeck.master import build_service
from browserdeck.recording.shots import CAPTION_PX, MASK
from tests.mcp.harness import call, call_error, http_client, mcp_config, ref_of
from tests.recording.viewers import render_report, trace_viewer_actions, video_size

PASSWORD = "hunter2-Sekr1t-pw"
USER = "alice-agent"
GUI = Caller(client="browserdeck-gui", via="gui")


def _region(data: bytes, box: tuple[float, float, float, float]) -> Image.Image:
    x, y, w, h = box
    image = Image.open(io.BytesIO(data)).convert("L")
    return image.crop((int(x), int(y) + CAPTION_PX, int(x + w), int(y + h) + CAPTION_PX))


def _colour(data: bytes, box: list[float]) -> tuple[float, ...]:
    """The mean colour of ``box`` (CSS pixels of the page) in a recorded image."""
    x, y, w, h = box
    image = Image.open(io.BytesIO(data)).convert("RGB")
    inner = (int(x) + 3, int(y) + CAPTION_PX + 3, int(x + w) - 3, int(y + h) + CAPTION_PX - 3)
    return tuple(ImageStat.Stat(image.crop(inner)).mean)


def _changed(before: bytes, after: bytes, box: tuple[float, float, float, float]) -> float:
    """Mean difference (0-255) of the two images in ``box`` (CSS pixels of the page)."""
    diff = ImageChops.difference(_region(before, box), _region(after, box))
    return float(ImageStat.Stat(diff).mean[0])


async def _agent_session(service: Any, site: str) -> dict[str, Any]:
    """The agent's ~10 calls; what the test needs to know of the page. Its tools are
    `all` (browser_session_export is not in the core set)."""
    async with http_client(f"{service.url}/mcp?tools=all", service.api_token) as client:
        await call(client, "browser_navigate", {"url": f"{site}/login.html"})
        snap = await call(client, "browser_snapshot")
        user, pw = ref_of(snap, "textbox", "User"), ref_of(snap, "textbox", "Password")
        sign_in = ref_of(snap, "button", "Sign in")
        await call(client, "browser_type", {"ref": user, "text": USER})
        await call(client, "browser_type", {"ref": pw, "text": PASSWORD})
        banner = json.loads(
            (await call(client, "browser_evaluate", {
                "function": "() => JSON.stringify((({x, y, width, height}) => [x, y, width, "
                "height])(document.getElementById('banner').getBoundingClientRect()))",
            })).split("\n")[0].split(": ", 1)[-1].strip('"').replace('\\"', '"')
        )
        clicked = await call(client, "browser_click", {"ref": sign_in, "snapshot": True})
        assert "Welcome back" in clicked
        stale = await call_error(client, "browser_click", {"ref": "e977"})
        await call(client, "browser_press_key", {"key": "Tab"})
        await call(client, "browser_console_messages", {})
        await call(client, "browser_tabs", {"action": "list"})
        # The agent writes its own recording out, for its user.
        wrote = await call(client, "browser_session_export", {"format": "trace"})
    return {"banner": banner, "stale": stale, "wrote": wrote}


async def test_an_mcp_session_leaves_a_timeline_and_exports_it_without_secrets(
    bd_home: Path, site: str, tmp_path: Path
) -> None:
    mcp_config(bd_home)
    service = build_service(force_headless=True)
    await service.start()
    try:
        seen = await _agent_session(service, site)
        deck = Deck(service)
        sessions = [s for s in deck.recorded_sessions() if s.via == "mcp"]
        assert len(sessions) == 1, sessions
        session = sessions[0]
        await deck.recorder.settled(session.id)
        timeline = deck.recorded_session(session.id)
        steps = timeline.steps
        # Its agent session ended with the MCP client: so did its recording.
        assert timeline.session.ended is not None
        assert timeline.session.calls == len(steps) >= 10
        assert timeline.session.errors >= 1
        by_title = {s.title: s for s in steps}
        typed = [s for s in steps if s.kind == "type"]
        assert [s.args.get("text") for s in typed] == [
            f"‹{len(USER)} characters typed›", f"‹{len(PASSWORD)} characters typed›"
        ]
        # The password input is painted over in every image (its box: the second type's
        # target), the user name's is not.
        password_box, user_box = typed[1].target, typed[0].target
        assert password_box and user_box
        for name in (typed[1].before, typed[1].after):
            shown = deck.recorded_image(session.id, name)
            assert shown
            assert all(abs(c - m) < 12 for c, m in zip(_colour(shown, password_box), MASK, strict=True)), name
            assert min(_colour(shown, user_box)) > 150  # a white field
        click = next(s for s in steps if s.kind == "click" and s.ok)
        assert click.title.startswith("click e") and "Sign in" in click.title, by_title
        assert click.before and click.after and click.target
        before = deck.recorded_image(session.id, click.before)
        after = deck.recorded_image(session.id, click.after)
        assert before and after
        # The banner the delayed fetch filled is in the after image, not the before one;
        # the heading above did not change.
        assert _changed(before, after, tuple(seen["banner"])) > 40
        assert _changed(before, after, (40, 20, 300, 60)) < 3
        assert any("audit log unreachable" in c for c in click.console), click.console
        assert any("/missing-audit" in f for f in click.failed), click.failed
        assert "Welcome back" in click.diff
        own = Path(seen["wrote"].split()[1])
        assert seen["wrote"].startswith("wrote /") and own.is_file() and own.suffix == ".zip"
        assert steps[-1].op == "export-session"
        failed = [s for s in steps if not s.ok]
        assert failed and failed[0].error and "e977" in failed[0].error["message"]
        assert "e977" in seen["stale"]

        exported: dict[str, Path] = {}
        for fmt in ("trace", "html", "video"):
            done = await deck.export_session(GUI, admin.ExportSession(session=session.id, format=fmt))
            path = Path(done.path)
            assert path.is_absolute() and path.is_file() and path.stat().st_size == done.bytes
            exported[fmt] = path

        # The trace: one before/after pair per step, the actions' titles, the images.
        with zipfile.ZipFile(exported["trace"]) as zf:
            names = zf.namelist()
            events = [json.loads(line) for line in zf.read("trace.trace").splitlines() if line]
        assert events[0]["type"] == "context-options" and events[0]["version"] >= 8
        befores = [e for e in events if e["type"] == "before"]
        afters = {e["callId"]: e for e in events if e["type"] == "after"}
        assert [e["title"] for e in befores] == [s.title or s.op for s in steps]
        assert set(afters) == {e["callId"] for e in befores}
        assert any("error" in afters[f"call@{s.n}"] for s in failed)
        assert f"resources/{click.before}" in names and f"resources/{click.after}" in names
        assert {e["snapshot"]["phase"] for e in events if e["type"] == "frame-snapshot"} == {
            "before", "after"
        }
        # Playwright's trace viewer loads it and lists every action.
        listed = await trace_viewer_actions(exported["trace"], tmp_path / "trace-viewer.png")
        assert listed == [s.title or s.op for s in steps], listed

        # The report renders every step, every image loaded, nothing fetched.
        shown = await render_report(exported["html"], tmp_path / "report.png")
        assert len(shown["steps"]) == len(steps)
        assert shown["images"] == shown["loaded"] >= 2 * len([s for s in steps if s.after])
        assert shown["fetched"] == []

        # The video is a WebM that Chromium decodes, at the recorded images' size.
        assert exported["video"].read_bytes()[:4] == b"\x1a\x45\xdf\xa3"  # EBML
        assert await video_size(exported["video"]) == (1280, 748)

        # The typed password is in no file the service wrote (exports, recordings, logs).
        written = [p for p in bd_home.rglob("*") if p.is_file()]
        assert any(p.suffix == ".jpg" for p in written)
        leaks = [p for p in written if PASSWORD.encode() in p.read_bytes()]
        assert leaks == []
        with zipfile.ZipFile(exported["trace"]) as zf:
            assert not any(PASSWORD.encode() in zf.read(n) for n in zf.namelist())
    finally:
        await service.stop()
