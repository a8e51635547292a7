"""Asking the person: the question, who may ask it, the wait and what was decided.

``Approvals`` is the one place a risky action waits for an answer. It asks through a
channel the agent does not control, in the order of the ``approvalChannel`` setting:

* the tray app (``set_tray``): it decides in-process, in its own window;
* the agent's own MCP client, while that agent's call is open and its client declared
  elicitation (``open_line``, from mcpserver/): the client shows the question to its
  user, and its answer is the user's.

No tool, route or command answers a question: the only ways to say yes are those two.
With neither, the action is refused at once (``Decision.by`` says nobody could be asked).
No answer within ``approvalTimeoutSeconds`` is a denial. "Allow on this site" is kept per
agent (its session, else its client name) and site (the page's origin) until that agent
session ends (``end_session``) or browserdeck stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal, Protocol

from browserdeck.events import ApprovalEvent

if TYPE_CHECKING:
    from browserdeck.config import Config
    from browserdeck.events import ServiceEvents

log = logging.getLogger(__name__)

Answer = Literal["once", "site", "deny"]
# At most this many "allow on this site" grants are kept (the oldest go first).
MAX_GRANTS = 1_000
_ids = itertools.count(1)


@dataclass(frozen=True)
class Picture:
    """The page around the element, and where the element is in it (pixels of ``png``)."""

    png: bytes
    outline: tuple[float, float, float, float]  # x, y, width, height in CSS pixels of the crop
    size: tuple[float, float]  # the crop's size in CSS pixels (the PNG may have more pixels)
    label: str  # what is outlined: 'button "Pay $49.00"'


@dataclass(frozen=True)
class Question:
    """One risky action waiting for the person, in the words they are asked in."""

    agent: str  # who wants it: "claude-code via MCP"
    agent_key: str  # whose grants: the agent session, else the client's name
    session: str | None  # the agent session, to reach its MCP client
    profile: str
    target_id: str
    action: str  # 'click button "Pay $49.00"'
    why: str  # 'its name says "pay"'
    url: str = ""  # the page it happens on
    origin: str = ""
    site: str = ""  # the page's host: "shop.example"
    amounts: tuple[str, ...] = ()
    sends_to: str = ""  # where the form goes, when another site than the page
    by_script: bool = False
    picture: Picture | None = None
    timeout: float = 60.0
    id: int = field(default_factory=lambda: next(_ids))
    asked: float = field(default_factory=time.monotonic)

    def words(self) -> str:
        """The action in words: 'click button "Pay $49.00" on shop.example'."""
        return f"{self.action} on {self.site}" if self.site else self.action

    def details(self) -> list[str]:
        """What else the form shows: the money and where it goes."""
        lines = []
        if self.amounts:
            lines.append("Amount: " + ", ".join(self.amounts))
        if self.sends_to:
            lines.append(f"Sends to: {self.sends_to}")
        return lines

    def remaining(self) -> float:
        return max(0.0, self.timeout - (time.monotonic() - self.asked))


@dataclass(frozen=True)
class Decision:
    """What became of a question, and who decided it."""

    answer: Answer
    by: str  # "you, in the tray"; "no answer within 60 s"; "nobody could be asked"
    asked: bool = True  # False: decided without asking (a grant, or no channel at all)

    @property
    def allowed(self) -> bool:
        return self.answer != "deny"


class AskLater(Exception):
    """Raised by a channel that asks in a round of its own (an MCP client on the stateless
    protocol): the call ends now carrying ``question``, and comes again with the answer
    (``Approvals.answered``)."""

    def __init__(self, question: Question) -> None:
        super().__init__(question.words())
        self.question = question


def key_of(question: Question) -> tuple[str, ...]:
    """What makes a question the same one when its call comes again with the answer."""
    return (
        question.session or "",
        question.profile,
        question.target_id,
        question.action,
        question.why,
        question.origin,
    )


class Asker(Protocol):
    """A channel that puts a question to the person; its answer is theirs."""

    name: str  # "the tray", "Claude Desktop (MCP)"

    async def ask(self, question: Question) -> Answer: ...


class Line(Protocol):
    """An agent's call that is open while it waits: its MCP client (when it can ask the
    user itself) and a way to tell the agent it is still waiting (progress)."""

    asker: Asker | None

    def waiting(self, question: Question, text: str) -> None: ...


class Approvals:
    """The questions of one service: channels, the wait, grants, and what the views see."""

    def __init__(self, settings: Callable[[], Config], events: ServiceEvents | None = None) -> None:
        self.settings = settings
        self.events = events
        self.tray: Asker | None = None
        self._lines: dict[str, list[Line]] = {}
        self._grants: OrderedDict[tuple[str, str], str] = OrderedDict()
        self.pending: dict[int, Question] = {}
        self._withdrawn: dict[int, asyncio.Future[str]] = {}
        # Answers given in a round of their own (AskLater), for the call coming again.
        self._answers: OrderedDict[tuple[str, ...], Decision] = OrderedDict()

    # --- channels ---------------------------------------------------------------
    def set_tray(self, asker: Asker | None) -> None:
        """The tray app asks from now on (None: it quit)."""
        self.tray = asker

    @contextlib.contextmanager
    def open_line(self, session: str | None, line: Line) -> Iterator[None]:
        """While an agent's call runs: its MCP client may be asked, and told it waits."""
        if not session:
            yield
            return
        lines = self._lines.setdefault(session, [])
        lines.append(line)
        try:
            yield
        finally:
            lines.remove(line)
            if not lines:
                self._lines.pop(session, None)

    def _line(self, session: str | None) -> Line | None:
        lines = self._lines.get(session or "")
        return lines[-1] if lines else None

    def channels(self, session: str | None) -> list[Asker]:
        """Who may ask, in the order the ``approvalChannel`` setting says."""
        line = self._line(session)
        client = line.asker if line is not None else None
        tray = self.tray
        ordered = (
            [client, tray] if self.settings().approval_channel == "mcp-client" else [tray, client]
        )
        return [a for a in ordered if a is not None]

    # --- grants -----------------------------------------------------------------
    def granted(self, agent_key: str, origin: str) -> bool:
        return bool(origin) and (agent_key, origin) in self._grants

    def grant(self, agent_key: str, origin: str, site: str) -> None:
        if not origin:
            return
        self._grants[(agent_key, origin)] = site
        self._grants.move_to_end((agent_key, origin))
        while len(self._grants) > MAX_GRANTS:
            self._grants.popitem(last=False)

    def end_session(self, agent_key: str) -> None:
        """An agent session ended: its questions are withdrawn (denied) and its "allow on
        this site" answers go with it."""
        for key in [k for k in self._grants if k[0] == agent_key]:
            del self._grants[key]
        for qid, question in list(self.pending.items()):
            withdrawn = self._withdrawn.get(qid)
            if question.agent_key == agent_key and withdrawn is not None and not withdrawn.done():
                withdrawn.set_result("the agent session ended before an answer")

    # --- asking -----------------------------------------------------------------
    def answered(self, key: tuple[str, ...], decision: Decision) -> None:
        """The person answered ``key``'s question in a round of its own (AskLater); the
        call that comes again with it takes the answer, once."""
        self._answers[key] = decision
        while len(self._answers) > MAX_GRANTS:
            self._answers.popitem(last=False)

    async def decide(self, question: Question) -> Decision:
        """Ask the person (or not: a grant answers, or no one can be asked) and wait."""
        given = self._answers.pop(key_of(question), None)
        if given is not None:
            self._tell(question, given.answer if given.allowed else "denied", given.by)
            if given.answer == "site":
                self.grant(question.agent_key, question.origin, question.site)
            return given
        if self.granted(question.agent_key, question.origin):
            return Decision(
                "once", f"you allowed this agent on {question.site} earlier", asked=False
            )
        askers = [
            a
            for a in self.channels(question.session)
            # What a script did is asked now: it cannot be done again in another round.
            if not (question.by_script and getattr(a, "later", False))
        ]
        if not askers:
            return Decision("deny", "nobody could be asked", asked=False)
        asker = askers[0]
        self.pending[question.id] = question
        withdrawn: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._withdrawn[question.id] = withdrawn
        self._tell(question, "waiting", f"waiting for your approval ({asker.name})")
        line = self._line(question.session)
        ticker = asyncio.ensure_future(self._tick(line, question)) if line is not None else None
        asking = asyncio.ensure_future(asker.ask(question))
        try:
            both: set[asyncio.Future[Any]] = {asking, withdrawn}
            done, _ = await asyncio.wait(
                both,
                timeout=question.remaining(),
                return_when=asyncio.FIRST_COMPLETED,
            )
            if asking in done and isinstance(asking.exception(), AskLater):
                self._tell(question, "asked", f"asked in {asker.name}")
                raise AskLater(question)
            if asking in done and asking.exception() is None:
                decision = Decision(asking.result(), f"you, in {asker.name}")
            elif asking in done:
                exc = asking.exception()
                log.warning("asking through %s failed: %s", asker.name, exc)
                decision = Decision("deny", f"{asker.name} could not ask you ({exc})")
            elif withdrawn in done:
                decision = Decision("deny", withdrawn.result())
            else:
                decision = Decision("deny", f"no answer within {question.timeout:g} s")
        except asyncio.CancelledError:
            self._tell(question, "cancelled", "the agent's call ended before an answer")
            raise
        finally:
            self.pending.pop(question.id, None)
            self._withdrawn.pop(question.id, None)
            if ticker is not None:
                ticker.cancel()
            if not asking.done():
                asking.cancel()  # the window (or the client) lets the question go
                await asyncio.wait({asking})
        if decision.answer == "site":
            self.grant(question.agent_key, question.origin, question.site)
        self._tell(
            question, decision.answer if decision.answer != "deny" else "denied", decision.by
        )
        return decision

    async def _tick(self, line: Line, question: Question) -> None:
        """Tell the agent's client it is still waiting (MCP progress), every few seconds."""
        while True:
            line.waiting(
                question,
                f"waiting for the user's approval to {question.words()} "
                f"({question.remaining():.0f} s left)",
            )
            await asyncio.sleep(5.0)

    def _tell(self, question: Question, state: str, by: str) -> None:
        if self.events is None:
            return
        self.events.approval.send(
            entry=ApprovalEvent(
                id=question.id,
                time=time.time(),
                agent=question.agent,
                profile=question.profile,
                target_id=question.target_id,
                action=question.words(),
                why=question.why,
                state=state,
                by=by,
            )
        )


def with_picture(question: Question, picture: Picture | None) -> Question:
    return replace(question, picture=picture) if picture is not None else question


Ask = Callable[[Question], Awaitable[Decision]]
