"""A listening stranger: a program between a client and a real endpoint that passes
every byte on and keeps what the clients sent it (a port squatter that plays along).

``Stranger(port, target_port)`` listens on 127.0.0.1:``port`` and pipes each
connection to 127.0.0.1:``target_port``; ``heard()`` is everything clients sent it.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any


class Stranger:
    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.port = 0
        self._heard = bytearray()
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Future[Any]] = set()

    async def start(self) -> Stranger:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = int(self._server.sockets[0].getsockname()[1])
        return self

    def heard(self) -> bytes:
        return bytes(self._heard)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            writer.close()
            return

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter, keep: bool) -> None:
            with contextlib.suppress(OSError, asyncio.CancelledError):
                while data := await src.read(65536):
                    if keep:
                        self._heard.extend(data)
                    dst.write(data)
                    await dst.drain()
            with contextlib.suppress(OSError):
                dst.close()

        task = asyncio.gather(pipe(reader, up_writer, True), pipe(up_reader, writer, False))
        self._tasks.add(task)
        with contextlib.suppress(asyncio.CancelledError):
            await task

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(BaseException):
                await task
        if self._server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 5)
