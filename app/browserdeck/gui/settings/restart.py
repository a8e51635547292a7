"""What saving settings does to running browsers: the question before (restart now, at
their next start, or not at all; the dialog's Save asks ``Deck.restarts`` first), and the
words after (``saved_words``, the "Settings saved" notice)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QWidget

from browserdeck.gui.settings.fields import label_of

if TYPE_CHECKING:
    from browserdeck.reconfig import Applied, Restart


def ask_restart(
    parent: QWidget, needs: list[Restart], chosen: Callable[[bool | None], None]
) -> QMessageBox:
    """Open (never exec) the question; ``chosen(True)``: restart now, ``False``: at the
    next start, ``None``: cancel."""
    box = QMessageBox(parent)
    box.setObjectName("restartBox")
    box.setIcon(QMessageBox.Icon.Question)
    box.setWindowTitle("Restart browsers?")
    many = len(needs) > 1
    box.setText(
        f"{'These browsers take' if many else 'A browser takes'} the new settings only "
        "when it starts again."
    )
    lines = []
    for need in needs:
        changed = ", ".join(label_of(key) for key in need.keys)
        tabs = (
            f"its {need.tabs} open tab{'s' if need.tabs != 1 else ''} would close"
            if need.tabs
            else "no tab is open"
        )
        lines.append(f"• {need.profile}: {tabs} ({changed} changed)")
    them, are = ("them", "they are") if many else ("it", "it is")
    box.setInformativeText(
        "\n".join(lines) + f"\n\nRestart now, or keep {them} running as {are} until the next start?"
    )
    now = box.addButton("Restart now", QMessageBox.ButtonRole.AcceptRole)
    later = box.addButton("At next start", QMessageBox.ButtonRole.ActionRole)
    box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(later)
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    box.buttonClicked.connect(
        lambda button: chosen(True if button is now else False if button is later else None)
    )
    box.open()
    return box


def saved_words(applied: Applied) -> str:
    """What saving did to running browsers, in words (the "Settings saved" notice)."""
    said = []
    if applied.restarted:
        said.append(f"{_names(applied.restarted)} restarted with the new settings.")
    if applied.deferred:
        said.append(
            f"{_names(applied.deferred)} keep{'s' if len(applied.deferred) == 1 else ''} "
            "running as before; the new settings apply at the next start."
        )
    if applied.recolored:
        said.append(
            f"The window of {_names(applied.recolored)} takes its new colour at its next "
            "start; its tabs stay open."
        )
    return " ".join(said) or "Saved."


def _names(names: tuple[str, ...]) -> str:
    quoted = [f"“{n}”" for n in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]
