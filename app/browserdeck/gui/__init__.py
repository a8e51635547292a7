"""The desktop tray app: the only package that imports Qt (PySide6).

Everything here adapts the Qt-free core (``browserdeck.service``) to a person:
a tray icon and menu, a status panel, a settings dialog and notifications. The
GUI does no browser work itself; it calls the service in-process, on the same
asyncio loop (qasync's), and turns ``service.events`` into Qt signals
(``bridge.ServiceBridge``).

Importing this package does not import Qt; ``browserdeck.gui.app.run`` does.
"""

from __future__ import annotations
