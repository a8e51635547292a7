"""An agent's input never takes the user's keyboard focus (X11).

Chrome on Linux activates a browser window on every mouse press or touch start its page
gets, including the ones CDP injects (``ContentsWebView::DidGetUserInteraction`` calls
``RequestFocus()`` when the contents view is not focused, and views activates the
window: Chrome sends the window manager a ``_NET_ACTIVE_WINDOW`` request). So each agent
click raised the agent's browser over whatever the user was doing and took their
keyboard. Playwright asks for nothing of the kind; nothing a CDP client sends avoids it.

``FocusKeeper`` undoes it at once: while an agent's input reaches a browser (``hold``),
it watches the root window's ``_NET_ACTIVE_WINDOW``; when one of that browser's windows
becomes active, it asks the window manager to activate the window that was active
before (as a pager would, which window managers honour) and to put the browser's window
back where it was in the stacking order. It talks X through libxcb (no global error
handlers, unlike Xlib, and a lost display is an error value, not an exit), on the event
loop (the connection's socket is watched with ``add_reader``).

Off X11 (no ``DISPLAY``, no libxcb, macOS, Windows, Wayland's own windows) it does
nothing: Chrome's focus request is Linux-only, and a Wayland compositor does not grant an
activation that no user input asked for.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import ctypes.util
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass, field

log = logging.getLogger(__name__)

_PROPERTY_NOTIFY = 28
_CLIENT_MESSAGE = 33
_PROPERTY_CHANGE_MASK = 1 << 22
_SUBSTRUCTURE_NOTIFY = 1 << 19
_SUBSTRUCTURE_REDIRECT = 1 << 20
_CW_EVENT_MASK = 1 << 11
_ATOM_CARDINAL = 6
_ATOM_STRING = 31
_ATOM_WINDOW = 33
_SOURCE_PAGER = 2  # EWMH source indication: "a pager or the user asked" (honoured)
_ABOVE, _BELOW = 0, 1


@dataclass(frozen=True)
class WindowOwner:
    """Whose windows an agent's input may activate: a browser process we started (its
    ``_NET_WM_PID``), or, for a Chrome we did not start, any Chrome window (``WM_CLASS``)."""

    pid: int | None = None
    chrome_class: bool = False


class _Cookie(ctypes.Structure):
    _fields_ = [("sequence", ctypes.c_uint)]


class _ScreenIterator(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("rem", ctypes.c_int), ("index", ctypes.c_int)]


class _AtomReply(ctypes.Structure):
    _fields_ = [
        ("response_type", ctypes.c_uint8),
        ("pad0", ctypes.c_uint8),
        ("sequence", ctypes.c_uint16),
        ("length", ctypes.c_uint32),
        ("atom", ctypes.c_uint32),
    ]


class _PropertyNotify(ctypes.Structure):
    _fields_ = [
        ("response_type", ctypes.c_uint8),
        ("pad0", ctypes.c_uint8),
        ("sequence", ctypes.c_uint16),
        ("window", ctypes.c_uint32),
        ("atom", ctypes.c_uint32),
        ("time", ctypes.c_uint32),
        ("state", ctypes.c_uint8),
    ]


class _ClientMessage(ctypes.Structure):
    _fields_ = [
        ("response_type", ctypes.c_uint8),
        ("format", ctypes.c_uint8),
        ("sequence", ctypes.c_uint16),
        ("window", ctypes.c_uint32),
        ("type", ctypes.c_uint32),
        ("data", ctypes.c_uint32 * 5),
    ]


def _load_xcb() -> tuple[ctypes.CDLL, ctypes.CDLL] | None:
    """libxcb and the process's C library (xcb's replies and events are malloc'd)."""
    name = ctypes.util.find_library("xcb")
    if not name:
        return None
    try:
        lib, libc = ctypes.CDLL(name), ctypes.CDLL(None)
    except OSError:
        return None
    libc.free.argtypes = [ctypes.c_void_p]
    vp, u8, u16, u32 = ctypes.c_void_p, ctypes.c_uint8, ctypes.c_uint16, ctypes.c_uint32
    lib.xcb_connect.restype = vp
    lib.xcb_connect.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)]
    lib.xcb_connection_has_error.argtypes = [vp]
    lib.xcb_disconnect.argtypes = [vp]
    lib.xcb_get_file_descriptor.argtypes = [vp]
    lib.xcb_flush.argtypes = [vp]
    lib.xcb_get_setup.restype = vp
    lib.xcb_get_setup.argtypes = [vp]
    lib.xcb_setup_roots_iterator.restype = _ScreenIterator
    lib.xcb_setup_roots_iterator.argtypes = [vp]
    lib.xcb_screen_next.argtypes = [ctypes.POINTER(_ScreenIterator)]
    lib.xcb_intern_atom.restype = _Cookie
    lib.xcb_intern_atom.argtypes = [vp, u8, u16, ctypes.c_char_p]
    lib.xcb_intern_atom_reply.restype = ctypes.POINTER(_AtomReply)
    lib.xcb_intern_atom_reply.argtypes = [vp, _Cookie, vp]
    lib.xcb_get_property.restype = _Cookie
    lib.xcb_get_property.argtypes = [vp, u8, u32, u32, u32, u32, u32]
    lib.xcb_get_property_reply.restype = vp
    lib.xcb_get_property_reply.argtypes = [vp, _Cookie, vp]
    lib.xcb_get_property_value.restype = vp
    lib.xcb_get_property_value.argtypes = [vp]
    lib.xcb_get_property_value_length.argtypes = [vp]
    lib.xcb_change_window_attributes.restype = _Cookie
    lib.xcb_change_window_attributes.argtypes = [vp, u32, u32, ctypes.POINTER(u32)]
    lib.xcb_send_event.restype = _Cookie
    lib.xcb_send_event.argtypes = [vp, u8, u32, u32, ctypes.c_char_p]
    lib.xcb_poll_for_event.restype = vp
    lib.xcb_poll_for_event.argtypes = [vp]
    return lib, libc


