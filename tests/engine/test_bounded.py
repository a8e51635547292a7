"""A page call's bound (``Engine._bounded``) never swallows a cancel of the call itself.

After its deadline the bound cancels the work and gives it up to 1 s to end. A cancel of
the caller landing in that second (Stop all agents, the service's stop) must reach the
caller; it used to be suppressed with the work's own end, and the caller then answered
a deadline error instead of being cancelled.

The work here is a stand-in coroutine, not a Playwright call: a real call ends at once
when cancelled, so the second in which the cancel must not be lost cannot be held open
with one. The engine is not started; the bound needs only the tab's crash flag (and no
CDP session, so the unresponsive-page probe is skipped).
"""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from browserdeck.engine.engine import Engine
from browserdeck.errors import BrowserdeckError


def _tab() -> Any:
    return SimpleNamespace(
        crashed=asyncio.Event(), hung=False, cdp_url="http://127.0.0.1:1", cdp=None
    )


async def test_a_cancel_during_the_cleanup_after_the_deadline_reaches_the_caller() -> None:
    cleaning = asyncio.Event()

    async def slow_to_end() -> None:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cleaning.set()
            await asyncio.sleep(0.5)  # takes its time to end once cancelled
            raise

    caller = asyncio.ensure_future(Engine()._bounded(_tab(), "stand-in", 0.05, slow_to_end()))
    await asyncio.wait_for(cleaning.wait(), 5)
    caller.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(caller, 5)


async def test_the_deadline_still_answers_when_nobody_cancels_the_caller() -> None:
    async def slow_to_end() -> None:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            await asyncio.sleep(0.1)
            raise

    with pytest.raises(BrowserdeckError) as caught:
        await asyncio.wait_for(Engine()._bounded(_tab(), "stand-in", 0.05, slow_to_end()), 5)
    assert "stand-in" in str(caught.value)
