"""Icons drawn in code: the tray icon in the profile's colour with a state mark.

Drawing (rather than shipping PNGs per colour) is what lets every profile colour
tint the icon. ``resources/make_icons.py`` calls the same functions to write the
static app icons used by the ``.desktop`` file and the PyInstaller bundle, so the
two never drift apart.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Literal

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import (
    QBrush,
    QColor,
    QIcon,
    QImage,
    QLinearGradient,
    QPainter,
    QPainterPath,
    QPen,
    QPixmap,
    QPolygonF,
)

TrayState = Literal["running", "stopped", "extension", "error", "starting"]

# Mark colours: chosen to read on both light and dark panels.
MARK_COLORS: dict[str, str] = {
    "running": "#2EB857",
    "starting": "#F2A900",
    "stopped": "#8A8F98",
    "extension": "#2F80ED",
    "error": "#E5383B",
}
ICON_SIZES = (16, 22, 24, 32, 48, 64, 128, 256)


def state_color(state: str) -> QColor:
    return QColor(MARK_COLORS.get(state, MARK_COLORS["stopped"]))


def paint_logo(p: QPainter, size: float, color: QColor) -> None:
    """The body: a rounded tile in ``color`` holding a white browser-window glyph."""
    s = size / 64.0
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    tile = QRectF(3 * s, 3 * s, 58 * s, 58 * s)
    grad = QLinearGradient(tile.topLeft(), tile.bottomLeft())
    grad.setColorAt(0.0, color.lighter(118))
    grad.setColorAt(1.0, color.darker(112))
    p.setPen(QPen(color.darker(140), max(1.0, 1.5 * s)))
    p.setBrush(QBrush(grad))
    p.drawRoundedRect(tile, 14 * s, 14 * s)
    # The window glyph: an outline with a filled title bar. Thick strokes so it
    # still reads at 16-22 px, where tray icons live.
    white = QColor("#FFFFFF")
    window = QRectF(13 * s, 15 * s, 38 * s, 32 * s)
    p.setBrush(Qt.BrushStyle.NoBrush)
    p.setPen(
        QPen(
            white,
            max(1.2, 4.0 * s),
            Qt.PenStyle.SolidLine,
            Qt.PenCapStyle.RoundCap,
            Qt.PenJoinStyle.RoundJoin,
        )
    )
    p.drawRoundedRect(window, 5 * s, 5 * s)
    bar = QPainterPath()
    bar.addRoundedRect(QRectF(13 * s, 15 * s, 38 * s, 11 * s), 5 * s, 5 * s)
    p.fillPath(bar, white)


def paint_mark(p: QPainter, size: float, state: str) -> None:
    """The state mark: a badge in the bottom-right corner with a small glyph."""
    s = size / 64.0
    center = QPointF(49 * s, 49 * s)
    radius = 12.5 * s
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    # A white ring separates the badge from the tile at every size.
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(QColor("#FFFFFF"))
    p.drawEllipse(center, radius + 2.5 * s, radius + 2.5 * s)
    p.setBrush(state_color(state))
    p.drawEllipse(center, radius, radius)
    white = QColor("#FFFFFF")
    p.setBrush(white)
    pen = QPen(
        white,
        max(1.0, 3.2 * s),
        Qt.PenStyle.SolidLine,
        Qt.PenCapStyle.RoundCap,
        Qt.PenJoinStyle.RoundJoin,
    )
    cx, cy = center.x(), center.y()
    if state == "running":
        p.setPen(Qt.PenStyle.NoPen)
        p.drawPolygon(
            QPolygonF(
                [
                    QPointF(cx - 4 * s, cy - 6.5 * s),
                    QPointF(cx + 7 * s, cy),
                    QPointF(cx - 4 * s, cy + 6.5 * s),
                ]
            )
        )
    elif state == "stopped":
        p.setPen(Qt.PenStyle.NoPen)
        p.drawRoundedRect(QRectF(cx - 5 * s, cy - 5 * s, 10 * s, 10 * s), 1.5 * s, 1.5 * s)
    elif state == "starting":
        p.setPen(Qt.PenStyle.NoPen)
        for dx in (-6, 0, 6):
            p.drawEllipse(QPointF(cx + dx * s, cy), 2.2 * s, 2.2 * s)
    elif state == "extension":
        # Two links of a chain: "connected".
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.setPen(pen)
        p.drawRoundedRect(QRectF(cx - 8 * s, cy - 3.5 * s, 10 * s, 7 * s), 3.5 * s, 3.5 * s)
        p.drawRoundedRect(QRectF(cx - 2 * s, cy - 3.5 * s, 10 * s, 7 * s), 3.5 * s, 3.5 * s)
    else:  # error
        p.setPen(pen)
        p.drawLine(QPointF(cx, cy - 7 * s), QPointF(cx, cy + 1.5 * s))
        p.setPen(Qt.PenStyle.NoPen)
        p.drawEllipse(QPointF(cx, cy + 6 * s), 2.0 * s, 2.0 * s)


def render(size: int, color: str, state: str | None, trouble: bool = False) -> QImage:
    """One square image of the icon; ``state=None`` draws the plain app logo; ``trouble``
    adds a small red dot (top right) for a problem of a profile other than the default."""
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    p = QPainter(image)
    try:
        paint_logo(p, size, QColor(color))
        if state is not None:
            paint_mark(p, size, state)
        if trouble:
            s = size / 64.0
            center = QPointF(52 * s, 12 * s)
            p.setRenderHint(QPainter.RenderHint.Antialiasing)
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(QColor("#FFFFFF"))
            p.drawEllipse(center, 10 * s, 10 * s)
            p.setBrush(state_color("error"))
            p.drawEllipse(center, 7.5 * s, 7.5 * s)
    finally:
        p.end()
    return image


@lru_cache(maxsize=64)
def tray_icon(color: str, state: str, trouble: bool = False) -> QIcon:
    """The tray icon: ``color`` is the default profile's colour, ``state`` its mark,
    ``trouble``: another profile crashed or could not start (a red dot apart)."""
    icon = QIcon()
    for size in ICON_SIZES:
        icon.addPixmap(QPixmap.fromImage(render(size, color, state, trouble)))
    return icon


@lru_cache(maxsize=4)
def app_icon(color: str = "#FF4500") -> QIcon:
    icon = QIcon()
    for size in ICON_SIZES:
        icon.addPixmap(QPixmap.fromImage(render(size, color, None)))
    return icon


@lru_cache(maxsize=128)
def color_chip(color: str, state: str | None = None, size: int = 16) -> QIcon:
    """A small rounded square in the profile colour, with a state dot when ``state`` is given."""
    icon = QIcon()
    for scale in (1, 2):
        px = size * scale
        image = QImage(px, px, QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(Qt.GlobalColor.transparent)
        p = QPainter(image)
        try:
            p.setRenderHint(QPainter.RenderHint.Antialiasing)
            base = QColor(color)
            p.setPen(QPen(base.darker(135), max(1.0, px / 16)))
            p.setBrush(base)
            inset = px * 0.1
            p.drawRoundedRect(
                QRectF(inset, inset, px - 2 * inset, px - 2 * inset), px * 0.22, px * 0.22
            )
            if state is not None:
                r = px * 0.2
                c = QPointF(px - r - px * 0.04, px - r - px * 0.04)
                p.setPen(Qt.PenStyle.NoPen)
                p.setBrush(QColor("#FFFFFF"))
                p.drawEllipse(c, r + px * 0.07, r + px * 0.07)
                p.setBrush(state_color(state))
                p.drawEllipse(c, r, r)
        finally:
            p.end()
        pixmap = QPixmap.fromImage(image)
        pixmap.setDevicePixelRatio(scale)
        icon.addPixmap(pixmap)
        # The same colours when shown on a disabled menu item (a profile's header line):
        # Qt greys disabled icons out, and a grey chip says nothing about the profile.
        icon.addPixmap(pixmap, QIcon.Mode.Disabled)
    return icon
