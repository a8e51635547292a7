"""A tab as it is now, while someone watches: the browser's screencast, not polling.

``LiveView`` opens a CDP connection of its own to the profile's endpoint (our gateway for
managed browsers, the relay for your Chrome, a remote endpoint), attaches to the tab and
asks for ``Page.startScreencast``: Chromium sends a JPEG frame whenever the page
repaints, and nothing while it does not. Each frame is acknowledged no sooner than
``1 / fps`` after the previous one, which is how the rate is capped: a busy page costs at
most ``fps`` frames a second, a still one none. Nothing runs unless a view is open: the
panel opens one while it shows a tab and closes it when it is hidden (``stop``).

The connection is the view's own, so it goes around the Playwright driver (no frame is
copied through another process) and never touches the engine's session of the tab.
While the user has taken the browser over, ``click``, ``scroll``, ``key`` and ``text`` send
their input to the page through the same connection (``Input.*``), which is how a
headless browser is used by hand: the panel's live view is its window.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from browserdeck.chrome.cdp import CDPClient
from browserdeck.util import aio

log = logging.getLogger(__name__)

FPS = 8.0
MAX_WIDTH, MAX_HEIGHT = 1280, 800
QUALITY = 60


@dataclass(frozen=True)
class Frame:
    """One screencast frame: a JPEG (base64) and the page size it shows, in CSS pixels."""

    jpeg: str
    width: float  # the page's viewport, CSS pixels
    height: float
    time: float


class LiveView:
    """One tab's screencast to ``on_frame`` until ``stop()``."""

    def __init__(
        self,
        cdp_url: str,
        target_id: str,
        headers: dict[str, str],
        on_frame: Callable[[Frame], None],
        *,
        fps: float = FPS,
    ) -> None:
        self.cdp_url, self.target_id, self.headers = cdp_url, target_id, headers
        self.on_frame = on_frame
        self.interval = 1.0 / max(fps, 0.5)
        self.frames = 0
        self._client: CDPClient | None = None
        self._session: str | None = None
        self._last = 0.0
        self._tasks = aio.Tasks()
        self._stopped = False

    async def start(self) -> None:
        client = self._client = await CDPClient.connect(self.cdp_url, headers=self.headers)
        try:
            attached = await client.send(
                "Target.attachToTarget", {"targetId": self.target_id, "flatten": True}
            )
            self._session = str(attached["sessionId"])
            client.on("Page.screencastFrame", self._on_frame)
            await client.send(
                "Page.startScreencast",
                {"format": "jpeg", "quality": QUALITY, "maxWidth": MAX_WIDTH,
                 "maxHeight": MAX_HEIGHT, "everyNthFrame": 1},
                session_id=self._session,
            )
        except BaseException:
            await self.stop()
            raise

    @property
    def running(self) -> bool:
        return not self._stopped and self._client is not None and not self._client.closed

    def _on_frame(self, params: dict[str, Any], session_id: str | None) -> None:
        if session_id != self._session or self._stopped:
            return
        self.frames += 1
        meta = params.get("metadata") or {}
        frame = Frame(
            str(params.get("data") or ""),
            float(meta.get("deviceWidth") or 0),
            float(meta.get("deviceHeight") or 0),
            time.time(),
        )
        try:
            self.on_frame(frame)
        except Exception:
            log.exception("live view: a frame could not be shown")
        # The next frame comes once this one is acknowledged: no sooner than the rate.
        now = time.monotonic()
        delay = max(0.0, self._last + self.interval - now)
        self._last = now + delay
        ack = params.get("sessionId")
        self._tasks.spawn(self._ack(ack, delay), name=f"live-ack-{self.target_id[:8]}")

    async def _ack(self, ack: Any, delay: float) -> None:
        if delay:
            await asyncio.sleep(delay)
        await self._send("Page.screencastFrameAck", {"sessionId": ack})

    async def _send(self, method: str, params: dict[str, Any]) -> None:
        client = self._client
        if client is None or client.closed or self._stopped:
            return
        try:
            await client.send(method, params, session_id=self._session)
        except Exception as exc:  # the tab or browser went: the view just ends
            log.debug("live view: %s failed: %s", method, exc)

    # --- input while the user has taken over ----------------------------------------
    async def click(self, x: float, y: float, *, button: str = "left", count: int = 1) -> None:
        for kind in ("mousePressed", "mouseReleased"):
            await self._send(
                "Input.dispatchMouseEvent",
                {"type": kind, "x": x, "y": y, "button": button, "clickCount": count},
            )

    async def scroll(self, x: float, y: float, dx: float, dy: float) -> None:
        await self._send(
            "Input.dispatchMouseEvent",
            {"type": "mouseWheel", "x": x, "y": y, "deltaX": dx, "deltaY": dy},
        )

    async def key(self, key: str, code: int = 0, text: str = "") -> None:
        """A key: its DOM name ("Enter"), Windows key code (13) and the text it types."""
        down: dict[str, Any] = {"type": "keyDown" if text else "rawKeyDown", "key": key,
                                "windowsVirtualKeyCode": code}
        if text:
            down["text"] = text
        await self._send("Input.dispatchKeyEvent", down)
        await self._send(
            "Input.dispatchKeyEvent", {"type": "keyUp", "key": key, "windowsVirtualKeyCode": code}
        )

    async def text(self, text: str) -> None:
        await self._send("Input.insertText", {"text": text})

    async def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        await self._tasks.cancel_all()
        client, self._client = self._client, None
        if client is None:
            return
        if not client.closed and self._session is not None:
            # Gone already? Closing the connection ends it too.
            with contextlib.suppress(Exception):
                await asyncio.wait_for(
                    client.send("Page.stopScreencast", session_id=self._session), 2.0
                )
        await client.close()
