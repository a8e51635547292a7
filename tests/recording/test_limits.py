"""Recordings stay within the artifact limits, however many calls a session makes."""

from __future__ import annotations

from pathlib import Path

from browserdeck import artifacts
from browserdeck.deck import Deck
from browserdeck.door.call import Caller
from browserdeck.engine import options as o
from browserdeck.recording.store import Store
from browserdeck.session import CLIENT_ENDED
from tests.support.service import running_service

LIMIT_MB = 10


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


async def test_500_recorded_calls_stay_within_artifacts_max_mb(bd_home: Path, site: str) -> None:
    async with running_service() as (service, _):
        await service.update_settings(lambda c: setattr(c, "artifacts_max_mb", LIMIT_MB))
        assert artifacts.LIMITS.max_bytes == LIMIT_MB * 2**20
        deck = Deck(service)
        root = Store().root
        async def start(caller: Caller) -> tuple[str, str]:
            tab = await deck.open_tab(caller, None, f"{site}/noise.html")
            snap = await deck.on_tab(caller, o.SnapshotOptions(), target=tab.target_id)
            return tab.target_id, snap.snapshot.split("[ref=")[-1].split("]")[0]  # "Again"

        # An earlier session, ended: it goes first, whole, when the space runs out.
        early = Caller(client="early-agent", session="early-1")
        target, ref = await start(early)
        await deck.on_tab(early, o.ClickAct(kind="click", ref=ref), target=target)
        await service.sessions.end("early-1", CLIENT_ENDED)  # its recording ends with it
        first = next(s for s in deck.recorded_sessions() if s.key == "early-1")
        await deck.recorder.settled(first.id)
        assert first.ended and (root / first.id / "00003-after.jpg").is_file()

        agent = Caller(client="busy-agent", session="busy-1")
        target, ref = await start(agent)
        for n in range(3, 501):
            if n % 5 == 0:  # a click: two images of random pixels
                await deck.on_tab(agent, o.ClickAct(kind="click", ref=ref), target=target)
            else:
                await deck.on_tab(agent, o.ConsoleOptions(), target=target)
        busy = next(s for s in deck.recorded_sessions() if s.key == "busy-1")
        await deck.recorder.settled(busy.id)
        assert busy.calls == 500
        assert _size(root) <= LIMIT_MB * 2**20, _size(root)
        # The ended session went first, whole; the running one lost its oldest images
        # only, and its steps say so.
        assert not (root / first.id).exists()
        steps = deck.recorded_session(busy.id).steps
        assert len(steps) == 500
        clicks = [s for s in steps if s.kind == "click"]
        assert clicks[-1].before and clicks[-1].after
        assert deck.recorded_image(busy.id, clicks[-1].after)
        assert not clicks[0].before and "artifactsMaxMb" in clicks[0].shot_note
        # What was written (rows of 500 steps) is still read back after a restart.
        reread = Store().steps(busy.id)
        assert [s.n for s in reread] == list(range(1, 501))
