"""The agent engine: Playwright over CDP, snapshots with element refs, actions, screenshots.

See docs/engine.md for the ref rules, what each option does and the error table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

# Lazy: the engine (Playwright's client, ~90 ms of imports) loads on first use of
# ``Engine``, so that a module that needs only the request models (``engine.options``)
# or the snapshot text does not pull it in; `serve` answers MCP's `initialize` before the
# engine is imported (issue 14).
if TYPE_CHECKING:
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


def __getattr__(name: str) -> Any:
    if name == "Engine":
        from browserdeck.engine.engine import Engine

        return Engine
    if name in __all__:
        from browserdeck.engine import options

        return getattr(options, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
