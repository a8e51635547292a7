"""HTTP over the control API's Unix socket, with the standard library only.

Shared by the CLI (client.py) and the stdio MCP bridge (mcp_bridge.py): both are a
process per call, so they import nothing heavier than ``http.client``.
"""

from __future__ import annotations

import http.client
import socket


class UnixHTTPConnection(http.client.HTTPConnection):
    """HTTP over a Unix socket; ``Host: localhost``, as the service's guard expects."""

    def __init__(self, path: str, timeout: float | None = None) -> None:
        super().__init__("localhost", timeout=timeout)
        self.socket_path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            sock.connect(self.socket_path)
        except OSError:
            sock.close()
            raise
        self.sock = sock
