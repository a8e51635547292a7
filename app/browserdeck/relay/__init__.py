"""The extension relay: the user's own Chrome, through the browserdeck MV3 extension,
presented as a CDP endpoint (see server.py and docs/extension.md).

The package itself binds only its light names: the engine imports ``relay.slot`` on the
path of a service an MCP client waits for, and the relay server (``server``,
``core``, ``browser_domain``, ~10 ms of imports) is imported by the extension driver
when a relay starts.
"""

from __future__ import annotations

from browserdeck.relay.extension_id import EXTENSION_ID, EXTENSION_ORIGIN
from browserdeck.relay.pairing import pairing_help, pairing_url, relay_url_help

__all__ = [
    "EXTENSION_ID",
    "EXTENSION_ORIGIN",
    "pairing_help",
    "pairing_url",
    "relay_url_help",
]
