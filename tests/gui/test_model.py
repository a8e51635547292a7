"""The pure parts of the GUI model: activity rows and the tray state (no Qt event loop needed)."""

from __future__ import annotations

from browserdeck.gui.model import describe_call


def test_describe_call_names_the_action_and_target() -> None:
    row = describe_call(
        {
            "time": 1.0,
            "client": "claude",
            "method": "POST",
            "path": "/act",
            "query": "profile=work&targetId=ABCDEF",
            "status": 200,
            "ms": 12.3,
        }
    )
    assert (row.client, row.action, row.target, row.result, row.ok) == (
        "claude",
        "act",
        "work · ABCDEF",
        "200 OK",
        True,
    )


def test_describe_call_close_tab_and_failure() -> None:
    row = describe_call(
        {"method": "DELETE", "path": "/tabs/0123456789ABCDEF0123", "query": "", "status": 404},
        default_profile="agent",
    )
    assert row.action == "close tab"
    assert row.target == "agent · 01234567…"
    assert row.result == "404 not found" and not row.ok


def test_describe_call_unknown_route() -> None:
    assert describe_call({"method": "PUT", "path": "/x", "status": 0}).action == "PUT /x"
