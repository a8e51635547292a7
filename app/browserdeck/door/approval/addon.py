"""The approval addon: a risky action waits at the front door for the person's answer.

Before a call runs (``before``), for a profile whose ``approval`` is ``risky`` or
``all`` (rules.mode_of):

* an action on an element (a click, Enter or Space pressed, typing that ends with Enter)
  is judged from the element itself, read from the page in one round trip
  (``CheckAction``: engine/risk.py) and its role and name in the tab's latest snapshot;
  an upload is always risky; with ``all``, every action that changes a page is;
* a risky one becomes a ``Question`` (the action in words, why it is risky, the money and
  the destination on its form, a picture of it for the tray) and waits for
  ``Approvals.decide``; a denial, no answer in time or no one to ask raises
  ``Forbidden`` before anything happens on the page, saying what was refused, why it
  counted as risky and what the agent can do;
* a script (``evaluate``, ``run-code``) runs with the in-page catch armed
  (``CatchScripts``: engine/catch.py): its reads are free, its risky clicks and submits
  are held in the page and asked the same way; ``after`` waits for those answers and
  tells the agent what became of each in the answer's note.

The user's own calls from the tray app (``via == "gui"``) are never asked.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from browserdeck.door.admin import CreateProfile
from browserdeck.door.approval import rules
from browserdeck.door.approval.asking import (
    Approvals,
    Picture,
    Question,
    with_picture,
)
from browserdeck.door.approval.requests import ActionPicture, CatchScripts, CheckAction
from browserdeck.door.approval.said import (
    UNTOUCHED,
    Refused,
    described,
    refusal,
    said_action,
    said_decision,
)
from browserdeck.door.call import Call, Element
from browserdeck.errors import BrowserdeckError
from browserdeck.session import session_key

if TYPE_CHECKING:
    from browserdeck.config import Config

log = logging.getLogger(__name__)

DECISION = "approval.decision"  # call.data: what was decided, for the activity log
_CATCH = "approval.catch"
# Act kinds that change the page (asked with "all"); evaluate is a script (the catch).
_CHANGING = frozenset({"click", "type", "press", "select", "fill", "drag"})
_BLANK = ("", "about:blank")
# A tab no action can run on: its own error answers, no question is asked.
_CANNOT_ACT = frozenset({"tab_hung", "tab_crashed", "tab_closed", "browser_gone"})


class SessionRegistry(Protocol):
    """The service's agent sessions (sessions.py): what runs when one ends."""

    def on_end(self, name: str, hook: Callable[[Any, Any], None]) -> Callable[[], None]: ...


