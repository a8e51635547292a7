"""HTTP over the control API's Unix socket, with the standard library only.

For the CLI (client.py), a process per call: one small request and one answer, where
``http.client`` alone (it loads the ``email`` parser and ``ssl``) cost more than the
rest of the call's imports together. ``request`` speaks the little HTTP/1.1 that
takes: one request, ``Connection: close``, the answer read to its end. The stdio MCP
bridge streams event streams and uses ``http.client`` (cli.bridge.UnixHTTPConnection).
"""

from __future__ import annotations

# The C module under ``socket``: ``socket.py`` wraps it in enums and selectors, ~4 ms of a
# CLI call's start-up here, for a connect, a send and some reads it does not need.
# Its errors are the same built-in ones (FileNotFoundError,
# ConnectionRefusedError, TimeoutError).
import _socket

# The longest answer a CLI call reads (a full-page screenshot as base64, a PDF).
MAX_RESPONSE = 512 * 2**20


class HttpError(Exception):
    """The answer was not HTTP we can read (cut short, malformed, too big)."""


def request(
    path: str,
    method: str,
    target: str,
    *,
    headers: dict[str, str] | None = None,
    body: bytes | None = None,
    timeout: float | None = None,
) -> tuple[int, dict[str, str], bytes]:
    """One request over the Unix socket at ``path``: (status, headers lowercased, body)."""
    lines = [f"{method} {target} HTTP/1.1", "Host: localhost", "Connection: close"]
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    if body is not None:
        lines.append(f"Content-Length: {len(body)}")
    data = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (body or b"")
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        sock.connect(path)
        sock.sendall(data)
        chunks: list[bytes] = []
        size = 0
        while chunk := sock.recv(262144):
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_RESPONSE:
                raise HttpError(f"the answer is over {MAX_RESPONSE // 2**20} MiB")
    finally:
        sock.close()
    raw = b"".join(chunks)
    head, sep, rest = raw.partition(b"\r\n\r\n")
    if not sep:
        raise HttpError("the answer ended before its headers did")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    parts = status_line.split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit():
        raise HttpError(f"not an HTTP answer: {status_line[:80]!r}")
    answer: dict[str, str] = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        answer[name.strip().lower()] = value.strip()
    if "chunked" in answer.get("transfer-encoding", "").lower():
        rest = _dechunk(rest)
    elif answer.get("content-length", "").isdigit():
        rest = rest[: int(answer["content-length"])]
    return int(parts[1]), answer, rest


def _dechunk(data: bytes) -> bytes:
    out: list[bytes] = []
    pos = 0
    while True:
        end = data.find(b"\r\n", pos)
        if end < 0:
            raise HttpError("a chunked answer was cut short")
        size = int(data[pos:end].split(b";")[0] or b"0", 16)
        if size == 0:
            return b"".join(out)
        out.append(data[end + 2 : end + 2 + size])
        pos = end + 2 + size + 2
