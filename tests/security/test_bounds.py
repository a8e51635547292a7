"""Issue 10 item 7: bounded work. A body-size limit answered (413) before parsing, a tab
limit per profile (maxTabs), and caps on URL length and list sizes. Real service, real
Chromium, real sockets. (The aria-snapshot deadline is the reliability issue's.)
"""

from __future__ import annotations

import asyncio
import socket

from browserdeck.api.security import MAX_BODY_BYTES
from browserdeck.policy import urls
from tests.support.service import running_service


def _send_head_then_read(port: int, head: bytes, body: bytes = b"") -> str:
    """Send the request head (and a little body), then read whatever the server answers."""
    with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
        sock.sendall(head + body)
        chunks = []
        while True:
            try:
                data = sock.recv(65536)
            except ConnectionResetError:
                break
            if not data:
                break
            chunks.append(data)
            if b"\r\n\r\n" in b"".join(chunks) and b"body_too_large" in b"".join(chunks):
                break
    return b"".join(chunks).decode("latin-1")


async def test_body_limit_answers_413_before_reading() -> None:
    async with running_service() as (service, _client):
        port = service.control_port
        auth = f"Authorization: Bearer {service.api_token}\r\n"
        # A declared 200 MB body: refused from the head alone (the body never comes).
        head = (
            f"POST /tabs/open HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{auth}"
            f"Content-Type: application/json\r\nContent-Length: {200 * 2**20}\r\n\r\n"
        ).encode()
        reply = await asyncio.to_thread(_send_head_then_read, port, head, b'{"url": "')
        assert reply.startswith("HTTP/1.1 413"), reply[:300]
        assert "body_too_large" in reply and "MiB" in reply

        # A chunked body that grows past the limit: read up to it, then 413.
        head = (
            f"POST /tabs/open HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{auth}"
            "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        ).encode()
        piece = b"x" * (1 << 20)
        chunk = f"{len(piece):x}\r\n".encode() + piece + b"\r\n"
        body = chunk * (MAX_BODY_BYTES // len(piece) + 2) + b"0\r\n\r\n"
        reply = await asyncio.to_thread(_send_head_then_read, port, head, body)
        assert reply.startswith("HTTP/1.1 413"), reply[:300]


async def test_max_tabs_url_length_and_list_caps() -> None:
    async with running_service(tweak=lambda c: setattr(c, "max_tabs", 3)) as (_s, client):
        opened = []
        for _ in range(5):
            resp = await client.post("/tabs/open", json={"url": "about:blank"})
            if resp.status_code != 200:
                break
            opened.append(resp.json()["targetId"])
        assert len((await client.get("/tabs")).json()["tabs"]) == 3
        assert resp.status_code == 409, resp.text
        error = resp.json()["error"]
        assert error["code"] == "too_many_tabs" and "maxTabs" in error["message"]
        # Closing one makes room again.
        assert (await client.delete(f"/tabs/{opened[-1]}")).status_code == 200
        assert (await client.post("/tabs/open", json={"url": "about:blank"})).status_code == 200

        too_long = "https://example.com/?" + "a" * urls.MAX_URL_CHARS
        resp = await client.post("/tabs/open", json={"url": too_long})
        assert resp.status_code == 400 and resp.json()["error"]["code"] == "url_too_long"
        resp = await client.post("/navigate", json={"url": too_long})
        assert resp.status_code == 400

        resp = await client.post(
            "/act", json={"kind": "select", "ref": "e1", "values": ["x"] * 5000}
        )
        assert resp.status_code == 400 and "at most" in resp.text, resp.text
        resp = await client.post("/hooks/file-chooser", json={"paths": ["/tmp/x"] * 1000})
        assert resp.status_code == 400 and "at most" in resp.text, resp.text
