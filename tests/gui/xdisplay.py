"""A private X display for tests and screenshots: Xvfb plus `trayer` as the system tray,
and optionally `openbox` as the window manager.

Xvfb picks a free display number itself (``-displayfd``), so parallel runs never
collide; trayer gives it a freedesktop system tray, so
``QSystemTrayIcon.isSystemTrayAvailable()`` is true and icons really embed. A window
manager is what activates and raises windows (``_NET_ACTIVE_WINDOW``): without one, a
window's request to be activated changes nothing, so focus tests need it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass
class XDisplay:
    display: str
    xvfb: subprocess.Popen[bytes]
    trayer: subprocess.Popen[bytes] | None
    wm: subprocess.Popen[bytes] | None = None

    def env(self) -> dict[str, str]:
        return {"DISPLAY": self.display, "QT_QPA_PLATFORM": "xcb"}

    def run(self, *args: str) -> str:
        out = subprocess.run(
            list(args),
            capture_output=True,
            text=True,
            timeout=20,
            env={**os.environ, "DISPLAY": self.display},
        )
        return out.stdout

    def tree(self) -> str:
        return self.run("xwininfo", "-root", "-tree")

    def window_pid(self, window_id: str) -> int | None:
        text = self.run("xprop", "-id", window_id, "_NET_WM_PID")
        try:
            return int(text.rsplit("=", 1)[1].strip())
        except (IndexError, ValueError):
            return None

    def grab(self, path: str) -> None:
        """Save the whole screen as PNG (a separate Qt process on this display)."""
        code = (
            "import sys\n"
            "from PySide6.QtGui import QGuiApplication\n"
            "app = QGuiApplication(sys.argv[:1])\n"
            "ok = app.primaryScreen().grabWindow(0).save(sys.argv[1])\n"
            "sys.exit(0 if ok else 1)\n"
        )
        subprocess.run(
            [sys.executable, "-c", code, path],
            check=True,
            timeout=30,
            env={**os.environ, **self.env()},
            capture_output=True,
        )

    def root_windows(self, prop: str) -> list[int]:
        """A root window property of windows (``_NET_ACTIVE_WINDOW``,
        ``_NET_CLIENT_LIST_STACKING``: bottom to top), as ids."""
        text = self.run("xprop", "-root", prop)
        if "#" not in text:
            return []
        return [int(w, 16) for w in text.split("#", 1)[1].replace(",", " ").split() if w]

    def active_window(self) -> int:
        found = self.root_windows("_NET_ACTIVE_WINDOW")
        return found[0] if found else 0

    def window_name(self, window: int) -> str:
        text = self.run("xprop", "-id", hex(window), "_NET_WM_NAME", "WM_NAME")
        for line in text.splitlines():
            if "=" in line:
                return line.split("=", 1)[1].strip().strip('"')
        return ""

    def window_ids(self) -> list[str]:
        """Every window id in the tree."""
        out = []
        for line in self.tree().splitlines():
            word = line.strip().split(" ", 1)[0]
            if word.startswith("0x"):
                out.append(word)
        return out

    def close_window(self, window_id: str) -> None:
        """What a window manager does when the user clicks a window's close button: send
        it a WM_DELETE_WINDOW client message (ICCCM). libX11 through ctypes."""
        import ctypes
        import ctypes.util

        x = ctypes.cdll.LoadLibrary(ctypes.util.find_library("X11") or "libX11.so.6")
        x.XOpenDisplay.restype = ctypes.c_void_p
        x.XOpenDisplay.argtypes = [ctypes.c_char_p]
        x.XInternAtom.restype = ctypes.c_ulong
        x.XInternAtom.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
        x.XSendEvent.argtypes = [
            ctypes.c_void_p,
            ctypes.c_ulong,
            ctypes.c_int,
            ctypes.c_long,
            ctypes.c_void_p,
        ]
        x.XFlush.argtypes = [ctypes.c_void_p]
        x.XCloseDisplay.argtypes = [ctypes.c_void_p]

        class ClientMessage(ctypes.Structure):
            _fields_ = [
                ("type", ctypes.c_int),
                ("serial", ctypes.c_ulong),
                ("send_event", ctypes.c_int),
                ("display", ctypes.c_void_p),
                ("window", ctypes.c_ulong),
                ("message_type", ctypes.c_ulong),
                ("format", ctypes.c_int),
                ("data", ctypes.c_long * 5),
                ("pad", ctypes.c_char * 96),  # XEvent is a 192-byte union
            ]

        dpy = x.XOpenDisplay(self.display.encode())
        if not dpy:
            raise RuntimeError(f"cannot open {self.display}")
        try:
            event = ClientMessage()
            event.type = 33  # ClientMessage
            event.send_event = 1
            event.window = int(window_id, 16)
            event.message_type = x.XInternAtom(dpy, b"WM_PROTOCOLS", 0)
            event.format = 32
            event.data[0] = x.XInternAtom(dpy, b"WM_DELETE_WINDOW", 0)
            event.data[1] = 0  # CurrentTime
            x.XSendEvent(dpy, event.window, 0, 0, ctypes.byref(event))
            x.XFlush(dpy)
        finally:
            x.XCloseDisplay(dpy)

    def tray_children(self) -> list[str]:
        """Window ids embedded in trayer's panel (the tray icons)."""
        lines = self.tree().splitlines()
        out: list[str] = []
        for i, line in enumerate(lines):
            if '"panel": ("panel" "trayer")' in line:
                indent = len(line) - len(line.lstrip())
                for child in lines[i + 1 :]:
                    if not child.strip():
                        continue
                    if len(child) - len(child.lstrip()) <= indent:
                        break
                    word = child.strip().split()[0]
                    if word.startswith("0x"):
                        out.append(word)
        return out


