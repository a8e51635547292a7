from __future__ import annotations

import http.server
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

# Ports this test process has handed out. The OS may give the same ephemeral port to two
# back-to-back bind(0) calls once the first socket is closed, and a config that asks for
# three ports then gets one port twice (a "port used twice" refusal, seen as a flake).
_HANDED: set[int] = set()


def free_port() -> int:
    """A port that was free a moment ago on 127.0.0.1 (the OS picks it), never one this
    process has handed out before."""
    for _ in range(100):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind(("127.0.0.1", 0))
            port = int(sock.getsockname()[1])
        if port not in _HANDED:
            _HANDED.add(port)
            return port
    raise RuntimeError("the OS kept handing out ports already used by this test run")


@contextmanager
def serve_http(handler: type[http.server.BaseHTTPRequestHandler], name: str) -> Iterator[str]:
    """A threaded HTTP server of ``handler`` on a free loopback port; its base URL."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, name=name, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
