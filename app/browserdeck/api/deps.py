"""What routes need: the front door (``Deck``) and who calls (``Caller``)."""

from __future__ import annotations

from fastapi import Request

from browserdeck.client import CLIENT_NAME as CLI_CLIENT_NAME
from browserdeck.deck import Deck
from browserdeck.door.call import Caller


def deck_of(request: Request) -> Deck:
    deck: Deck = request.app.state.deck
    return deck


def caller_of(request: Request) -> Caller:
    """Who calls (X-Browserdeck-Client, X-Browserdeck-Session, else the User-Agent's
    product: curl/8.5.0); the CLI says it is the CLI."""
    headers = request.headers
    client = headers.get("x-browserdeck-client")
    return Caller(
        client=client,
        session=headers.get("x-browserdeck-session"),
        via="cli" if client == CLI_CLIENT_NAME else "api",
        software=headers.get("user-agent", "").split(" ")[0] or None,
    )
