"""Write the static app icons from the same drawing code the tray uses (gui/icons.py).

    QT_QPA_PLATFORM=offscreen .venv/bin/python resources/make_icons.py

Writes ``resources/icons/``: the app icon as PNG at the freedesktop sizes
(``hicolor/<n>x<n>/apps/io.github.browserdeck.BrowserDeck.png``), ``browserdeck.ico``
(Windows) and ``browserdeck.icns`` (macOS) for the PyInstaller bundle, and one tray
icon per state for the docs. Re-run after changing gui/icons.py; the files are
checked in so packaging does not need a display.
"""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "app"))

from PIL import Image  # noqa: E402
from PySide6.QtCore import QBuffer, QIODevice  # noqa: E402
from PySide6.QtGui import QGuiApplication, QImage  # noqa: E402

from browserdeck.autostart import APP_ID  # noqa: E402

OUT = ROOT / "resources" / "icons"
COLOR = "#FF4500"  # the default profile's colour
SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512)


def to_pil(image: QImage) -> Image.Image:
    buf = QBuffer()
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buf, "PNG")
    return Image.open(io.BytesIO(bytes(buf.data().data()))).convert("RGBA")


def main() -> int:
    app = QGuiApplication(sys.argv[:1])  # noqa: F841  (QPainter needs a GUI application)
    from browserdeck.gui import icons

    OUT.mkdir(parents=True, exist_ok=True)
    images = {}
    for size in SIZES:
        image = icons.render(size, COLOR, None)
        target = OUT / "hicolor" / f"{size}x{size}" / "apps" / f"{APP_ID}.png"
        target.parent.mkdir(parents=True, exist_ok=True)
        image.save(str(target), "PNG")
        images[size] = to_pil(image)
    images[256].save(OUT / "browserdeck.png")
    images[256].save(
        OUT / "browserdeck.ico", sizes=[(s, s) for s in (16, 24, 32, 48, 64, 128, 256)]
    )
    images[512].save(OUT / "browserdeck.icns")
    for state in icons.MARK_COLORS:
        icons.render(64, COLOR, state).save(str(OUT / f"tray-{state}.png"), "PNG")
    print(f"wrote icons to {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
