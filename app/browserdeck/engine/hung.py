"""A tab whose page does not answer: a runaway script is stopped, a hung renderer is said.

A trivial evaluate (``0``) over the tab's own CDP session is the probe: a healthy page
answers it in about a millisecond. When it does not come back within :data:`PROBE_WAIT`
the page's main thread is busy, and ``Runtime.terminateExecution`` stops the script that
holds it (it ends the running script, or the *next* one when none runs, so it is only
sent after the probe timed out). When the page still does not answer after that while
the browser process does (it keeps the tab's history), no script holds it: its renderer
is hung in the browser's own code (``chrome://hang`` does this on purpose). Nothing can read or act on such a tab, so the tab is marked hung and
every call on it answers 409 ``tab_hung`` at once (after one probe, in case it came
back) instead of running into its deadline; a navigation ends the hung renderer
(``Page.crash``, which its I/O thread still takes) and revives the tab as after a
crash, and closing the tab works as always.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from browserdeck.engine.state import PageState
from browserdeck.errors import CLOSE_TAB, RELOAD, Conflict, Hint
from browserdeck.util import aio

log = logging.getLogger(__name__)

# How long a page may take to answer "0" before its main thread counts as busy.
PROBE_WAIT = 1.0
# How long a hung renderer gets to go once it is told to crash.
END_WAIT = 5.0

UNRESPONSIVE_HINT = Hint(
    "browserdeck stopped the script (Runtime.terminateExecution); retry the call. If the "
    "page starts it again, navigate or reload the tab ({reload}) or close it ({close})",
    reload=RELOAD,
    close=CLOSE_TAB,
)
HUNG_HINT = Hint(
    "navigate or reload it ({reload}): browserdeck ends the hung renderer and loads the page "
    "in a new one (refs from before are gone); or close the tab ({close})",
    reload=RELOAD,
    close=CLOSE_TAB,
)


def tab_hung(what: str) -> Conflict:
    return Conflict(
        f"{what}: the tab is hung: its renderer does not answer, even with its scripts "
        "stopped (chrome://hang does this on purpose), so nothing can read or act on the page",
        hint=HUNG_HINT,
        code="tab_hung",
    )


async def answers(state: PageState) -> bool | None:
    """Whether the page answers the probe in time; None when it cannot be asked (no CDP
    session, the tab closing or navigating: not a busy page)."""
    cdp = state.cdp
    if cdp is None or state.page.is_closed():
        return None
    try:
        await asyncio.wait_for(
            cdp.send("Runtime.evaluate", {"expression": "0", "returnByValue": True}), PROBE_WAIT
        )
    except TimeoutError:
        return False
    except Exception:  # navigating or closing: not a busy page
        return None
    return True


async def free_if_busy(state: PageState) -> bool:
    """If the page's main thread does not answer, stop the script that holds it; if it
    still does not answer, mark the tab hung. True when the page was not answering."""
    if await answers(state) is not False:
        return False
    log.warning(
        "tab %s (%s) is unresponsive: stopping its running script", state.target_id[:8],
        state.cdp_url,
    )
    assert state.cdp is not None
    with contextlib.suppress(Exception):
        await asyncio.wait_for(state.cdp.send("Runtime.terminateExecution"), 2.0)
    if await answers(state) is False and await _browser_answers(state):
        log.warning("tab %s is hung: it does not answer with its scripts stopped",
                    state.target_id[:8])
        state.hung = True
    return True


async def _browser_answers(state: PageState) -> bool:
    # The browser process answers for the tab (its history is kept there): then it is the
    # tab's renderer that is hung, not the whole browser (stopped, or starved).
    assert state.cdp is not None
    try:
        await asyncio.wait_for(state.cdp.send("Page.getNavigationHistory"), PROBE_WAIT)
    except Exception:
        return False
    return True


async def still_hung(state: PageState) -> bool:
    """For a tab marked hung: whether it still is (one probe; a tab that answers again is
    no longer marked)."""
    if not state.hung:
        return False
    if await answers(state) is False:
        return True
    state.hung = False
    return False


async def end_renderer(state: PageState) -> bool:
    """End a hung tab's renderer, so that a navigation can revive the tab as after a crash;
    whether it went."""
    if state.cdp is None:
        return False
    log.warning("tab %s is hung: ending its renderer", state.target_id[:8])
    ask = asyncio.ensure_future(state.cdp.send("Page.crash"))  # never answered: it crashes
    try:
        await asyncio.wait_for(state.crashed.wait(), END_WAIT)
    except TimeoutError:
        return False
    finally:
        await aio.cancel_and_wait(ask)
    state.hung = False
    return True
