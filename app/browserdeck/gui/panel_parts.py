"""Small parts of the status panel: the profile list's rows and the banner strip."""

from __future__ import annotations

import re
from dataclasses import dataclass

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QPainter, QPalette
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
)

from browserdeck import states
from browserdeck.driverspecs import spec_or_default
from browserdeck.gui import icons
from browserdeck.results import ProfileStatus

NAME_ROLE = Qt.ItemDataRole.UserRole
STATUS_ROLE = Qt.ItemDataRole.UserRole + 1  # a ProfileRow


@dataclass(frozen=True)
class ProfileRow:
    """What the profile list draws for one profile: its status (None until the first
    refresh), the colour it is shown in, and whether it is the default profile."""

    status: ProfileStatus | None
    color: str
    default: bool


class ProfileDelegate(QStyledItemDelegate):
    """Two lines per profile: colour chip + name (+ default), then driver · state."""

    def sizeHint(
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> QSize:
        fm = option.fontMetrics
        return QSize(200, fm.height() * 2 + 18)

    def paint(
        self, p: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        row: ProfileRow | None = index.data(STATUS_ROLE)
        status = row.status if row is not None else None
        name = str(index.data(NAME_ROLE))
        p.save()
        try:
            style = option.widget.style() if option.widget else None
            if style is not None:
                style.drawPrimitive(
                    QStyle.PrimitiveElement.PE_PanelItemViewItem, option, p, option.widget
                )
            selected = bool(option.state & QStyle.StateFlag.State_Selected)
            pal = option.palette
            text_color = pal.color(
                QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
            )
            rect = QRect(option.rect).adjusted(10, 6, -8, -6)
            chip = QRect(rect.x(), rect.y() + 2, 14, 14)
            p.setRenderHint(QPainter.RenderHint.Antialiasing)
            color = QColor(row.color if row is not None else "#8A8F98")
            p.setPen(color.darker(130))
            p.setBrush(color)
            p.drawRoundedRect(chip, 3, 3)
            bold = QFont(option.font)
            bold.setBold(True)
            p.setFont(bold)
            p.setPen(text_color)
            fm = p.fontMetrics()
            x = chip.right() + 8
            p.drawText(x, rect.y() + fm.ascent(), name)
            if row is not None and row.default:
                small = QFont(option.font)
                small.setPointSizeF(option.font.pointSizeF() * 0.8)
                p.setFont(small)
                sfm = p.fontMetrics()
                px = x + fm.horizontalAdvance(name) + 6
                pill = QRect(px, rect.y() + 1, sfm.horizontalAdvance("default") + 10, sfm.height())
                p.setPen(Qt.PenStyle.NoPen)
                p.setBrush(QColor(127, 127, 127, 60))
                p.drawRoundedRect(pill, pill.height() / 2, pill.height() / 2)
                p.setPen(text_color)
                p.drawText(pill, Qt.AlignmentFlag.AlignCenter, "default")
            p.setFont(option.font)
            fm = p.fontMetrics()
            mark = states.mark(status) if status is not None else "stopped"
            dot = QRect(chip.x() + 3, rect.y() + fm.height() + 10, 8, 8)
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(icons.state_color(mark))
            p.drawEllipse(dot)
            sub = f"{status.driver} · {states.label(status)}" if status is not None else "…"
            muted = QColor(text_color)
            if not selected:
                muted.setAlpha(160)
            p.setPen(muted)
            p.drawText(
                QRect(x, rect.y() + fm.height() + 4, rect.width() - x, fm.height() + 4),
                Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                fm.elidedText(sub, Qt.TextElideMode.ElideRight, rect.right() - x),
            )
        finally:
            p.restore()


class Banner(QFrame):
    """A one-line message strip at the top of the panel (no tray, config problem, errors)."""

    actionTriggered = Signal()

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("banner")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(12, 8, 8, 8)
        self.text = QLabel()
        self.text.setWordWrap(True)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.button = QPushButton()
        self.button.clicked.connect(self.actionTriggered)
        layout.addWidget(self.text, 1)
        layout.addWidget(self.button)
        self.hide()

    def show_message(self, text: str, level: str = "info", action: str | None = None) -> None:
        colors = {
            "info": ("#E8F1FD", "#1B4F8C", "#B9D3F5"),
            "warning": ("#FFF6E0", "#6B4E00", "#F1D58A"),
            "error": ("#FDECEC", "#8C1B1B", "#F2B8B8"),
        }
        bg, fg, border = colors.get(level, colors["info"])
        self.setStyleSheet(
            f"#banner {{ background: {bg}; border: 1px solid {border}; "
            f"border-radius: 6px; }} #banner QLabel {{ color: {fg}; }}"
        )
        self.text.setText(text)
        self.button.setVisible(action is not None)
        self.button.setText(action or "")
        self.show()


def section(title: str) -> QLabel:
    label = QLabel(title)
    font = label.font()
    font.setBold(True)
    font.setPointSizeF(font.pointSizeF() * 1.05)
    label.setFont(font)
    label.setObjectName("sectionTitle")
    return label


# A start refused because another program holds the profile's port (launcher, gateway
# and relay say it so).
_PORT_BUSY = re.compile(
    r"\bport\b.*\b(is taken|in use|already listening|already answers)"
    r"|\b(is taken|in use|already listening|already answers)\b.*\bport\b"
)


def no_tab_message(status: ProfileStatus | None, name: str | None, running: bool) -> str:
    """What the screenshot pane says when there is no tab to show, and what to do."""
    if status is None:
        return "No profile selected."
    state = states.of(status)
    verb = states.toggle_text(status)
    if state in (states.State.CRASHED, states.State.ERROR, states.State.UNREACHABLE):
        what = (status.detail or states.label(status)).rstrip(".")
        if state == states.State.ERROR and _PORT_BUSY.search(what):
            # Starting again on the same port fails again: say what would help.
            return (
                f"{name}: {states.label(status)} — {what}. Pick another port for it in "
                "Settings (Profiles), or stop the program that holds this one, then "
                f"click “{verb}”."
            )
        return f"{name}: {states.label(status)} — {what}. Click “{verb}” to try again."
    if state == states.State.DISABLED:
        return "Browser control is disabled in Settings."
    if spec_or_default(status.driver).via_extension and not status.extension_connected:
        return (
            "Chrome is not connected. Click the browserdeck extension's icon in Chrome "
            "(pair it first from the tray: Pair extension…)."
        )
    if not running:
        return f"{name} is stopped. Click “{verb}” to see its pages."
    return "No open tabs. Open one above."


def detail_text(status: ProfileStatus | None, sites: str | None = None) -> str:
    """The lines under a profile's controls: its endpoint, pid, headless, what it says,
    and where agents may go in it (allowedOrigins / blockedOrigins)."""
    if status is None:
        return sites or ""
    spec = spec_or_default(status.driver)
    lines = [("Relay " if spec.via_extension else "CDP ") + (status.cdp_url or "").removeprefix("http://")]
    bits = [f"pid {status.pid}"] if status.pid else []
    if status.headless and spec.launches:
        bits.append("headless")
    if bits:
        lines.append(" · ".join(bits))
    if status.detail:
        lines.append(status.detail)
    if status.remote:
        lines.extend(states.remote_lines(status.remote))
    if sites:
        lines.append(sites)
    return "\n".join(lines)
