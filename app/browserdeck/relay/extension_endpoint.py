"""The relay's ``/extension`` side: one browser's browserdeck extension at a time.

The extension's WebSocket must come from the pinned ``chrome-extension://<id>`` origin
(gate.py) and prove it knows the relay token, after the relay proved it first
(protocol.auth_proof; the token is never on the wire). Both proofs are bound to this
relay's port and profile, so an extension paired with another profile, or reached
through a program on another port, is refused. Then the extension says hello
with its shared tabs, and everything it sends goes to the CDP routing (core.py). A
heartbeat drops an extension that has gone silent; the same browser reconnecting (its
worker restarted) replaces its old connection, another browser is refused.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Callable
from typing import Any

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Response

from browserdeck.policy import guard
from browserdeck.relay.core import Relay
from browserdeck.relay.gate import RequestGate
from browserdeck.relay.http import error_body, json_response
from browserdeck.relay.link import ExtensionLink
from browserdeck.relay.protocol import (
    AUTH_NONCE_BYTES,
    AUTH_TIMEOUT,
    PROTOCOL_VERSION,
    CdpError,
    auth_proof,
    frame,
    proof_ok,
    split_frame,
)
from browserdeck.util.aio import cancel_and_wait

log = logging.getLogger(__name__)

# The extension is considered gone after this long without a message (it pings every 15 s
# and answers our pings).
EXTENSION_SILENCE_LIMIT = 45.0
PING_EVERY = 10.0


class ExtensionEndpoint:
    """``/extension``: the upgrade check, the probe, the auth exchange and the serve loop.

    ``welcome`` gives the parameters of the welcome message (profile, colour, port);
    ``on_change(connected, detail)`` is told when the extension comes and goes.
    """

    def __init__(
        self,
        relay: Relay,
        gate: RequestGate,
        *,
        profile: str,
        port: Callable[[], int],
        welcome: Callable[[], dict[str, Any]],
        on_change: Callable[[bool, str], None],
    ) -> None:
        self.relay = relay
        self.gate = gate
        self.profile = profile
        self.port = port  # the port the relay listens on (known once it is bound)
        self.welcome = welcome
        self.on_change = on_change
        self.ready = asyncio.Event()  # connected and said hello
        self.stopping = False

    def busy(self, instance: str) -> bool:
        """Whether another browser's extension holds the relay (409 for ``instance``)."""
        link = self.relay.link
        return link is not None and not link.closed and not self.replaceable(link, instance)

    def replaceable(self, link: ExtensionLink, instance: str) -> bool:
        # The same browser reconnecting (its worker restarted before we saw the old socket
        # close), or a link that has gone silent, may be replaced; anyone else waits.
        if instance and instance == link.instance:
            return True
        return asyncio.get_running_loop().time() - link.last_seen > EXTENSION_SILENCE_LIMIT

    def check_upgrade(
        self, connection: ServerConnection, headers: guard.Headers, instance: str
    ) -> Response | None:
        """None when the WebSocket upgrade may go ahead; else the refusal."""
        refusal = self.gate.refuse_extension(connection, headers)
        if refusal is not None:
            return refusal
        # The token is checked after the upgrade, by mutual proof (protocol.auth_proof):
        # the extension never puts it on the wire.
        if self.busy(instance):
            return json_response(
                connection,
                409,
                error_body(
                    "extension_slot_busy",
                    "another browser's browserdeck extension is already connected to this relay",
                    "disconnect it (or close that Chrome) first; each relay serves one browser",
                ),
            )
        return None

    def check(self, connection: ServerConnection, instance: str, cors: str | None) -> Response:
        """``GET /extension/check``: why the extension's WebSocket would be refused
        (browsers hide the HTTP status of a refused upgrade from it)."""
        if self.busy(instance):
            body = error_body(
                "extension_slot_busy",
                "another browser's browserdeck extension is connected to this relay",
                "disconnect it first",
            )
            return json_response(connection, 409, body, cors_origin=cors)
        return json_response(
            connection,
            200,
            {
                "ok": True,
                "profile": self.profile,
                "color": self.welcome()["color"],
                "protocol": PROTOCOL_VERSION,
            },
            cors_origin=cors,
        )

    async def authenticate(self, ws: ServerConnection) -> bool:
        """The mutual proof (protocol.py): True once the extension proved the token for
        this relay's port and profile."""
        token, port, profile = self.gate.token, self.port(), self.profile
        try:
            header, _ = split_frame(_text_of(await asyncio.wait_for(ws.recv(), AUTH_TIMEOUT)))
            params = header.get("params") or {}
            nonce = params.get("nonce")
            if (
                header.get("method") != "auth"
                or params.get("protocol") != PROTOCOL_VERSION
                or not isinstance(nonce, str)
                or not 32 <= len(nonce) <= 256
                or not nonce.isascii()
            ):
                await ws.close(
                    4400,
                    "protocol mismatch: reload the extension from this browserdeck's "
                    "extension/ folder",
                )
                return False
            if params.get("port") != port or params.get("profile") != profile:
                # What the extension says it dialled and was paired for is only a hint
                # here (the proofs below are made with our own port and profile either
                # way); it makes the refusal say what to do instead of failing the proof.
                log.warning(
                    "relay %s: an extension paired for profile %r on port %r connected on "
                    "port %d",
                    profile,
                    params.get("profile"),
                    params.get("port"),
                    port,
                )
                await ws.close(4403, f"this is profile {profile[:40]}'s relay: pair again")
                return False
            mine = secrets.token_hex(AUTH_NONCE_BYTES)
            proof = auth_proof(token, "relay", port, profile, nonce, mine)
            await ws.send(
                frame({"method": "authChallenge", "params": {"nonce": mine, "proof": proof}})
            )
            header, _ = split_frame(_text_of(await asyncio.wait_for(ws.recv(), AUTH_TIMEOUT)))
            params = header.get("params") or {}
            if header.get("method") != "authProof" or not proof_ok(
                token, "extension", port, profile, nonce, mine, params.get("proof")
            ):
                log.warning("relay: an /extension connection failed the token proof")
                await ws.close(
                    4401, "wrong relay token: pair the extension again (browserdeck pair)"
                )
                return False
            return True
        except (TimeoutError, ValueError, ConnectionClosed):
            with contextlib.suppress(Exception):
                await ws.close(4408, "no valid auth exchange")
            return False

    async def serve(self, ws: ServerConnection, instance: str) -> None:
        if not await self.authenticate(ws):
            return
        current = self.relay.link
        if current is not None and not current.closed:
            if not self.replaceable(current, instance):
                await ws.close(4409, "another browser's browserdeck extension is already connected")
                return
            await current.ws.close(4000, "replaced by a newer connection from the same browser")
        remote = f"{ws.remote_address[0]}:{ws.remote_address[1]}"
        link = ExtensionLink(ws, remote=remote, instance=instance)
        await self.relay.extension_connected(link)
        reason = "the extension closed the connection"
        heartbeat = self.relay.tasks.spawn(
            self._heartbeat(link), name=f"relay-heartbeat-{self.profile}"
        )
        try:
            await link.notify("welcome", self.welcome())
            async for message in ws:
                if isinstance(message, bytes):
                    continue
                try:
                    header, body = split_frame(message)
                except ValueError:
                    log.warning("relay: unreadable frame from the extension")
                    continue
                if header.get("method") == "hello":
                    params = header.get("params") or {}
                    if params.get("protocol") not in (None, PROTOCOL_VERSION):
                        reason = "the extension speaks another protocol version"
                        await ws.close(
                            4400,
                            "protocol mismatch: reload the extension from this browserdeck's extension/ folder",
                        )
                        break
                    await self.relay.extension_message(link, header, body)
                    self.ready.set()
                    self.on_change(True, f"{self.relay.product}, extension {link.info.version}")
                    continue
                await self.relay.extension_message(link, header, body)
        except ConnectionClosed as exc:
            reason = f"connection closed ({exc.rcvd.code if exc.rcvd else 'no close frame'})"
        except CdpError as exc:
            reason = exc.message
        finally:
            await cancel_and_wait(heartbeat)
            was_current = self.relay.link is link
            await self.relay.extension_gone(link, reason)
            if was_current and self.relay.link is None:
                self.ready.clear()
                self.on_change(False, reason if not self.stopping else "the relay stopped")

    async def _heartbeat(self, link: ExtensionLink) -> None:
        loop = asyncio.get_running_loop()
        while not link.closed:
            await asyncio.sleep(PING_EVERY)
            if loop.time() - link.last_seen > EXTENSION_SILENCE_LIMIT:
                log.warning("relay: the extension went silent; dropping it")
                await link.ws.close(4408, "no heartbeat from the extension")
                return
            try:
                await link.notify("ping")
            except CdpError:
                return


def _text_of(message: str | bytes) -> str:
    if isinstance(message, bytes):
        raise ValueError("binary frame during the auth exchange")
    return message


__all__ = ["EXTENSION_SILENCE_LIMIT", "ExtensionEndpoint"]
