"""What the tray app keeps across restarts: the panel's size and splitters, and the
recent activity (the rows the panel lists), in ``<state>/panel.json``.

Read once at start, written at the end (the app's shutdown) and when the panel is
hidden; a file that does not parse is ignored (the panel opens at its default size,
with an empty activity list), never an error.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from typing import Any

from PySide6.QtWidgets import QSplitter, QWidget

from browserdeck.gui.model import Activity
from browserdeck.util import paths
from browserdeck.util.files import write_atomic

log = logging.getLogger(__name__)

_FIELDS = {f.name for f in dataclasses.fields(Activity)}


def _path() -> str:
    return str(paths.state_dir() / "panel.json")


def _read() -> dict[str, Any]:
    try:
        with open(_path(), encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write(**changes: Any) -> None:
    data = _read()
    data.update(changes)
    try:
        write_atomic(paths.state_dir() / "panel.json", json.dumps(data))
    except OSError:
        log.warning("could not keep the panel's state", exc_info=True)


def panel() -> dict[str, Any]:
    """``size`` ([width, height]) and ``splitters`` (their sizes), if kept."""
    found = _read().get("panel")
    return found if isinstance(found, dict) else {}


def save_panel(size: list[int], splitters: list[list[int]]) -> None:
    _write(panel={"size": size, "splitters": splitters})


def restore_layout(window: QWidget, splitters: list[QSplitter]) -> None:
    """Give ``window`` and its ``splitters`` the sizes kept last time (``panel()``)."""
    kept = panel()
    size = kept.get("size")
    if isinstance(size, list) and len(size) == 2 and all(isinstance(n, int) for n in size):
        window.resize(max(size[0], 640), max(size[1], 480))  # the window manager fits it
    sizes = kept.get("splitters")
    if isinstance(sizes, list) and len(sizes) == len(splitters):
        for splitter, sized in zip(splitters, sizes, strict=True):
            if isinstance(sized, list) and len(sized) == splitter.count() and all(
                isinstance(n, int) and n > 0 for n in sized
            ):
                splitter.setSizes(sized)


def keep_layout(window: QWidget, splitters: list[QSplitter]) -> None:
    save_panel([window.width(), window.height()], [s.sizes() for s in splitters])


def activity() -> list[Activity]:
    rows = _read().get("activity")
    out = []
    for row in rows if isinstance(rows, list) else []:
        if not isinstance(row, dict):
            continue
        try:
            out.append(Activity(**{k: v for k, v in row.items() if k in _FIELDS}))
        except TypeError:
            continue  # a row of another version: left out
    return out


def save_activity(rows: list[Activity]) -> None:
    _write(activity=[dataclasses.asdict(row) for row in rows])