def missing_tools() -> list[str]:
    return [
        tool
        for tool in ("Xvfb", "trayer", "openbox", "xwininfo", "xprop")
        if not shutil.which(tool)
    ]


@contextlib.contextmanager
def xvfb_with_tray(
    size: str = "1280x800",
    tray: bool = True,
    background: str | None = None,
    full_width_bar: bool = False,
    window_manager: bool = False,
) -> Iterator[XDisplay]:
    read_fd, write_fd = os.pipe()
    xvfb = subprocess.Popen(
        [
            "Xvfb",
            "-displayfd",
            str(write_fd),
            "-screen",
            "0",
            f"{size}x24",
            "-nolisten",
            "tcp",
            "-noreset",
        ],
        pass_fds=(write_fd,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write_fd)
    trayer: subprocess.Popen[bytes] | None = None
    display: XDisplay | None = None
    try:
        with os.fdopen(read_fd, "rb") as pipe:
            number = pipe.readline().strip().decode()
        if not number:
            raise RuntimeError("Xvfb did not report a display number")
        display = XDisplay(f":{number}", xvfb, None)
        if window_manager:
            display.wm = subprocess.Popen(
                ["openbox", "--sm-disable"],
                env={**os.environ, "DISPLAY": display.display},
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            deadline = time.monotonic() + 10
            while "window id" not in display.run("xprop", "-root", "_NET_SUPPORTING_WM_CHECK"):
                if time.monotonic() > deadline or display.wm.poll() is not None:
                    raise RuntimeError("openbox did not start on " + display.display)
                time.sleep(0.05)
        if background and shutil.which("xsetroot"):  # a plain backdrop if it is missing
            display.run("xsetroot", "-solid", background)
        if tray:
            trayer = subprocess.Popen(
                [
                    "trayer",
                    "--edge",
                    "top",
                    "--align",
                    "right",
                    # A full-width bar looks like a desktop's top panel (docs screenshots).
                    *(
                        ["--widthtype", "percent", "--width", "100"]
                        if full_width_bar
                        else ["--widthtype", "request"]
                    ),
                    "--height",
                    "28",
                    "--SetDockType",
                    "true",
                    "--expand",
                    "true",
                    "--transparent",
                    "true",
                    "--alpha",
                    "0",
                    "--tint",
                    "0x2B2F36",
                ],
                env={**os.environ, "DISPLAY": display.display},
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            display.trayer = trayer
            deadline = time.monotonic() + 10
            while '"panel": ("panel" "trayer")' not in display.tree():
                if time.monotonic() > deadline or trayer.poll() is not None:
                    raise RuntimeError("trayer did not start on " + display.display)
                time.sleep(0.05)
        yield display
    finally:
        wm = display.wm if display is not None else None
        for proc in (trayer, wm, xvfb):
            if proc is not None and proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(5)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(5)
