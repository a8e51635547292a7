"""A small X11 client over libxcb (ctypes): the root window's properties, a window's name
and pid, and the requests a pager sends (activate, restack). For chrome/xfocus.py.

libxcb rather than Xlib: it installs no process-wide error handlers (Xlib's default one
exits the process on a window that went away, and Qt sets its own), and a lost display
is an error value, not an exit. Nothing here blocks but a reply to a request of ours.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from collections.abc import Iterator

_PROPERTY_NOTIFY = 28
_CLIENT_MESSAGE = 33
_PROPERTY_CHANGE_MASK = 1 << 22
_SUBSTRUCTURE_NOTIFY = 1 << 19
_SUBSTRUCTURE_REDIRECT = 1 << 20
_CW_EVENT_MASK = 1 << 11
_PROP_MODE_REPLACE = 0
_ATOM_CARDINAL = 6
_ATOM_STRING = 31
_ATOM_WINDOW = 33
_SOURCE_PAGER = 2  # EWMH source indication: "a pager or the user asked" (honoured)
ABOVE, BELOW = 0, 1


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


def load_xcb() -> tuple[ctypes.CDLL, ctypes.CDLL] | None:
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
    lib.xcb_change_property.restype = _Cookie
    lib.xcb_change_property.argtypes = [vp, u8, u32, u32, u32, u8, u32, ctypes.c_char_p]
    lib.xcb_change_window_attributes.restype = _Cookie
    lib.xcb_change_window_attributes.argtypes = [vp, u32, u32, ctypes.POINTER(u32)]
    lib.xcb_send_event.restype = _Cookie
    lib.xcb_send_event.argtypes = [vp, u8, u32, u32, ctypes.c_char_p]
    lib.xcb_poll_for_event.restype = vp
    lib.xcb_poll_for_event.argtypes = [vp]
    return lib, libc


class Display:
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
                "_NET_WM_NAME",
                "UTF8_STRING",
                "WM_NAME",
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

    def name_of(self, window: int) -> str:
        raw = self._property(window, self.atoms["_NET_WM_NAME"], self.atoms["UTF8_STRING"])
        return (raw or b"").decode("utf-8", "replace")

    def set_name(self, window: int, name: str) -> None:
        """The window's title, as its client sets it (EWMH's UTF-8 one, and ICCCM's)."""
        for atom, kind, data in (
            (self.atoms["_NET_WM_NAME"], self.atoms["UTF8_STRING"], name.encode("utf-8")),
            (self.atoms["WM_NAME"], _ATOM_STRING, name.encode("latin-1", "replace")),
        ):
            self.lib.xcb_change_property(
                self.conn, _PROP_MODE_REPLACE, window, atom, kind, 8, len(data), data
            )
        self.lib.xcb_flush(self.conn)

    def watch(self, window: int) -> None:
        """Hear of the window's property changes (its title)."""
        mask = (ctypes.c_uint32 * 1)(_PROPERTY_CHANGE_MASK)
        self.lib.xcb_change_window_attributes(self.conn, window, _CW_EVENT_MASK, mask)
        self.lib.xcb_flush(self.conn)

    def watch_root(self) -> None:
        self.watch(self.root)

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
