"""The tray's approval window alone, on a real X display (``python -m`` this module): for
tests/gui/test_approval_focus_xvfb.py. It asks one question and prints, one JSON line
each: where the window and its buttons are once shown, then the answer it got."""

from __future__ import annotations

import asyncio
import json
import sys

from PySide6.QtCore import QPoint
from PySide6.QtWidgets import QApplication, QWidget

from browserdeck.door.approval.asking import Question
from browserdeck.gui.approval import TrayAsker
from browserdeck.gui.qtloop import QtEventLoop


def _centre(widget: QWidget) -> list[int]:
    point = widget.mapToGlobal(QPoint(widget.width() // 2, widget.height() // 2))
    return [point.x(), point.y()]


async def main() -> None:
    asker = TrayAsker()
    question = Question(
        agent="agent x via MCP",
        agent_key="x",
        session=None,
        profile="agent",
        target_id="",
        action='click button "Pay $49.00"',
        why='its name says "pay"',
        url="https://shop.example/checkout",
        origin="https://shop.example",
        site="shop.example",
        amounts=("$49.00",),
        timeout=120,
    )
    asking = asyncio.ensure_future(asker.ask(question))
    for _ in range(200):  # shown, and mapped by the window manager
        await asyncio.sleep(0.05)
        window = asker.window
        handle = window.windowHandle() if window is not None else None
        if window is not None and handle is not None and handle.isExposed():
            break
    assert window is not None
    await asyncio.sleep(0.3)
    print(
        json.dumps(
            {
                "window": int(window.winId()),
                "once": _centre(window.allow_once),
                "deny": _centre(window.deny),
            }
        ),
        flush=True,
    )
    print(json.dumps({"answer": await asyncio.wait_for(asking, 60)}), flush=True)
    asker.close()


if __name__ == "__main__":
    app = QApplication(sys.argv[:1])
    loop = QtEventLoop(app)
    asyncio.set_event_loop(loop)
    with loop:
        loop.run_until_complete(main())
