"""The extension relay: the user's own Chrome, through the browserdeck MV3 extension,
presented as a CDP endpoint (see server.py and docs/extension.md)."""

from __future__ import annotations

from browserdeck.relay.extension_id import EXTENSION_ID, EXTENSION_ORIGIN
from browserdeck.relay.pairing import pairing_help, pairing_url, relay_url_help
from browserdeck.relay.server import RelayServer
from browserdeck.relay.slot import is_slot_busy_error, wait_for_client_slot

__all__ = [
    "EXTENSION_ID",
    "EXTENSION_ORIGIN",
    "RelayServer",
    "is_slot_busy_error",
    "pairing_help",
    "pairing_url",
    "relay_url_help",
    "wait_for_client_slot",
]
