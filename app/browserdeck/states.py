"""One vocabulary of profile states, for every front-end (tray, panel, CLI, API).

The service keeps what it knows about a profile (its driver, whether its browser
answers, whether the extension is connected, the last crash or error); this
module turns that into one state word and one short line a person reads. The
tray menu, the panel and ``browserdeck status`` all show ``label()``, and the
control API's ``GET /`` returns the same word as ``state`` and the same line as
``stateText``, so no two places can disagree ("waiting for Chrome" beside
"unreachable").

Pure Python: the GUI adapts it, it never imports Qt.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from browserdeck.driverspecs import spec_or_default

if TYPE_CHECKING:
    from browserdeck.results import ProfileStatus


class State(StrEnum):
    """What a profile is doing, in the words every front-end uses."""

    STOPPED = "stopped"  # nothing runs (or the user closed the browser: a clean exit)
    STARTING = "starting"  # a browser is being launched or a relay opened
    RUNNING = "running"  # the browser answers (managed, remote, or Chrome connected)
    WAITING = "waiting"  # extension profile: the relay listens, Chrome is not connected
    UNREACHABLE = "unreachable"  # it should be running but its endpoint does not answer
    CRASHED = "crashed"  # the browser died: a signal, a non-zero exit, a renderer crash
    ERROR = "error"  # it could not start (port busy, no browser, attach failed)
    DISABLED = "disabled"  # browser control is off in settings


# The states in which the profile holds something (a browser, a relay) that Stop ends.
ACTIVE = frozenset({State.STARTING, State.RUNNING, State.WAITING, State.UNREACHABLE})
# The states a person should notice (red mark).
TROUBLE = frozenset({State.CRASHED, State.ERROR, State.UNREACHABLE})


@dataclass(frozen=True)
class Verbs:
    start: str
    stop: str




def classify(
    *,
    driver: str,
    state: str,
    enabled: bool = True,
    answers: bool = False,
    extension_connected: bool = False,
) -> State:
    """The state word from what the service knows.

    ``state`` is the profile's own lifecycle (stopped, starting, running, crashed,
    error); ``answers`` whether its CDP endpoint answered just now.
    """
    if not enabled:
        return State.DISABLED
    if state in (State.CRASHED, State.ERROR, State.STARTING):
        # (An extension or remote profile that answers again is set back to running by
        # the service before it asks.)
        return State(state)
    if spec_or_default(driver).via_extension:
        if extension_connected:
            return State.RUNNING
        return State.WAITING if state == State.RUNNING else State.STOPPED
    if answers:
        return State.RUNNING
    if state == State.RUNNING:
        return State.UNREACHABLE
    return State.STOPPED


def word(state: str) -> State:
    """The state word of a status's ``state`` (an unknown word reads as stopped)."""
    try:
        return State(state)
    except ValueError:
        return State.STOPPED


def of(status: ProfileStatus) -> State:
    """The state word of a profile's status (already classified by the service)."""
    return word(status.state)


def describe(state: str, driver: str, tabs: int, remote: Mapping[str, Any] | None) -> str:
    """One short line: 'running · 3 tabs', 'waiting for Chrome', 'crashed'.

    From the status's parts, for the service that builds the status (``stateText``);
    front-ends holding a status call ``label``."""
    known = word(state)
    tabs_text = f"{tabs} tab{'s' if tabs != 1 else ''}"
    if remote and known in (State.RUNNING, State.STOPPED):
        return " · ".join(remote_lines(remote)[:2])
    if known == State.RUNNING:
        if spec_or_default(driver).via_extension:
            return f"Chrome connected · {tabs_text}"
        return f"running · {tabs_text}"
    return {
        State.STOPPED: "stopped",
        State.STARTING: "starting…",
        State.WAITING: "waiting for Chrome",
        State.UNREACHABLE: "not answering",
        State.CRASHED: "crashed",
        State.ERROR: "could not start",
        State.DISABLED: "disabled in settings",
    }[known]


def label(status: ProfileStatus) -> str:
    """One short line: 'running · 3 tabs', 'waiting for Chrome', 'crashed'."""
    return describe(status.state, status.driver, status.tabs, status.remote)


def remote_lines(remote: Mapping[str, Any]) -> list[str]:
    """A browser-service profile's own status (``ProfileStatus.remote``, remote.py):
    browsers held, the service's load, then who holds which browser, one line each."""
    sessions = list(remote.get("sessions") or [])
    n = len(sessions)
    held = f"{n} browser{'s' if n != 1 else ''} held" if n else "no browser held"
    lines = [("pool · " if remote.get("pool") else "") + held]
    health = remote.get("health") or {}
    if health.get("service") == "browserless":
        lines.append(
            f"service {health.get('running')}/{health.get('maxConcurrent')} busy, "
            f"{health.get('queued')} waiting"
        )
    elif health.get("ok") is False:
        lines.append(f"service: {health.get('error')}")
    else:
        lines.append("service answers")
    for s in sessions:
        tabs = int(s.get("tabs", 0))
        lines.append(
            f"{s.get('label')}: {tabs} tab{'s' if tabs != 1 else ''}, "
            f"idle {int(s.get('idleSeconds', 0))} s"
        )
    return lines


def is_active(status: ProfileStatus) -> bool:
    """Whether Stop (not Start) is the profile's action."""
    return of(status) in ACTIVE


def verbs_of(driver: str) -> Verbs:
    """The Start/Stop words of a driver (the default driver's for one not known)."""
    return Verbs(*spec_or_default(driver).verbs)


def toggle_text(status: ProfileStatus) -> str:
    """The Start/Stop button's text for this profile's driver and state."""
    verbs = verbs_of(status.driver)
    return verbs.stop if is_active(status) else verbs.start


def mark(status: ProfileStatus) -> str:
    """The icon mark (running, starting, extension, stopped, error) of one profile."""
    state = of(status)
    if state in TROUBLE:
        return "error"
    if state == State.RUNNING:
        return "extension" if spec_or_default(status.driver).via_extension else "running"
    if state == State.STARTING:
        return "starting"
    return "stopped"


def overall(statuses: Mapping[str, ProfileStatus], default_profile: str, failed: bool) -> str:
    """The tray's one mark: the default profile's own state first, so another profile's
    trouble never hides that the default one runs fine (``trouble_elsewhere`` marks that
    apart). browserdeck itself not starting is an error; with the default profile idle:
    extension connected > starting > running elsewhere > stopped."""
    if failed:
        return "error"
    marks = {name: mark(s) for name, s in statuses.items()}
    own = marks.get(default_profile)
    if own in ("error", "running", "starting", "extension"):
        return own
    for wanted in ("extension", "starting", "running"):
        if wanted in marks.values():
            return wanted
    return "stopped"


def trouble_elsewhere(statuses: Mapping[str, ProfileStatus], default_profile: str) -> bool:
    """A profile other than the default one crashed or could not start (a dot of its own
    on the tray icon, beside the default profile's mark)."""
    return any(mark(s) == "error" for name, s in statuses.items() if name != default_profile)
