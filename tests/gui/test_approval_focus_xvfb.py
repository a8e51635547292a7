"""The approval window takes no keyboard focus from the person's own window, on a real X
server (Xvfb) with a real window manager (openbox, which activates windows): shown, it is
on top of the user's window and the user's stays active; its button clicked for real
(an X pointer click through XTest) answers, and the user's window is still active."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.gui.test_focus_xvfb import on_top, user_window
from tests.gui.xdisplay import XDisplay, missing_tools, xvfb_with_tray

pytestmark = pytest.mark.skipif(
    bool(missing_tools()), reason=f"needs {', '.join(missing_tools())} (make system-deps)"
)

CLICK = """
import ctypes, sys, time
x11 = ctypes.CDLL("libX11.so.6"); xtst = ctypes.CDLL("libXtst.so.6")
x11.XOpenDisplay.restype = ctypes.c_void_p
display = x11.XOpenDisplay(None)
x, y = int(sys.argv[1]), int(sys.argv[2])
xtst.XTestFakeMotionEvent(ctypes.c_void_p(display), -1, x, y, 0)
x11.XFlush(ctypes.c_void_p(display)); time.sleep(0.1)
xtst.XTestFakeButtonEvent(ctypes.c_void_p(display), 1, 1, 0)
xtst.XTestFakeButtonEvent(ctypes.c_void_p(display), 1, 0, 0)
x11.XFlush(ctypes.c_void_p(display)); x11.XCloseDisplay(ctypes.c_void_p(display))
"""


def _click(x: XDisplay, at: list[int]) -> None:
    subprocess.run(
        [sys.executable, "-c", CLICK, str(at[0]), str(at[1])],
        check=True,
        timeout=20,
        env={**os.environ, "DISPLAY": x.display},
    )


def test_the_window_takes_no_focus_and_its_button_answers(tmp_path: Path) -> None:
    with xvfb_with_tray(tray=False, window_manager=True) as x, user_window(x) as user:
        app = subprocess.Popen(
            [sys.executable, "-m", "tests.gui.approval_window_app"],
            env={**os.environ, **x.env(), "BROWSERDECK_HOME": str(tmp_path)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=Path(__file__).resolve().parents[2],
        )
        try:
            assert app.stdout is not None
            shown = json.loads(app.stdout.readline() or "{}")
            assert "window" in shown, app.stderr.read() if app.stderr else ""
            time.sleep(0.5)  # a focus change, if the window made one, takes this long
            assert x.active_window() == user, "the approval window took the focus"
            stacking = x.root_windows("_NET_CLIENT_LIST_STACKING")
            frames = [w for w in stacking if x.window_name(w).startswith("browserdeck")]
            assert frames, (
                f"the approval window is not managed: {[x.window_name(w) for w in stacking]}"
            )
            assert stacking.index(frames[-1]) > stacking.index(user), (
                "it is under the user's window"
            )
            _click(x, shown["once"])
            answered = json.loads(app.stdout.readline() or "{}")
            assert answered == {"answer": "once"}
            time.sleep(0.3)
            assert x.active_window() == user, "clicking its button took the focus"
            assert on_top(x) != 0
        finally:
            app.kill()
            app.communicate(timeout=10)  # and closes its pipes
