"""The tray's way of asking the user a yes/no question for the service (door/logins.py).

The composition root hands ``ask_user`` to the service it builds for the tray
(``cli.gui.cmd_tray``): a question box on top of other windows, No by default. The call
that asked waits for the answer (the asker bounds the wait; a box left unanswered is
closed when it gives up).
"""

from __future__ import annotations

import asyncio

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox


async def ask_user(question: str) -> bool:
    """True when the user clicks Yes."""
    box = QMessageBox(
        QMessageBox.Icon.Question,
        "browserdeck — allow?",
        question,
        QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
    )
    box.setObjectName("askUser")
    box.setDefaultButton(QMessageBox.StandardButton.No)
    box.setWindowFlag(Qt.WindowType.WindowStaysOnTopHint)
    answered: asyncio.Future[bool] = asyncio.get_running_loop().create_future()

    def done(_result: int) -> None:
        if not answered.done():
            yes = box.clickedButton() is box.button(QMessageBox.StandardButton.Yes)
            answered.set_result(yes)

    box.finished.connect(done)
    box.open()
    try:
        return await answered
    finally:
        box.finished.disconnect(done)
        box.close()
        box.deleteLater()
