"""The panel's *Keep* mark on a tab: a tab an agent opened closes when that agent's
session ends, unless the user marked it to keep (sessions.py in the core).

The mark is set from the tab list's context menu, and the Agent column says it.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QPoint
from PySide6.QtWidgets import QMenu, QTreeWidget

KEEP_TEXT = "Keep this tab when its agent ends"
KEEP_TIP = (
    "A tab an agent opened closes when the agent's session ends. Kept tabs stay open "
    "(the tab's own page is not affected)."
)


def agent_column(holder: str, kept: bool) -> str:
    """The Agent column's text: who holds the tab, and whether it is kept."""
    if not kept:
        return holder
    return f"{holder} · kept" if holder else "kept"


def install(
    tree: QTreeWidget,
    target_of: Callable[[QPoint], str | None],
    is_kept: Callable[[str], bool],
    set_kept: Callable[[str, bool], object],
) -> None:
    """A context menu on ``tree`` whose one checkable action toggles the keep mark of
    the tab under the pointer (``target_of`` says which tab a point is on)."""
    from PySide6.QtCore import Qt

    tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)

    def show(point: QPoint) -> None:
        target = target_of(point)
        if target is None:
            return
        menu = QMenu(tree)
        menu.setObjectName("tabMenu")
        action = menu.addAction(KEEP_TEXT)
        action.setObjectName("keepTab")
        action.setCheckable(True)
        action.setChecked(is_kept(target))
        action.setToolTip(KEEP_TIP)
        action.toggled.connect(lambda on: set_kept(target, on))
        menu.popup(tree.viewport().mapToGlobal(point))
        menu.aboutToHide.connect(menu.deleteLater)

    tree.customContextMenuRequested.connect(show)
