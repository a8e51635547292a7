"""The engine calls the approval addon makes on a call's tab (``call.aside``).

Requests like any other (``engine_method`` names the ``Engine`` method that answers
them, engine/approving.py), but no way in offers them: only the addon issues them,
and no addon or activity entry sees them.
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict

from browserdeck.door.request import TabRequest


class CheckAction(TabRequest[dict]):  # type: ignore[type-arg]
    """What the element an action hits is (engine/risk.py's facts), or None."""

    op, engine_method = "approval-check", "approval_facts"

    ref: str | None = None  # None: the focused element (a key pressed on the page)
    key: str | None = None  # the key the action presses (Enter submits a field's form)
    rules: dict[str, Any]


class ActionPicture(TabRequest[dict]):  # type: ignore[type-arg]
    """The page around a box (viewport CSS pixels) as a PNG, for the person asked."""

    op, engine_method = "approval-picture", "approval_picture"

    box: tuple[float, float, float, float]


class CatchScripts(TabRequest[object]):
    """Arm the in-page catch of scripts' risky actions (engine/catch.py) on the tab and the
    tabs of its opener chain (a page script reaches them through ``window.opener``), or on
    every tab of its browser (``everywhere``: run-code drives any of them), and on the tabs
    opened while the script runs (a popup it clicks in); ``ask`` is
    called with the page's report of each caught action and answers whether it may go on.
    The answer is a handle with ``settle(within)`` and ``close()``."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    op, engine_method = "approval-catch", "approval_catch"

    rules: dict[str, Any]
    ask: Any
    everywhere: bool = False
