"""What an agent's browser windows do on the user's screen (X11).

**They never take the user's keyboard nor come up over their work.** Chrome on Linux
activates a browser window on every mouse press or touch start its page gets, including
the ones CDP injects (``ContentsWebView::DidGetUserInteraction`` calls ``RequestFocus()``
when the contents view is not focused, and views activates the window: Chrome sends the
window manager a ``_NET_ACTIVE_WINDOW`` request). So each agent click raised the agent's
browser over whatever the user was doing and took their keyboard. Playwright asks for
nothing of the kind; nothing a CDP client sends avoids it. ``FocusKeeper`` undoes it at
once: while an agent's call runs (``hold``, and ``GRACE_S`` after), it watches the root
window's ``_NET_ACTIVE_WINDOW`` and stacking order; when one of that browser's windows
becomes active, it asks the window manager to activate the window that was active before
(as a pager would, which window managers honour), and a window of that browser that came
up over the user's window goes back where it was (a new one: just under the user's).

**Each agent's window says whose it is.** A window that an agent's call opened
(``hold(label=…)``: "claude-code · agent") gets that label in front of its title, kept
there whenever Chrome retitles the window (every navigation), so two agents' windows —
same profile, same tint, both "… - Chromium" — are told apart at a glance.

X is spoken through ``chrome/xcb.py`` (libxcb), on the event loop (the connection's
socket is watched with ``add_reader``). Off X11 (no ``DISPLAY``, no libxcb, macOS,
Windows, Wayland's own windows) it does nothing: Chrome's focus request is Linux-only,
and a Wayland compositor does not grant an activation that no user input asked for.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass, field

from browserdeck.chrome.xcb import ABOVE, BELOW, Display, load_xcb

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class WindowOwner:
    """Whose windows an agent's input may activate: a browser process we started (its
    ``_NET_WM_PID``), or, for a Chrome we did not start, any Chrome window (``WM_CLASS``)."""

    pid: int | None = None
    chrome_class: bool = False


# The window manager answers Chrome's request (and maps a new window) after the call
# that caused it has returned: a hold keeps watching this long after its body.
GRACE_S = 0.6


@dataclass
class _Hold:
    owner: WindowOwner
    active: int  # the window that was active when the agent's input began
    stacking: list[int]  # client windows then, bottom to top
    label: str | None = None  # put in front of the title of a window it opens
    until: float | None = None  # None while the agent's input runs; then its grace's end
    owned: dict[int, bool] = field(default_factory=dict)  # window -> owner's (cache)


class FocusKeeper:
    """Keeps an agent's input from activating or raising a browser window (X11; see the
    module): while a hold lasts, and a moment after, an owner's window that becomes
    active gives the focus back, and one that comes (or is new) above the window the
    user was in goes back where it was (a new one: just under the user's window, where
    most window managers put a window they did not focus)."""

    def __init__(self) -> None:
        self._display: Display | None = None
        self._tried = False
        self._holds: list[_Hold] = []
        self._active = 0
        self._stacking: list[int] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._timer: asyncio.TimerHandle | None = None
        self.restored = 0  # how many activations were undone (tests, the log)
        self.restacked = 0  # how many windows were put back under the user's
        self.labels: dict[int, str] = {}  # window -> the label in front of its title

    def _open(self) -> Display | None:
        if self._display is not None and self._display.broken:
            self.close()
        if self._display is not None or self._tried:
            return self._display
        self._tried = True
        name = os.environ.get("DISPLAY")
        libs = load_xcb() if name else None
        if libs is None or name is None:
            return None
        try:
            display = Display(libs, name)
            display.watch_root()
            self._active, self._stacking = display.active(), display.stacking()
            loop = asyncio.get_running_loop()
            loop.add_reader(display.fileno(), self._on_events)
        except (OSError, RuntimeError) as exc:
            log.debug("focus keeper off: %s", exc)
            return None
        self._display, self._loop = display, loop
        return display

    @contextlib.contextmanager
    def hold(self, owner: WindowOwner | None, *, label: str | None = None) -> Iterator[None]:
        """While the body runs (and ``GRACE_S`` after), ``owner``'s windows neither keep
        the focus nor stay raised over the window the user was in; a window of theirs
        that appears meanwhile gets ``label`` in front of its title."""
        display = self._open() if owner is not None else None
        if display is None or owner is None or self._loop is None:
            yield
            return
        self._on_events()  # what changed since the last look (a user's own switch)
        hold = _Hold(owner, self._active, list(self._stacking), label)
        self._holds.append(hold)
        try:
            yield
        finally:
            self._on_events()
            hold.until = self._loop.time() + GRACE_S
            self._arm()

    def _arm(self) -> None:
        """Drop expired holds when their grace ends (nothing else may wake us)."""
        loop = self._loop
        if loop is None or self._timer is not None:
            return
        ends = [h.until for h in self._holds if h.until is not None]
        if ends:
            self._timer = loop.call_at(min(ends), self._expire)

    def _expire(self) -> None:
        self._timer = None
        self._on_events()
        self._arm()

    def close(self) -> None:
        display, self._display = self._display, None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._holds.clear()
        self.labels.clear()
        if display is None:
            return
        if self._loop is not None and not self._loop.is_closed():
            with contextlib.suppress(Exception):
                self._loop.remove_reader(display.fileno())
        display.close()

    # --- events ---------------------------------------------------------------------
    def _on_events(self) -> None:
        display = self._display
        if display is None:
            return
        if display.broken:  # the X server went away: nothing to keep any more
            self.close()
            return
        atoms = display.atoms
        changed_active = changed_stacking = False
        retitled: set[int] = set()
        for window, atom in display.events():
            if window != display.root:
                if window in self.labels and atom == atoms["_NET_WM_NAME"]:
                    retitled.add(window)
                continue
            changed_active |= atom == atoms["_NET_ACTIVE_WINDOW"]
            changed_stacking |= atom == atoms["_NET_CLIENT_LIST_STACKING"]
        if changed_stacking:
            before, self._stacking = set(self._stacking), display.stacking()
            for gone in set(self.labels) - set(self._stacking):
                del self.labels[gone]
            self._label_new(display, set(self._stacking) - before)
        for window in retitled:
            self._relabel(display, window)
        if changed_active:
            self._active = display.active()
        now = self._loop.time() if self._loop is not None else 0.0
        self._holds = [h for h in self._holds if h.until is None or h.until > now]
        if changed_active or changed_stacking:
            for hold in self._holds:
                if self._keep(display, hold):
                    return

    def _label_new(self, display: Display, new: set[int]) -> None:
        """Windows that appeared during a labelled hold of their owner: its label."""
        for window in new:
            # The call still running, else the latest one: an earlier call's grace
            # must not claim the window a later call opened.
            ordered = sorted(reversed(self._holds), key=lambda h: h.until is not None)
            hold = next(
                (h for h in ordered if h.label and self._owned(display, window, h)), None
            )
            if hold is None or hold.label is None:
                continue
            self.labels[window] = hold.label
            display.watch(window)
            self._relabel(display, window)

    def _relabel(self, display: Display, window: int) -> None:
        """Put the window's label in front of its title (again, after Chrome retitled it)."""
        label = self.labels.get(window)
        if label is None:
            return
        prefix = f"{label} — "
        name = display.name_of(window)
        if not name.startswith(prefix):
            display.set_name(window, prefix + name)

    def _owned(self, display: Display, window: int, hold: _Hold) -> bool:
        if not window:
            return False
        known = hold.owned.get(window)
        if known is None:
            owner = hold.owner
            known = (owner.pid is not None and display.pid_of(window) == owner.pid) or (
                owner.chrome_class and "chrom" in display.wm_class(window).lower()
            )
            hold.owned[window] = known
        return known

    def _keep(self, display: Display, hold: _Hold) -> bool:
        """Undo what the owner's windows did to the user's window; True if anything."""
        user = hold.active
        if not user or user not in self._stacking:
            return False  # nothing was active before (or it went): no one to keep
        did = False
        # Another window of the same browser counts too: an agent's click in one of its
        # windows must not switch the user away from the one they are in.
        if self._active != user and self._owned(display, self._active, hold):
            log.debug(
                "an agent's input activated %#x; the focus goes back to %#x", self._active, user
            )
            display.activate(user)  # the window manager raises it again too
            self.restored += 1
            did = True
        stacking, before = self._stacking, hold.stacking
        user_before = before.index(user) if user in before else -1
        for window in stacking[stacking.index(user) + 1 :]:
            if not self._owned(display, window, hold):
                continue
            if window in before and 0 <= user_before < before.index(window):
                continue  # it was over the user's window already
            # Back on the window it sat on, if that is still under the user's; else (and
            # for a new window) just under the user's window.
            index = before.index(window) if window in before else -1
            sibling = before[index - 1] if index > 0 else 0
            if sibling and sibling in stacking and stacking.index(sibling) < stacking.index(user):
                display.restack(window, sibling, ABOVE)
            else:
                display.restack(window, user, BELOW)
            self.restacked += 1
            did = True
        return did
