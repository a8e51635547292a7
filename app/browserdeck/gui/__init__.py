"""The desktop tray app: the only package that imports Qt (PySide6).

Everything here adapts the Qt-free core to a person: a tray icon and menu, a status
panel, a settings dialog and notifications. The GUI does no browser work itself; it
calls the front door (``browserdeck.deck.Deck``) in-process, on the same asyncio loop
(qasync's), reads what it shows from ``Deck``'s reads, and turns ``Deck.events`` into
Qt signals (``bridge.ServiceBridge``). Only ``TrayApp.start_service`` and its shutdown
hold the ``Service`` itself (the composition root's part).

Importing this package does not import Qt; ``browserdeck.gui.launch.run`` does.
"""

from __future__ import annotations
