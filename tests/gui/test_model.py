"""The pure parts of the GUI model: activity rows (no Qt event loop needed)."""

from __future__ import annotations

from typing import Any

from browserdeck.events import ActivityEntry, CallError, CallNotes
from browserdeck.gui.model import describe_call, short_id


def entry(**fields: Any) -> ActivityEntry:
    fields.setdefault("time", 1.0)
    fields.setdefault("client", "curl/8.5.0")
    fields.setdefault("ms", 1.0)
    return ActivityEntry(**fields)


def test_describe_call_says_kind_ref_element_and_tab() -> None:
    row = describe_call(
        entry(
            time=1.0,
            client="claude-code via MCP",
            call="act",
            profile="work",
            status=200,
            ms=12.3,
            detail=CallNotes(
                kind="type",
                ref="e12",
                element='textbox "Password"',
                typed_chars=8,
                profile="work",
                target_id="ABCDEF0123456789",
            ),
        )
    )
    assert (row.client, row.action, row.result, row.ok) == (
        "claude-code via MCP",
        "type",
        "OK",
        True,
    )
    assert row.target == "e12 · textbox “Password” · typed 8 characters"
    assert (row.profile, row.target_id) == ("work", "ABCDEF0123456789")


def test_describe_call_failure_has_message_and_hint() -> None:
    row = describe_call(
        entry(
            call="close-tab",
            status=404,
            detail=CallNotes(target_id="0123456789ABCDEF0123"),
            error=CallError(code="tab_not_found", message="no tab 'x'", hint="list tabs"),
        ),
        default_profile="agent",
    )
    assert row.action == "close tab" and row.target_id == "0123456789ABCDEF0123"
    assert row.result == "not found: no tab 'x'" and not row.ok
    assert "What to do: list tabs" in row.details()


def test_one_way_to_shorten_a_tab_id() -> None:
    assert short_id("0123456789ABCDEF") == "01234567…"
    assert short_id("ABC") == "ABC"


def test_describe_call_unknown_call() -> None:
    assert describe_call(entry(call="something-new", status=0)).action == "something-new"


def test_every_call_at_the_front_door_has_words() -> None:
    """Every request the door knows (its ``op``) reads as a verb in the panel; navigate's
    kind says which way."""
    import typing

    from browserdeck.door import admin
    from browserdeck.door.request import Request
    from browserdeck.engine import netoptions as n
    from browserdeck.engine import options as o
    from browserdeck.gui.model import _ACTIONS
    from browserdeck.mcpserver.runcode import RunCode

    back = CallNotes(kind="back", target_id="ABCDEF0123456789")
    went = describe_call(entry(call="navigate", profile="work", status=200, detail=back))
    assert went.action == "go back"
    models = [
        *(m for m in vars(admin).values() if isinstance(m, type) and issubclass(m, Request)),
        *(getattr(o, name) for name in o.__all__ if name.endswith("Options")),
        *typing.get_args(o.AnyAct),
        *n.NETWORK_REQUESTS,
        RunCode,
    ]
    for model in models:
        op = getattr(model, "op", None)
        if op is not None:
            assert op in _ACTIONS, f"{model.__name__}: the panel has no words for {op!r}"
