"""An MCP client as the channel that asks its user before a risky action (docs/approval.md).

While a tool call runs, its session's line is open at the front door's approvals
(``Approvals.open_line``): when the client declared form-mode elicitation, the question
goes to it as ``elicitation/create`` on this call's own stream (the client shows it to its
user: the agent does not answer it); ``accept`` is "allow once", ``decline`` and
``cancel`` are "deny". On the stateless protocol (2026-07-28) the call ends with an
``input_required`` result carrying that question (SEP-2322); the client asks its user and
calls again with the answer, which the door's approvals take for that same question.
Whoever asks, the call tells the client it is still waiting with
``notifications/progress`` when the request carried a progress token, so a client's
own timeout does not end a call the user is deciding about.
"""

from __future__ import annotations

import contextlib
import secrets
from collections import OrderedDict
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from browserdeck.door.approval.asking import AskLater, Decision, key_of
from browserdeck.mcpserver.protocol import Exchange

if TYPE_CHECKING:
    from browserdeck.deck import Deck
    from browserdeck.door.approval.asking import Answer, Asker, Question

QUESTION = "approval"  # the key of our one input request


class ClientLine:
    """One tool call's line to its MCP client."""

    def __init__(self, exchange: Exchange, client: str | None) -> None:
        self.exchange = exchange
        self.name = f"{client or 'your MCP client'} (MCP)"
        self.asker: Asker | None = self if exchange.can_elicit() else None
        # The stateless protocol asks in a round of its own (an input_required result).
        self.later = exchange.modern
        self._progress = 0

    async def ask(self, question: Question) -> Answer:
        if self.later:
            raise AskLater(question)
        answer = await self.exchange.ask_here(
            "elicitation/create", elicitation(question, self.exchange)
        )
        return answer_of(answer)

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


def elicitation(question: Question, exchange: Exchange) -> dict[str, Any]:
    """The ``elicitation/create`` params: the question in words, and an empty form."""
    params: dict[str, Any] = {
        "message": message_of(question),
        "requestedSchema": {"type": "object", "properties": {}},
    }
    if exchange.version >= "2025-11-25":
        params = {"mode": "form", **params}
    return params


def answer_of(result: Any) -> Answer:
    """``accept`` (with or without content) allows it once; anything else denies it."""
    return "once" if isinstance(result, dict) and result.get("action") == "accept" else "deny"


# The modern era's questions waiting for their second round: request state -> its key.
ASKED_MAX = 1_000
_asked: OrderedDict[str, tuple[str, ...]] = OrderedDict()


def input_required(question: Question, exchange: Exchange) -> dict[str, Any]:
    """The tool call's result that asks the client's user (SEP-2322): the client answers
    and calls again with ``inputResponses`` and this ``requestState``."""
    state = secrets.token_urlsafe(18)
    _asked[state] = key_of(question)
    while len(_asked) > ASKED_MAX:
        _asked.popitem(last=False)
    request = {"method": "elicitation/create", "params": elicitation(question, exchange)}
    return {
        "resultType": "input_required",
        "inputRequests": {QUESTION: request},
        "requestState": state,
    }


def take_answer(deck: Deck, exchange: Exchange, client: str | None) -> None:
    """A call that comes again with its user's answer: the door's approvals take it."""
    from browserdeck.door.approval import hub_of

    key = _asked.pop(exchange.request_state or "", None)
    hub = hub_of(deck.addons)
    if key is None or hub is None:
        return
    answer = answer_of(exchange.input_responses.get(QUESTION))
    hub.answered(key, Decision(answer, f"you, in {client or 'your MCP client'} (MCP)"))


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