class _Display:
    """One xcb connection: the root window's properties and the requests we send."""

    def __init__(self, libs: tuple[ctypes.CDLL, ctypes.CDLL], name: str) -> None:
        lib, self._libc = libs
        self.lib = lib
        screen = ctypes.c_int(0)
        self.conn = lib.xcb_connect(name.encode(), ctypes.byref(screen))
        if not self.conn or lib.xcb_connection_has_error(self.conn):
            if self.conn:
                lib.xcb_disconnect(self.conn)
            raise OSError(f"cannot open X display {name}")
        it = lib.xcb_setup_roots_iterator(lib.xcb_get_setup(self.conn))
        for _ in range(screen.value):
            lib.xcb_screen_next(ctypes.byref(it))
        self.root = ctypes.cast(it.data, ctypes.POINTER(ctypes.c_uint32))[0]
        self.atoms = {
            name: self._atom(name)
            for name in (
                "_NET_ACTIVE_WINDOW",
                "_NET_CLIENT_LIST_STACKING",
                "_NET_RESTACK_WINDOW",
                "_NET_WM_PID",
                "WM_CLASS",
            )
        }

    @property
    def broken(self) -> bool:
        return bool(self.lib.xcb_connection_has_error(self.conn))

    def fileno(self) -> int:
        return int(self.lib.xcb_get_file_descriptor(self.conn))

    def close(self) -> None:
        if self.conn:
            self.lib.xcb_disconnect(self.conn)
            self.conn = None

    def _atom(self, name: str) -> int:
        raw = name.encode()
        reply = self.lib.xcb_intern_atom_reply(
            self.conn, self.lib.xcb_intern_atom(self.conn, 0, len(raw), raw), None
        )
        if not reply:
            raise OSError(f"X refused the atom {name}")
        try:
            return int(reply.contents.atom)
        finally:
            self._libc.free(reply)

    def _property(self, window: int, atom: int, kind: int, longs: int = 1024) -> bytes | None:
        reply = self.lib.xcb_get_property_reply(
            self.conn, self.lib.xcb_get_property(self.conn, 0, window, atom, kind, 0, longs), None
        )
        if not reply:  # the window went (an error, not an exit: this is xcb)
            return None
        try:
            size = self.lib.xcb_get_property_value_length(reply)
            return ctypes.string_at(self.lib.xcb_get_property_value(reply), size)
        finally:
            self._libc.free(reply)

    def _windows(self, window: int, atom: int, kind: int) -> list[int]:
        raw = self._property(window, atom, kind) or b""
        count = len(raw) // 4
        return list((ctypes.c_uint32 * count).from_buffer_copy(raw[: count * 4]))

    def active(self) -> int:
        found = self._windows(self.root, self.atoms["_NET_ACTIVE_WINDOW"], _ATOM_WINDOW)
        return found[0] if found else 0

    def stacking(self) -> list[int]:
        """Client windows, bottom to top."""
        return self._windows(self.root, self.atoms["_NET_CLIENT_LIST_STACKING"], _ATOM_WINDOW)

    def pid_of(self, window: int) -> int | None:
        found = self._windows(window, self.atoms["_NET_WM_PID"], _ATOM_CARDINAL)
        return found[0] if found else None

    def wm_class(self, window: int) -> str:
        raw = self._property(window, self.atoms["WM_CLASS"], _ATOM_STRING, 64) or b""
        return raw.replace(b"\0", b" ").decode("latin-1").strip()

    def watch_root(self) -> None:
        mask = (ctypes.c_uint32 * 1)(_PROPERTY_CHANGE_MASK)
        self.lib.xcb_change_window_attributes(self.conn, self.root, _CW_EVENT_MASK, mask)
        self.lib.xcb_flush(self.conn)

    def _client_message(self, window: int, kind: str, *data: int) -> None:
        event = _ClientMessage(_CLIENT_MESSAGE, 32, 0, window, self.atoms[kind])
        for i, value in enumerate(data):
            event.data[i] = value
        self.lib.xcb_send_event(
            self.conn,
            0,
            self.root,
            _SUBSTRUCTURE_NOTIFY | _SUBSTRUCTURE_REDIRECT,
            ctypes.string_at(ctypes.addressof(event), ctypes.sizeof(event)),
        )

    def activate(self, window: int) -> None:
        self._client_message(window, "_NET_ACTIVE_WINDOW", _SOURCE_PAGER, 0, 0)
        self.lib.xcb_flush(self.conn)

    def restack(self, window: int, sibling: int, detail: int) -> None:
        self._client_message(window, "_NET_RESTACK_WINDOW", _SOURCE_PAGER, sibling, detail)
        self.lib.xcb_flush(self.conn)

    def events(self) -> Iterator[tuple[int, int]]:
        """(window, atom) of each PropertyNotify waiting; other events are dropped."""
        while True:
            raw = self.lib.xcb_poll_for_event(self.conn)
            if not raw:
                return
            try:
                event = _PropertyNotify.from_address(raw)
                kind = event.response_type & 0x7F
                window, atom = int(event.window), int(event.atom)
            finally:
                self._libc.free(raw)
            if kind == _PROPERTY_NOTIFY:
                yield window, atom


