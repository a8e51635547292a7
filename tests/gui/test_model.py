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
            method="POST",
            path="/act",
            query="profile=work",
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
            method="DELETE",
            path="/tabs/0123456789ABCDEF0123",
            status=404,
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


def test_describe_call_unknown_route() -> None:
    assert describe_call(entry(method="PUT", path="/x", status=0)).action == "PUT /x"


def test_a_call_made_in_process_reads_as_its_http_route_does() -> None:
    """MCP tools call the front door in-process: their activity entries name the call
    (``call``), not an HTTP route, and read exactly as the same call over HTTP."""
    from dataclasses import replace

    from browserdeck.deck import CALLS

    back = CallNotes(kind="back", target_id="ABCDEF0123456789")
    http = entry(method="POST", path="/navigate", query="profile=work", status=200, detail=back)
    local = entry(call="navigate", profile="work", status=200, detail=back)
    assert describe_call(local) == describe_call(http)
    assert describe_call(local).action == "go back"
    closed = entry(call="close-tab", status=200, detail=CallNotes(target_id="0123456789ABCDEF"))
    assert replace(describe_call(closed), time=0) == replace(
        describe_call(entry(method="DELETE", path="/tabs/0123456789ABCDEF", status=200)),
        time=0,
    )
    # Every call the front door names (and DeckBackend's own) has words in the panel.
    for name in {*CALLS.values(), "act", "start", "stop", "open-tab", "close-tab"}:
        assert describe_call(entry(call=name, status=200)).action.strip(), name