class Approval:
    """The front door's approval addon (docs/approval.md)."""

    def __init__(
        self, hub: Approvals, sessions: Callable[[], SessionRegistry] | None = None
    ) -> None:
        self.hub = hub
        self._sessions = sessions
        self._watched: SessionRegistry | None = None

    def _watch_sessions(self) -> None:
        """An agent session that ends takes its questions and grants with it: watched on
        the service's registry of the moment (a service started again has a new one)."""
        registry = self._sessions() if self._sessions is not None else None
        if registry is None or registry is self._watched:
            return
        self._watched = registry
        registry.on_end("approval", lambda session, _reason: self.hub.end_session(session.id))

    async def before(self, call: Call[Any]) -> None:
        if call.caller.via == "gui":
            return  # the person's own clicks in the tray
        settings = self.hub.settings()
        if call.name == "create-profile":
            await self._lowering(call, settings)
            return
        mode = rules.mode_of(settings, call.profile, call.driver)
        if mode == "off":
            return
        request, name = call.request, call.name
        kind = getattr(request, "kind", None)
        # Agent JavaScript runs in the page: evaluate, a wait's function, run-code's Python.
        script = kind == "evaluate" or (kind == "wait" and getattr(request, "fn", None))
        if (name == "act" and script) or name == "run-code":
            await self._arm_catch(call, settings, mode, everywhere=name == "run-code")
            return
        question = await self._question(call, settings, mode, name, kind)
        if question is not None:
            await self._ask(call, question)

    async def after(self, call: Call[Any]) -> None:
        caught: _Catch | None = call.data.pop(_CATCH, None)
        if caught is not None:
            await caught.finish(call)

    async def _lowering(self, call: Call[Any], settings: Config) -> None:
        """A profile an agent creates with less asking than it would get anyway (deleted
        and made again with ``approval: off``, the user's Chrome would be the agent's to
        pay with): asked as a risky action, so that no call lowers it unseen."""
        if not isinstance(call.request, CreateProfile):
            return
        given = call.request.settings()
        wanted = given.get("approval")
        driver = given.get("driver") or ("remote" if given.get("cdpUrl") else "managed")
        inherited = rules.inherited_mode(settings, driver)
        if wanted not in rules.MODES or rules.MODES.index(wanted) >= rules.MODES.index(inherited):
            return
        name = call.request.name
        question = Question(
            agent=call.caller.label or "an agent",
            agent_key=agent_key(call),
            session=call.caller.session,
            profile=name,
            target_id="",
            action=f'create profile "{name}" ({driver}) with approval "{wanted}"',
            why=f'it asks less than the "{inherited}" that profile would have otherwise '
            f"({rules.where_set(settings, None)})",
            timeout=float(settings.approval_timeout_seconds),
        )
        try:
            await self._ask(call, question, untouched="No profile was created.")
        except Refused as exc:
            if exc.code != "approval_unavailable":
                raise
            raise Refused(
                f"{question.words()} needs the user's approval (asked because "
                f"{question.why}), and nobody can be asked: no browserdeck tray app is "
                "running, and this client cannot ask its user (MCP elicitation). No profile "
                "was created.",
                hint=f'create it without "approval" (it gets "{inherited}"), or tell the '
                "user: they can create it in the tray app's Settings, or start the tray app "
                "to be asked",
                code="approval_unavailable",
            ) from None

    # --- what is asked ------------------------------------------------------------
    async def _question(
        self, call: Call[Any], settings: Config, mode: rules.Mode, name: str, kind: Any
    ) -> Question | None:
        request = call.request
        every = 'approval is "all" for this profile: every action that changes a page is asked'
        if name == "file-chooser":
            paths = list(getattr(request, "paths", []) or [])
            return await self._about(
                call,
                settings,
                f"upload {rules.file_names(paths)}",
                "it uploads files from this computer",
            )
        if name == "navigate":
            if mode != "all":
                return None
            action = getattr(request, "action", "goto")
            said = (
                f"go to {getattr(request, 'url', '')}"
                if action == "goto"
                else {"back": "go back", "forward": "go forward"}.get(action, action)
            )
            return await self._about(call, settings, said, every)
        if name == "open-tab":
            url = getattr(request, "url", "") or ""
            if mode != "all" or url in _BLANK:
                return None
            return await self._about(call, settings, f"open a tab at {url}", every, url=url)
        if name != "act" or kind not in _CHANGING:
            return None
        ref = getattr(request, "ref", None)
        key: str | None = None
        if kind == "click":
            if getattr(request, "button", "left") != "left" and mode != "all":
                return None  # a right or middle click carries nothing out
        elif kind == "type":
            text = str(getattr(request, "text", ""))
            if getattr(request, "submit", False) or (
                getattr(request, "slowly", False) and "\n" in text
            ):
                key = "Enter"
            elif mode != "all":
                return None
        elif kind == "press":
            pressed = str(getattr(request, "key", "")).rsplit("+", 1)[-1]
            if pressed in rules.CLICK_KEYS:
                key = pressed
            elif mode != "all":
                return None
        elif mode != "all":
            return None
        if kind in ("click", "type", "press"):
            facts, reason = await self._judged(call, settings, ref, key)
            if facts is None and reason is None and mode != "all":
                return None
        else:
            facts, reason = rules.Facts(), None
        element = await call.element()
        action = said_action(kind, request, element, facts)
        if reason is None:
            if mode != "all":
                return None
            reason = every
        return await self._about(call, settings, action, reason, facts=facts, element=element)

    async def _judged(
        self, call: Call[Any], settings: Config, ref: str | None, key: str | None
    ) -> tuple[rules.Facts | None, str | None]:
        """The element's facts and why it is risky (None: it is not)."""
        mode = rules.mode_of(settings, call.profile, call.driver)
        try:
            raw = await call.aside(
                CheckAction(ref=ref, key=key, rules=rules.page_rules(settings, mode))
            )
        except BrowserdeckError as exc:
            if exc.code in _CANNOT_ACT:
                raise  # the action could not run there either: said as the engine says it
            log.info("approval could not read the element %s: %r", ref, exc)
            return rules.Facts(), "browserdeck could not check the element first"
        except Exception as exc:  # the page did not say: ask rather than let it go unseen
            log.info("approval could not read the element %s: %r", ref, exc)
            return rules.Facts(), "browserdeck could not check the element first"
        if raw is None:
            return None, None  # not in the latest snapshot: the action fails by itself
        facts = rules.Facts.of(raw)
        element = await call.element()
        name = element.name if element is not None and facts.activates else None
        return facts, rules.why(facts, name=name, words_=rules.words_of(settings))

    async def _about(
        self,
        call: Call[Any],
        settings: Config,
        action: str,
        why: str,
        *,
        facts: rules.Facts | None = None,
        element: Element | None = None,
        url: str | None = None,
    ) -> Question:
        page = (
            url
            if url is not None
            else (facts.url if facts and facts.url else await _page_url(call))
        )
        question = Question(
            agent=call.caller.label or "an agent",
            agent_key=agent_key(call),
            session=call.caller.session,
            profile=call.profile or "",
            target_id=call.tab.target_id if call.tab is not None else "",
            action=action,
            why=why,
            url=page,
            origin=rules.origin_of(page),
            site=rules.host_of(page),
            amounts=facts.amounts if facts else (),
            sends_to=facts.sends_to if facts else "",
            timeout=float(settings.approval_timeout_seconds),
        )
        if facts is not None and facts.box is not None and self._tray_first(question):
            question = await self._pictured(call, question, facts, element)
        return question

    def _tray_first(self, question: Question) -> bool:
        askers = self.hub.channels(question.session)
        return bool(askers) and askers[0] is self.hub.tray

    async def _pictured(
        self, call: Call[Any], question: Question, facts: rules.Facts, element: Element | None
    ) -> Question:
        assert facts.box is not None
        try:
            shot = await call.aside(ActionPicture(box=facts.box))
        except Exception as exc:
            log.debug("approval picture: %r", exc)
            return question
        if not shot:
            return question
        label = described(element) if element is not None else facts.describe()
        x, y, w, h = (float(v) for v in shot["outline"])
        width, height = (float(v) for v in shot["size"])
        return with_picture(
            question, Picture(bytes(shot["png"]), (x, y, w, h), (width, height), label)
        )

    # --- asking -------------------------------------------------------------------
    async def _ask(
        self, call: Call[Any], question: Question, *, untouched: str = UNTOUCHED
    ) -> None:
        self._watch_sessions()
        decision = await self.hub.decide(question)
        call.data[DECISION] = said_decision(decision)
        if decision.allowed:
            call.note(f"approval: {said_decision(decision)}")
            return
        raise refusal(question, decision, self.hub.settings(), untouched=untouched)

    async def _arm_catch(
        self, call: Call[Any], settings: Config, mode: rules.Mode, *, everywhere: bool
    ) -> None:
        if call.tab is None:
            return
        caught = _Catch(self, call)
        request = CatchScripts(
            rules=rules.page_rules(settings, mode), ask=caught.ask, everywhere=everywhere
        )
        try:
            caught.handle = await call.aside(request)
        except Exception as exc:
            # Unguarded, a script could click "Pay" unasked: it does not run.
            raise Refused(
                f"browserdeck could not watch this script's clicks on the page ({exc}), and "
                f"approval is {mode!r} for profile {call.profile!r}, so the script did not run",
                hint="try again; to run scripts unwatched, the user can set approval off "
                "for this profile",
                code="approval_unavailable",
            ) from None
        call.data[_CATCH] = caught


