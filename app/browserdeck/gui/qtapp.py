"""The QApplication of the tray app: its names, style and high-DPI policy.

Made once by the entry point (``gui/launch.py``) and by tests and benches that need the
same application the tray runs in.
"""

from __future__ import annotations

import sys

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication

from browserdeck import __version__, autostart
from browserdeck.gui import icons

__all__ = ["APP_ID", "STYLE", "make_qapp"]

APP_ID = autostart.APP_ID
STYLE = """
QLabel#hint { color: palette(mid); }
QLabel#sectionTitle { padding: 2px 0 4px 0; }
QLabel#profileDetail { color: palette(dark); padding: 4px 2px; }
QLabel#hoverLabel, QLabel#shotInfo { color: palette(dark); }
QTreeWidget, QListWidget { border: 1px solid palette(mid); border-radius: 4px; }
ScreenshotView, QWidget#screenshotView { border: 1px solid palette(mid); border-radius: 4px; }
QLineEdit[readOnly="true"] { background: palette(window); color: palette(dark);
                             border: 1px dashed palette(mid); border-radius: 3px; }
QLabel#activityEmpty { color: palette(dark); }
"""


def make_qapp(argv: list[str] | None = None) -> QApplication:
    existing = QApplication.instance()
    if isinstance(existing, QApplication):
        qapp = existing
    else:
        QGuiApplication.setHighDpiScaleFactorRoundingPolicy(
            Qt.HighDpiScaleFactorRoundingPolicy.PassThrough
        )
        qapp = QApplication(argv or sys.argv[:1])
    qapp.setApplicationName("browserdeck")
    qapp.setApplicationDisplayName("browserdeck")
    qapp.setApplicationVersion(__version__)
    qapp.setOrganizationDomain("browserdeck.github.io")
    qapp.setDesktopFileName(APP_ID)
    # A tray app keeps running with no window open; Quit is explicit.
    qapp.setQuitOnLastWindowClosed(False)
    qapp.setWindowIcon(icons.app_icon())
    if qapp.style().name().lower() not in (
        "breeze",
        "adwaita",
        "macos",
        "windowsvista",
        "windows11",
    ):
        qapp.setStyle("Fusion")
    qapp.setStyleSheet(STYLE)
    return qapp
