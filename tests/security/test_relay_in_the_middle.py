"""Issue 31 item 1: nobody in the middle of the extension relay.

Every extension profile's relay has the same token. Another local user (``nobody``,
through setpriv) binds the port of an extension profile that is not running (``work``)
and pipes whatever connects there to the relay of one that is (``chrome``). The real
extension in Chromium, paired with ``work``, connects to that port. With proofs that
bound neither port nor profile, both checked through the pipe: the relay reported the
extension connected, and the program in the middle read the shared tabs' titles and URLs
and could send the extension commands. Bound to the relay's port and profile, the
``chrome`` relay's proof does not verify for an extension that dialled ``work``'s port,
so the extension sends nothing but its first nonce, and the relay refuses it too.
"""

from __future__ import annotations

import asyncio
import base64
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from browserdeck.relay.server import RelayServer
from browserdeck.secrets.tokens import new_token
from tests.relay.harness import Site, launch_ext_browser, start_site
from tests.security.spawn import AS_NOBODY, start_ready
from tests.support.net import free_port

pytestmark = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0 or shutil.which("setpriv") is None,
    reason="needs root and setpriv to run the program in the middle as a second user (nobody)",
)

# The program in the middle: listens on argv[1], pipes each connection to argv[2], and
# prints every chunk either way (base64, one per line) for the test to read afterwards.
PIPE = r"""
import base64, socket, sys, threading
listen, target = int(sys.argv[1]), int(sys.argv[2])
server = socket.socket(); server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", listen)); server.listen(16); print("ready", flush=True)
lock = threading.Lock()
count = 0
def pipe(src, dst, tag):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            with lock:
                print(tag, base64.b64encode(data).decode(), flush=True)
            dst.sendall(data)
    except OSError:
        pass
    for s in (src, dst):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
while True:
    conn, _ = server.accept()
    count += 1
    try:
        up = socket.create_connection(("127.0.0.1", target))
    except OSError:
        conn.close(); continue
    threading.Thread(target=pipe, args=(conn, up, f"ext>relay#{count}"), daemon=True).start()
    threading.Thread(target=pipe, args=(up, conn, f"relay>ext#{count}"), daemon=True).start()
"""


class InTheMiddle:
    def __init__(self, proc: subprocess.Popen[str], port: int) -> None:
        self.proc = proc
        self.port = port

    def heard(self) -> str:
        """Everything that went through, both ways (after stopping the program): each
        connection's HTTP head, then its WebSocket messages unmasked, as the program in
        the middle can read them."""
        self.proc.kill()
        out, _ = self.proc.communicate(timeout=10)
        streams: dict[str, bytearray] = {}
        for line in out.splitlines():
            tag, _, data = line.partition(" ")
            if ">" in tag:
                streams.setdefault(tag, bytearray()).extend(base64.b64decode(data))
        return "\n".join(f"[{tag}] {readable(bytes(raw))}" for tag, raw in streams.items())


def readable(raw: bytes) -> str:
    """An HTTP head, then WebSocket frames decoded (client frames are masked)."""
    head, sep, rest = raw.partition(b"\r\n\r\n")
    if not sep:
        return raw.decode("latin-1")
    out = [head.decode("latin-1")]
    while len(rest) >= 2:
        opcode, size, masked = rest[0] & 0x0F, rest[1] & 0x7F, rest[1] & 0x80
        at = 2
        if size == 126:
            size, at = int.from_bytes(rest[2:4], "big"), 4
        elif size == 127:
            size, at = int.from_bytes(rest[2:10], "big"), 10
        key = rest[at : at + 4] if masked else b""
        at += 4 if masked else 0
        payload = bytes(rest[at : at + size])
        if masked:
            payload = bytes(b ^ key[i % 4] for i, b in enumerate(payload))
        out.append(f"<op {opcode}> " + payload.decode("utf-8", "replace"))
        rest = rest[at + size :]
    return "\n".join(out)


@pytest.fixture
def site() -> Iterator[Site]:
    s = start_site()
    yield s
    s.server.shutdown()
    s.server.server_close()


def start_in_the_middle(listen: int, target: int) -> InTheMiddle:
    proc = start_ready(AS_NOBODY, PIPE, str(listen), str(target), what="the program in the middle")
    return InTheMiddle(proc, listen)


async def test_a_program_on_another_profiles_port_cannot_sit_in_the_middle(
    chromium_path: str, tmp_path: Path, site: Site
) -> None:
    token = new_token()  # one relay token for every extension profile, as browserdeck has
    running = RelayServer(port=0, token=token, profile="chrome")
    await running.start()
    work_port = free_port()  # the "work" profile's relay port: browserdeck is not on it
    middle = start_in_the_middle(work_port, running.port)
    browser = await launch_ext_browser(chromium_path, tmp_path / "ext-chromium", running)
    heard = ""
    try:
        tab_id, _ = await browser.open_tab(site.url("/page?title=PRIVATE-BANK-TAB"))
        await browser.pair(port=work_port, token=token, profile="work")
        await browser.share(tab_id)
        state: dict[str, object] = {}
        for _ in range(300):
            state = await browser.sw_eval("browserdeck.snapshot()")
            if state["status"] == "error" or state["connected"]:
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(2.5)  # a few more attempts through the pipe
        state = await browser.sw_eval("browserdeck.snapshot()")
        assert state["connected"] is False, state
        assert not running.extension_connected
        assert running.relay.link is None
    finally:
        await browser.close()
        heard = middle.heard()
        await running.stop()
    # The pipe was used (the extension did dial through it) and carried nothing but the
    # handshake's first messages: no tab, no title, no URL, no command.
    assert "/extension" in heard and '"method":"auth"' in heard, heard[:2000]
    assert "PRIVATE-BANK-TAB" not in heard and site.url("/page") not in heard, heard[:4000]
    assert '"hello"' not in heard and '"authProof"' not in heard, heard[:4000]
    assert token not in heard
