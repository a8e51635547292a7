"""The live view: the browser's own screencast while someone watches, nothing after."""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path

from browserdeck.deck import Deck
from browserdeck.door.call import Caller
from browserdeck.recording.live import Frame
from tests.support.service import running_service

GUI = Caller(client="browserdeck-gui", via="gui")
AGENT = Caller(client="agent-a", session="live-1")


async def test_frames_come_while_watched_and_stop_with_the_view(bd_home: Path, site: str) -> None:
    async with running_service() as (service, _):
        deck = Deck(service)
        tab = await deck.open_tab(AGENT, None, f"{site}/anim.html")
        frames: list[Frame] = []
        view = await deck.watch_tab(GUI, None, tab.target_id, frames.append, fps=8)
        try:
            await asyncio.sleep(2.5)
            watched = len(frames)
            # An animated page: frames at the capped rate (a loaded machine sends fewer).
            assert watched >= 5, watched
            assert watched <= 8 * 2.5 + 3, watched
            first = frames[-1]
            assert base64.b64decode(first.jpeg)[:2] == b"\xff\xd8" and first.width > 0
        finally:
            await view.stop()
        stopped = len(frames)
        await asyncio.sleep(1.5)
        assert len(frames) == stopped, "frames came after the view was closed"
        # A page that does not change sends (next to) nothing: no polling.
        still = await deck.open_tab(AGENT, None, f"{site}/login.html")
        quiet: list[Frame] = []
        view = await deck.watch_tab(GUI, None, still.target_id, quiet.append)
        try:
            await asyncio.sleep(1.5)
        finally:
            await view.stop()
        assert len(quiet) <= 3, len(quiet)
