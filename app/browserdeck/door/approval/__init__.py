"""Approval of risky actions: the agent asks before it pays, deletes, sends or uploads.

``rules``: what counts as risky and the per-profile policy; ``asking``: the question,
the channels that may put it to the person (the tray, the agent's MCP client) and the
wait; ``addon``: the front door's addon that judges each call; ``said``: the action, the
decision and the refusal in words; ``requests``: the engine calls it makes (facts about an element, a picture, the in-page catch of scripts).
docs/approval.md says what it covers and what not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

    from browserdeck.door.approval.asking import Approvals


def hub_of(addons: Iterable[object]) -> Approvals | None:
    """The approvals of a service's front door (its approval addon's), if it has one."""
    from browserdeck.door.approval.addon import Approval

    for addon in addons:
        if isinstance(addon, Approval):
            return addon.hub
    return None