class _Catch:
    """One script call's in-page catch: asks about what it holds, then says what happened."""

    def __init__(self, addon: Approval, call: Call[Any]) -> None:
        self.addon = addon
        self.agent = call.caller.label or "an agent"
        self.key = agent_key(call)
        self.session = call.caller.session
        self.profile = call.profile or ""
        self.handle: Any = None
        self.said: list[str] = []
        self.open = True

    async def ask(self, report: dict[str, Any], state: Any) -> bool:
        """A script's action the page held: asked like any other (engine/catch.py)."""
        hub = self.addon.hub
        settings = hub.settings()
        facts = rules.Facts.of(report.get("facts"))
        kind = str(report.get("kind") or "click")
        reason = rules.why(facts, words_=rules.words_of(settings))
        if rules.mode_of(settings, self.profile, None) == "off":
            return True  # turned off meanwhile
        if kind == "upload":
            names = rules.file_names(str(n) for n in report.get("files") or [])
            plain, reason = f"upload {names}", "it uploads files from this computer"
        elif kind == "click":
            plain = f"click {facts.describe()}"
        else:
            plain = f"submit the form of {facts.describe()}"
        reason = (
            reason
            or 'approval is "all" for this profile: every action that changes a page is asked'
        )
        url = facts.url or getattr(getattr(state, "page", None), "url", "") or ""
        question = Question(
            agent=self.agent,
            agent_key=self.key,
            session=self.session if self.open else None,
            profile=self.profile,
            target_id=str(getattr(state, "target_id", "")),
            action=f"{plain} (by a script)",
            why=reason,
            url=url,
            origin=rules.origin_of(url),
            site=rules.host_of(url),
            amounts=facts.amounts,
            sends_to=facts.sends_to,
            by_script=True,
            timeout=float(settings.approval_timeout_seconds),
        )
        self.addon._watch_sessions()
        decision = await hub.decide(question)
        outcome = "it went ahead" if decision.allowed else "it did not happen"
        self.said.append(
            f"the script tried to {plain}"
            + (f" on {question.site}" if question.site else "")
            + f"; browserdeck held it back (risky: "
            f"{reason}), {said_decision(decision)}: {outcome}"
        )
        return decision.allowed

    async def finish(self, call: Call[Any]) -> None:
        handle, self.handle = self.handle, None
        if handle is None:
            return
        try:
            limit = float(self.addon.hub.settings().approval_timeout_seconds) + 5.0
            await asyncio.shield(handle.settle(limit))
        except Exception as exc:
            log.debug("settling the catch: %r", exc)
        finally:
            self.open = False
            try:
                await handle.close()
            except Exception as exc:
                log.debug("closing the catch: %r", exc)
        if self.said:
            call.data[DECISION] = "; ".join(self.said)
            for line in self.said:
                call.note(line)


def agent_key(call: Call[Any]) -> str:
    """Whose "allow on this site" an answer is: the agent session (as the service's
    sessions know it), else its client."""
    caller = call.caller
    session = session_key(caller.session)
    return session or caller.client or caller.software or "an unnamed client"


async def _page_url(call: Call[Any]) -> str:
    try:
        return await call.url() or ""
    except Exception:
        return ""
