"""One tray per user (per BROWSERDECK_HOME): a second launch shows the running one's panel.

The running service is found the way the CLI finds it (``paths.instance_file()``
plus ``GET /health`` through ``client.py``). The running *tray* also listens on a QLocalServer whose
name is derived from the state directory, and answers one-line commands:
``show-panel``, ``show-settings``, ``status`` (JSON) and ``quit``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

from browserdeck.util import paths

log = logging.getLogger(__name__)

COMMANDS = ("show-panel", "show-settings", "status", "quit")


def server_name() -> str:
    """Unique per user and BROWSERDECK_HOME (the state dir's path), short enough for sockets."""
    digest = hashlib.sha256(str(paths.state_dir()).encode("utf-8")).hexdigest()[:16]
    return f"browserdeck-gui-{digest}"


def running_service(timeout: float = 1.5) -> dict[str, Any] | None:
    """The running service's instance record if its /health answers, else None."""
    try:
        data = json.loads(paths.instance_file().read_text(encoding="utf-8"))
        url = str(data["url"]).rstrip("/")
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if data.get("pid") == os.getpid():
        return None
    # Out of process: through the one API client, which also refuses a server that is not
    # ours (another user's program on the port). /health needs no token.
    from browserdeck.client import ApiClient, ClientError

    try:
        health = ApiClient(url, token="", timeout=timeout).get("/health")
    except ClientError:
        return None
    return dict(data) if isinstance(health, dict) and health.get("ok") else None


def send_command(command: str, timeout_ms: int = 3000) -> str | None:
    """Send a command to the running tray; its one-line answer, or None if none answers."""
    sock = QLocalSocket()
    sock.connectToServer(server_name())
    if not sock.waitForConnected(timeout_ms):
        return None
    try:
        sock.write((command + "\n").encode("utf-8"))
        # flush() may write everything at once, and then waitForBytesWritten() has
        # nothing to wait for and returns False: only wait while bytes are pending.
        sock.flush()
        if sock.bytesToWrite() and not sock.waitForBytesWritten(timeout_ms):
            return None
        buf = b""
        while b"\n" not in buf:
            if not sock.waitForReadyRead(timeout_ms):
                return None
            buf += bytes(sock.readAll().data())
        return buf.split(b"\n", 1)[0].decode("utf-8", "replace")
    finally:
        sock.disconnectFromServer()


class InstanceServer(QObject):
    """Listens for commands from second launches; ``handler`` answers each one."""

    commandReceived = Signal(str)

    def __init__(self, handler: Any, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._handler = handler
        self.server = QLocalServer(self)
        self.server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self.server.newConnection.connect(self._on_connection)

    def listen(self) -> bool:
        name = server_name()
        if not self.server.listen(name):
            # A socket left by a crashed run: nothing answered send_command, so remove it.
            QLocalServer.removeServer(name)
            if not self.server.listen(name):
                log.warning("second-launch server not listening: %s", self.server.errorString())
                return False
        return True

    def close(self) -> None:
        self.server.close()

    def _on_connection(self) -> None:
        while self.server.hasPendingConnections():
            sock = self.server.nextPendingConnection()
            sock.readyRead.connect(lambda s=sock: self._on_ready(s))
            sock.disconnected.connect(sock.deleteLater)

    def _on_ready(self, sock: QLocalSocket) -> None:
        if not sock.canReadLine():
            return
        command = bytes(sock.readLine().data()).decode("utf-8", "replace").strip()
        if command not in COMMANDS:
            answer = json.dumps({"error": f"unknown command {command!r}"})
        else:
            try:
                answer = str(self._handler(command))
            except Exception as exc:  # answer something: the caller is waiting
                log.exception("second-launch command %s", command)
                answer = json.dumps({"error": str(exc)})
        sock.write((answer + "\n").encode("utf-8"))
        sock.flush()
        self.commandReceived.emit(command)
