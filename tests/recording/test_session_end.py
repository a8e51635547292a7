"""A recording ends with its agent session, the take-over forgets it and refuses its
call that waited for the hand-back: the sessions registry's end (sessions.py) is
the one way a session ends, also for a registry made anew when the service restarts."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from browserdeck.deck import Deck
from browserdeck.door.call import Caller
from browserdeck.engine import options as o
from browserdeck.session import STOPPED_BY_USER, SessionEndedError
from tests.support.service import running_service

GUI = Caller(client="browserdeck-gui", via="gui")


async def test_a_recording_ends_with_its_session_also_after_the_service_restarted(
    bd_home: Path, site: str
) -> None:
    async with running_service() as (service, _):
        deck = Deck(service)
        first = service.sessions
        # A recorded call before the restart: the recorder hooks the registry of then.
        await deck.open_tab(Caller(client="bot", session="run-8"), None, f"{site}/noise.html")
        await service.stop()
        await service.start()
        assert service.sessions is not first  # no session carries over a restart
        agent = Caller(client="bot", session="run-9")
        await deck.open_tab(agent, None, f"{site}/noise.html")
        running = next(s for s in deck.recorded_sessions() if s.key == "run-9")
        assert running.ended is None
        # The take-over keeps when each session last used a profile (for its note after a
        # hand-back); an ended session's entry goes with it.
        assert ("agent", "run-9") in deck.takeovers._seen
        await service.sessions.end_all(STOPPED_BY_USER)
        ended = next(s for s in deck.recorded_sessions() if s.key == "run-9")
        assert ended.ended is not None
        assert ("agent", "run-9") not in deck.takeovers._seen


async def test_a_call_waiting_for_the_hand_back_is_refused_as_its_session_ends(
    bd_home: Path, site: str
) -> None:
    async with running_service() as (service, _):
        deck = Deck(service)
        agent = Caller(client="bot", session="run-5")
        tab = await deck.open_tab(agent, None, f"{site}/noise.html")
        await deck.take_over(GUI, None)
        held = asyncio.ensure_future(
            deck.on_tab(agent, o.SnapshotOptions(), target=tab.target_id)
        )
        await asyncio.sleep(0.5)
        assert not held.done(), "the agent's call ran while the user had the browser"
        await service.sessions.end_all(STOPPED_BY_USER)
        # At once, not after takeOverWaitSeconds (30 s), and saying why.
        with pytest.raises(SessionEndedError) as refused:
            await asyncio.wait_for(held, 5)
        assert "stopped by you" in refused.value.message
        assert "waited for the user to hand the browser back" in refused.value.message
        await deck.hand_back(GUI, None)
