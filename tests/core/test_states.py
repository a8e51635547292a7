"""One vocabulary of profile states (browserdeck.states): the words every front-end shows."""

from __future__ import annotations

from typing import Any

from browserdeck import states
from browserdeck.results import ProfileStatus
from browserdeck.states import State, classify


def status(**kw: Any) -> ProfileStatus:
    """The typed status front-ends hold (results.ProfileStatus), as the service builds it."""
    driver = kw.get("driver", "managed")
    state = classify(
        driver=driver,
        state=kw.get("state", "stopped"),
        enabled=kw.get("enabled", True),
        answers=kw.get("answers", False),
        extension_connected=kw.get("extensionConnected", False),
    )
    return ProfileStatus(
        profile="p",
        driver=driver,
        state=str(state),
        running=state == State.RUNNING,
        tabs=kw.get("tabs", 0),
        extension_connected=kw.get("extensionConnected"),
    )


def test_extension_relay_without_chrome_is_waiting_everywhere() -> None:
    # The relay listens, no Chrome: one word ("waiting"), one line, and Stop is the action
    # (the relay runs) — not "relay listening" beside "Start relay" beside "unreachable".
    s = status(driver="extension", state="running")
    assert s.state == "waiting"
    assert states.label(s) == "waiting for Chrome"
    assert states.toggle_text(s) == "Stop relay"
    assert states.mark(s) == "stopped"


def test_extension_connected_is_running() -> None:
    s = status(driver="extension", state="running", answers=True, extensionConnected=True, tabs=2)
    assert s.state == "running" and states.label(s) == "Chrome connected · 2 tabs"
    assert states.mark(s) == "extension"


def test_managed_states() -> None:
    assert states.label(status(state="running", answers=True, tabs=1)) == "running · 1 tab"
    assert status(state="running").state == "unreachable"
    crashed = status(state="crashed")
    assert crashed.state == "crashed" and states.toggle_text(crashed) == "Start browser"
    assert states.mark(crashed) == "error"
    error = status(state="error")
    assert states.label(error) == "could not start" and not states.is_active(error)
    assert status(state="starting").state == "starting"
    assert states.label(status(enabled=False)) == "disabled in settings"
    assert states.toggle_text(status(driver="remote", state="running", answers=True)) == (
        "Disconnect"
    )


def test_overall_mark_priorities() -> None:
    running = status(state="running", answers=True)
    ext = status(driver="extension", state="running", answers=True, extensionConnected=True)
    assert states.overall({}, "agent", False) == "stopped"
    assert states.overall({"agent": running}, "agent", False) == "running"
    # The default profile's own state comes first; the extension's shows when it is idle.
    assert states.overall({"agent": running, "chrome": ext}, "agent", False) == "running"
    assert states.overall({"agent": status(), "chrome": ext}, "agent", False) == "extension"
    crashed = status(state="crashed")
    assert states.overall({"agent": crashed, "chrome": ext}, "agent", False) == "error"
    assert states.overall({"agent": running}, "agent", True) == "error"


def test_another_profiles_trouble_does_not_hide_that_the_default_runs() -> None:
    running = status(state="running", answers=True)
    broken = status(driver="extension", state="error")
    statuses = {"agent": running, "chrome": broken}
    assert states.overall(statuses, "agent", False) == "running"  # it was a red "!"
    assert states.trouble_elsewhere(statuses, "agent")  # a dot of its own instead
    assert not states.trouble_elsewhere({"agent": status(state="crashed")}, "agent")


def test_unknown_word_reads_as_stopped() -> None:
    assert states.of(status().model_copy(update={"state": "bogus"})) is State.STOPPED
