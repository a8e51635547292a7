"""What the approval addon says: the action in words, what was decided, and the refusal
an agent gets (what was refused, why it counted as risky, what it can do next)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from browserdeck.door.approval import rules
from browserdeck.errors import Forbidden

if TYPE_CHECKING:
    from browserdeck.config import Config
    from browserdeck.door.approval.asking import Decision, Question
    from browserdeck.door.call import Element

UNTOUCHED = "Nothing was done on the page."


class Refused(Forbidden):
    """A risky action the person did not allow (or could not be asked about)."""


def described(element: Element) -> str:
    """The element in a question or refusal: its role and its name, quoted (rules.quoted)."""
    return f"{element.role} {rules.quoted(element.name)}" if element.name else element.role


def said_action(kind: str, request: Any, element: Element | None, facts: rules.Facts | None) -> str:
    """The action in words: 'click button "Pay $49.00"'."""
    target = (
        described(element) if element is not None else (facts.describe() if facts else "the page")
    )
    if kind == "click":
        return f"{'double-click' if getattr(request, 'double_click', False) else 'click'} {target}"
    if kind == "press":
        key = getattr(request, "key", "")
        where = "on" if facts is not None and facts.activates else "in"
        return (
            f"press {key} {where} {target}"
            if getattr(request, "ref", None) or facts
            else f"press {key}"
        )
    if kind == "type":
        return f"type into {target}" + (
            " and press Enter" if getattr(request, "submit", False) else ""
        )
    if kind == "select":
        values = ", ".join(f'"{v}"' for v in list(getattr(request, "values", []))[:3])
        return f"select {values} in {target}"
    if kind == "fill":
        n = len(getattr(request, "fields", []) or [])
        return f"fill {n} field{'s' if n != 1 else ''}"
    if kind == "drag":
        return f"drag {getattr(request, 'start_ref', '')} onto {getattr(request, 'end_ref', '')}"
    return kind


def said_decision(decision: Decision) -> str:
    if decision.answer == "once":
        return f"allowed once by {decision.by}" if decision.asked else f"allowed: {decision.by}"
    if decision.answer == "site":
        return f"allowed on this site for this agent by {decision.by}"
    return f"denied by {decision.by}" if decision.by.startswith("you") else f"denied: {decision.by}"


def refusal(
    question: Question,
    decision: Decision,
    settings: Config,
    *,
    untouched: str = UNTOUCHED,
) -> Refused:
    """What was refused, why it counted as risky, and what the agent can do."""
    what = question.words()
    if not decision.asked:
        profile = question.profile
        return Refused(
            f"{what} needs the user's approval (approval is "
            f"{rules.mode_of(settings, profile, None)!r} for profile {profile!r}, set by "
            f"{rules.where_set(settings, profile)}; asked because {question.why}), and nobody "
            "can be asked: no browserdeck tray app is running, and this client cannot ask its "
            f"user (MCP elicitation). {untouched}",
            hint="tell the user: they can start the browserdeck tray app to be asked, or set "
            f'"approval" to "off" for profile {profile!r} (Settings, Profiles); or leave '
            "this action and do something else",
            code="approval_unavailable",
        )
    if decision.by.startswith("no answer"):
        return Refused(
            f"{what} was not allowed: the user did not answer within "
            f"{question.timeout:g} s (asked because {question.why}). {untouched}",
            hint="ask the user in the chat whether to do it, then try again (they will be "
            "asked again), or leave it",
            code="approval_timeout",
        )
    return Refused(
        f"the user denied {what} (asked because {question.why}). {untouched}",
        hint="do not try it another way; ask the user in the chat whether and how to go on, "
        "or leave it and do something else",
        code="denied_by_user",
    )
