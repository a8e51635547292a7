"""The agent engine: Playwright over CDP, snapshots with element refs, actions, screenshots.

See docs/engine.md for the ref rules, what each option does and the error table.
"""

from __future__ import annotations

from browserdeck.engine.engine import Engine
from browserdeck.engine.options import (
    Act,
    ClickAct,
    CloseAct,
    ConsoleOptions,
    DialogOptions,
    DragAct,
    EvaluateAct,
    FileChooserOptions,
    FillAct,
    FillField,
    HoverAct,
    NavigateOptions,
    OfflineOptions,
    PdfOptions,
    PressAct,
    ResizeAct,
    ScreenshotOptions,
    ScrollIntoViewAct,
    SelectAct,
    SnapshotOptions,
    TypeAct,
    WaitAct,
)

__all__ = [
    "Act",
    "ClickAct",
    "CloseAct",
    "ConsoleOptions",
    "DialogOptions",
    "DragAct",
    "Engine",
    "EvaluateAct",
    "FileChooserOptions",
    "FillAct",
    "FillField",
    "HoverAct",
    "NavigateOptions",
    "OfflineOptions",
    "PdfOptions",
    "PressAct",
    "ResizeAct",
    "ScreenshotOptions",
    "ScrollIntoViewAct",
    "SelectAct",
    "SnapshotOptions",
    "TypeAct",
    "WaitAct",
]
