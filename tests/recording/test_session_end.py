"""A recording ends with its agent session, and the take-over forgets it: the sessions registry's end (sessions.py) is
the one way a session ends, also for a registry made anew when the service restarts."""

from __future__ import annotations

from pathlib import Path

from browserdeck.deck import Deck
from browserdeck.door.call import Caller
from browserdeck.session import STOPPED_BY_USER
from tests.support.service import running_service


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
