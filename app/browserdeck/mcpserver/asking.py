"""An MCP client as the channel that asks its user before a risky action (docs/approval.md).

While a tool call runs, its session's line is open at the front door's approvals
(``Approvals.open_line``): when the client declared form-mode elicitation, the question
goes to it as ``elicitation/create`` on this call's own stream (the client shows it to its
user: the agent does not answer it); ``accept`` is "allow once", ``decline`` and
``cancel`` are "deny". Whoever asks, the call tells the client it is still waiting with
``notifications/progress`` when the request carried a progress token, so a client's
own timeout does not end a call the user is deciding about.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from browserdeck.mcpserver.protocol import Exchange

if TYPE_CHECKING:
    from browserdeck.deck import Deck
    from browserdeck.door.approval.asking import Answer, Asker, Question


class ClientLine:
    """One tool call's line to its MCP client."""

    def __init__(self, exchange: Exchange, client: str | None) -> None:
        self.exchange = exchange
        self.name = f"{client or 'your MCP client'} (MCP)"
        self.asker: Asker | None = self if exchange.can_elicit() else None
        self._progress = 0

    async def ask(self, question: Question) -> Answer:
        params: dict[str, Any] = {
            "message": message_of(question),
            "requestedSchema": {"type": "object", "properties": {}},
        }
        if self.exchange.version >= "2025-11-25":
            params = {"mode": "form", **params}
        answer = await self.exchange.ask_here("elicitation/create", params)
        return "once" if answer.get("action") == "accept" else "deny"

    def waiting(self, question: Question, text: str) -> None:
        token = self.exchange.progress_token
        if token is None:
            return
        self._progress += 1
        self.exchange.notify(
            {
                "jsonrpc": "2.0",
                "method": "notifications/progress",
                "params": {"progressToken": token, "progress": self._progress, "message": text},
            }
        )


def message_of(question: Question) -> str:
    """The question in the client's dialog: the same facts the tray shows."""
    lines = [
        f"{question.agent} wants to {question.words()}.",
        f"Asked because {question.why}.",
        *question.details(),
        f"Profile: {question.profile}. Accept allows it once; decline refuses it "
        f"(no answer within {question.timeout:g} s refuses it too).",
    ]
    return "\n".join(lines)


@contextlib.contextmanager
def line_open(deck: Deck, session: str, exchange: Exchange, client: str | None) -> Iterator[None]:
    """The session's line open at the door's approvals while its call runs."""
    from browserdeck.door.approval import hub_of

    hub = hub_of(deck.addons)
    if hub is None:
        yield
        return
    with hub.open_line(session, ClientLine(exchange, client)):
        yield
