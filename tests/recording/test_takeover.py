"""The user takes a browser over: an agent's call waits, resumes after the hand-back and
says that the user acted; with no wait it is refused, saying so and what to do."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from browserdeck.deck import Deck
from browserdeck.door.call import Caller
from browserdeck.errors import Forbidden
from browserdeck.master import build_service
from tests.mcp.harness import call, call_error, http_client, mcp_config, ref_of, text

GUI = Caller(client="browserdeck-gui", via="gui")


async def test_an_agent_call_waits_for_the_hand_back_and_its_answer_says_the_user_acted(
    bd_home: Path, site: str
) -> None:
    mcp_config(bd_home)
    service = build_service(force_headless=True)
    await service.start()
    deck = Deck(service)
    try:
        async with http_client(f"{service.url}/mcp", service.api_token) as client:
            await call(client, "browser_navigate", {"url": f"{site}/login.html"})
            sign_in = ref_of(await call(client, "browser_snapshot"), "button", "Sign in")
            state = await deck.take_over(GUI, None)
            assert state.taken and state.profile == "agent"
            # Headless here: no window of its own, and the answer says what to use.
            assert not state.window and state.why and "live view" in state.why
            held = asyncio.ensure_future(client.call_tool("browser_click", {"ref": sign_in}))
            await asyncio.sleep(1.0)
            assert not held.done(), "the agent's click ran while the user had the browser"
            # The user's own calls are never held.
            shot = await deck.screenshot(GUI, None, None, labels=False)
            assert shot.png
            # An agent cannot end the person's take-over.
            agent = Caller(client="shopping-agent", via="api")
            with pytest.raises(Forbidden, match="only they hand it back"):
                await deck.hand_back(agent, None)
            assert deck.taken_over("agent") is not None and not held.done()
            back = await deck.hand_back(GUI, None)
            assert not back.taken
            result = await asyncio.wait_for(held, 30)
            answer = text(result)
            assert not result.is_error, answer
            assert "clicked" in answer and "the user took this browser over" in answer, answer
            assert "refs from before may be stale" in answer
            # Said once: the next answer is plain.
            assert "took this browser over" not in await call(client, "browser_snapshot")

            # With no wait, a call while taken over is refused at once, saying why.
            service.config.take_over_wait_seconds = 0
            await deck.take_over(GUI, None)
            refused = await call_error(client, "browser_snapshot")
            assert "the user has taken over this browser" in refused
            assert "try again later" in refused and "browser_snapshot" in refused
            # Reads that touch no page still answer.
            await call(client, "browser_tabs", {"action": "list"})
            await deck.hand_back(GUI, None)
            assert "took this browser over" in await call(client, "browser_snapshot")
    finally:
        await service.stop()