# The window manager answers Chrome's request (and maps a new window) after the call
# that caused it has returned: a hold keeps watching this long after its body.
GRACE_S = 0.6


@dataclass
class _Hold:
    owner: WindowOwner
    active: int  # the window that was active when the agent's input began
    stacking: list[int]  # client windows then, bottom to top
    until: float | None = None  # None while the agent's input runs; then its grace's end
    owned: dict[int, bool] = field(default_factory=dict)  # window -> owner's (cache)


class FocusKeeper:
    """Keeps an agent's input from activating or raising a browser window (X11; see the
    module): while a hold lasts, and a moment after, an owner's window that becomes
    active gives the focus back, and one that comes (or is new) above the window the
    user was in goes back where it was (a new one: just under the user's window, where
    most window managers put a window they did not focus)."""

    def __init__(self) -> None:
        self._display: _Display | None = None
        self._tried = False
        self._holds: list[_Hold] = []
        self._active = 0
        self._stacking: list[int] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._timer: asyncio.TimerHandle | None = None
        self.restored = 0  # how many activations were undone (tests, the log)
        self.restacked = 0  # how many windows were put back under the user's

    def _open(self) -> _Display | None:
        if self._display is not None and self._display.broken:
            self.close()
        if self._display is not None or self._tried:
            return self._display
        self._tried = True
        name = os.environ.get("DISPLAY")
        libs = _load_xcb() if name else None
        if libs is None or name is None:
            return None
        try:
            display = _Display(libs, name)
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
    def hold(self, owner: WindowOwner | None) -> Iterator[None]:
        """While the body runs (and ``GRACE_S`` after), ``owner``'s windows neither keep
        the focus nor stay raised over the window the user was in."""
        display = self._open() if owner is not None else None
        if display is None or owner is None or self._loop is None:
            yield
            return
        self._on_events()  # what changed since the last look (a user's own switch)
        hold = _Hold(owner, self._active, list(self._stacking))
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
        for window, atom in display.events():
            if window != display.root:
                continue
            changed_active |= atom == atoms["_NET_ACTIVE_WINDOW"]
            changed_stacking |= atom == atoms["_NET_CLIENT_LIST_STACKING"]
        if changed_stacking:
            self._stacking = display.stacking()
        if changed_active:
            self._active = display.active()
        now = self._loop.time() if self._loop is not None else 0.0
        self._holds = [h for h in self._holds if h.until is None or h.until > now]
        if changed_active or changed_stacking:
            for hold in self._holds:
                if self._keep(display, hold):
                    return

    def _owned(self, display: _Display, window: int, hold: _Hold) -> bool:
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

    def _keep(self, display: _Display, hold: _Hold) -> bool:
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
        stacking = self._stacking
        above = stacking[stacking.index(user) + 1 :]
        for window in above:
            if not self._owned(display, window, hold):
                continue
            before = hold.stacking
            if window in before and before.index(window) > before.index(user):
                continue  # it was over the user's window already
            # Back on the window it sat on, if that is still under the user's; else (and
            # for a new window) just under the user's window.
            index = before.index(window) if window in before else -1
            sibling = before[index - 1] if index > 0 else 0
            if sibling and sibling in stacking and stacking.index(sibling) < stacking.index(user):
                display.restack(window, sibling, _ABOVE)
            else:
                display.restack(window, user, _BELOW)
            self.restacked += 1
            did = True
        return did
