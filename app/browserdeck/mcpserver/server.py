"""The MCP server: tool selection, sessions, and what tools/list and tools/call answer.

The messages around them are protocol.py's and the streamable HTTP transport is
http.py's, both ours rather than the official SDK's server (importing it
was ~350 ms of CPU before the service's first answer); the schemas are written by
hand (schema.py) and argument checking is ours.

Served over streamable HTTP at ``/mcp`` (``browserdeck mcp`` is a stdio bridge to
it). Sessions: each ``Mcp-Session-Id`` is one session (a client on the stateless 2026 protocol can send
``X-Browserdeck-Session`` to get the same; without either, calls share one
session). Per session: its profile, its current tab, its last snapshots. Calls of
one session run one at a time, as Playwright MCP's do.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from browserdeck import __version__, config
from browserdeck.chrome.procs import pid_alive
from browserdeck.config import Config
from browserdeck.door.approval.asking import AskLater
from browserdeck.errors import BrowserdeckError, InvalidInput
from browserdeck.mcpserver import output
from browserdeck.mcpserver.asking import input_required, line_open, take_answer
from browserdeck.mcpserver.claims import TabClaims
from browserdeck.mcpserver.context import AgentSession, Call, Reply, agent_caller
from browserdeck.mcpserver.protocol import INTERNAL_ERROR, INVALID_PARAMS, Exchange, RpcError
from browserdeck.mcpserver.schema import validate_object
from browserdeck.policy import confine
from browserdeck.session import (
    CLIENT_ENDED,
    PROCESS_EXITED,
    SERVICE_STOPPING,
    EndedLog,
    EndReason,
    Session,
    SessionEndedError,
    ended_error,
    idle,
)
from browserdeck.sessions import Sessions
from browserdeck.util import aio
from browserdeck.util.fastjson import utf8

if TYPE_CHECKING:
    from browserdeck.deck import Deck
    from browserdeck.mcpserver import tools

log = logging.getLogger(__name__)

# How long a client gets to answer roots/list before we go on without its roots.
ROOTS_TIMEOUT = 5.0

INSTRUCTIONS = (
    "browserdeck: a real browser. Each session works in its own tab (opened on first use); "
    "browser_snapshot gives element refs (e12) that the action tools take. Actions answer "
    "briefly; pass snapshot: true to see what changed. Long output is cut and saved to a file."
)
# Agent sessions at once: their key can be the client's own (X-Browserdeck-Session), so
# a client naming a new one per call would otherwise grow them without bound (as the
# transport caps its sessions, http.MAX_SESSIONS).
MAX_AGENT_SESSIONS = 10_000
SESSION_TTL = 30 * 60.0  # idle HTTP sessions end after 30 minutes (http.py), as the SDK's did
PROFILES = ("core", "all")


def all_tools() -> dict[str, tools.ToolSpec]:
    """Every tool, imported on first use: the tools and their schemas (built from the
    engine's models) are ~25 ms of CPU that MCP ``initialize`` does not need; a service
    started for an MCP client answers it sooner, and imports them on the first
    tools/list or tools/call."""
    from browserdeck.mcpserver import tools

    return tools.REGISTRY


def select_tools(spec: str, *, run_code: bool) -> dict[str, tools.ToolSpec]:
    """``core``, ``all`` or a comma list of tool and group names → the tools offered."""
    registry = all_tools()
    chosen: dict[str, tools.ToolSpec] = {}
    for item in (part.strip() for part in spec.split(",")):
        if not item:
            continue
        if item == "core":
            chosen.update({k: t for k, t in registry.items() if t.group == "core"})
        elif item == "all":
            chosen.update(
                {
                    k: t
                    for k, t in registry.items()
                    if t.group in ("core", "all") or (t.group == "code" and run_code)
                }
            )
        elif item in registry:
            if registry[item].group == "code" and not run_code:
                raise InvalidInput(
                    f"{item} is off: it runs arbitrary Python in the browserdeck process",
                    hint='turn on the "mcpRunCode" setting (Settings > Advanced) to offer it',
                    code="run_code_disabled",
                )
            chosen[item] = registry[item]
        else:
            raise InvalidInput(
                f"unknown tool {item!r} in --tools",
                hint="use core, all, or tool names: " + ", ".join(registry),
            )
    if not chosen:
        raise InvalidInput("--tools selects no tools", hint="use core, all or a list of names")
    return chosen


class McpApp:
    """Everything the service's ``/mcp`` endpoint serves (``protocol.Tools``)."""

    name = "browserdeck"
    version = __version__
    instructions = INSTRUCTIONS

    def __init__(
        self,
        deck: Deck,
        *,
        tools_spec: str = "core",
        profile: str | None = None,
        max_chars: int = output.DEFAULT_MAX_CHARS,
        settings: Callable[[], Config] = config.read_cached,
        claims: TabClaims | None = None,
        registry: Sessions,
    ) -> None:
        self.deck = deck  # the front door, in this process
        self.tools_spec = tools_spec
        self.default_profile = profile
        self.max_chars = max(output.MIN_MAX_CHARS, max_chars)
        self.settings = settings
        self.claims = claims or TabClaims()
        self.sessions: dict[str, AgentSession] = {}
        # The service's agent sessions (sessions.py): the one way a session ends. Ours
        # are known there by their owner id; ``_keys`` maps it back to the session key.
        self.registry = registry
        self._keys: dict[str, str] = {}
        self._told = EndedLog()  # keys of sessions ended for a reason their client is told
        self._unhook = registry.on_end("mcp sessions", self._registry_ended)
        # The transport's part of an end (the endpoint closes its streams): key, reason.
        self.on_transport_end: Callable[[str, EndReason], None] | None = None
        self._releases: set[asyncio.Task[None]] = set()
        self._selections: dict[str, dict[str, tools.ToolSpec]] = {}
        if tools_spec != "core":  # fail early on a bad spec ("core" is always good)
            select_tools(tools_spec, run_code=self.run_code_enabled())

    # --- the client's workspace --------------------------------------------------
    async def client_roots(self, exchange: Exchange) -> list[str]:
        """The folders the MCP client declares (``roots/list``).

        The service's own working directory means nothing about the client, so only
        declared roots count, or the workspace a ``browserdeck mcp`` bridge names
        (``X-Browserdeck-Workspace``: its working directory; a header only the client
        program sets, never a tool argument).
        """
        # Deprecated from the 2026-07-28 protocol on (which cannot ask the client), and
        # still how clients on the handshake protocol name their workspace.
        if isinstance(exchange.client_capabilities.get("roots"), dict):
            try:
                listed = await asyncio.wait_for(exchange.ask("roots/list", None), ROOTS_TIMEOUT)
                roots = listed.get("roots")
                uris = (
                    [r.get("uri") for r in roots if isinstance(r, dict)]
                    if isinstance(roots, list)
                    else []
                )
                return [uri for uri in uris if isinstance(uri, str) and uri.startswith("file:")]
            except Exception as exc:  # the client did not answer: no roots, not a crash
                log.info("MCP roots/list failed: %s", exc)
        workspace = exchange.headers.get("x-browserdeck-workspace")
        return [workspace] if workspace and workspace.startswith("file:") else []

    @staticmethod
    def output_folder(roots: list[str]) -> Path:
        """Where ``filename`` outputs go: ``browserdeck-output`` in the client's workspace."""
        for raw in roots:
            root = confine.usable_root(raw)
            if root is not None:
                return confine.output_folder(root)
        return confine.output_folder(None)

    # --- settings ----------------------------------------------------------------
    def run_code_enabled(self) -> bool:
        return bool(self.settings().mcp_run_code)

    def max_image_dimension(self) -> int:
        return int(self.settings().screenshot_max_dimension)

    # --- per request --------------------------------------------------------------
    def selection(self, spec: str) -> dict[str, tools.ToolSpec]:
        key = f"{spec}|{self.run_code_enabled()}"
        chosen = self._selections.get(key)
        if chosen is None:
            chosen = self._selections[key] = select_tools(spec, run_code=self.run_code_enabled())
        return chosen

    def _selection_for(self, exchange: Exchange) -> dict[str, tools.ToolSpec]:
        return self.selection(exchange.query.get("tools") or self.tools_spec)

    def session_for(self, exchange: Exchange) -> AgentSession:
        headers, query = exchange.headers, exchange.query
        key = headers.get("mcp-session-id") or headers.get("x-browserdeck-session") or "shared"
        ttl: float | None = SESSION_TTL
        session = self.sessions.get(key)
        if session is None:
            told = self._told.take(key)
            if told is not None:  # a session named by the client (stateless protocol)
                raise ended_error(
                    told,
                    "call again to go on in a new session (its tabs from before are closed, "
                    "unless kept)",
                )
            if len(self.sessions) >= MAX_AGENT_SESSIONS:
                self._expire_sessions()
            if len(self.sessions) >= MAX_AGENT_SESSIONS:
                raise RpcError(
                    INTERNAL_ERROR,
                    f"Too many agent sessions: browserdeck holds at most {MAX_AGENT_SESSIONS} "
                    "at once, and that many are open; reuse a session's X-Browserdeck-Session "
                    "rather than a new one per call, end sessions you no longer use (DELETE "
                    f"/mcp) or wait {SESSION_TTL / 60:.0f} minutes for idle ones to expire",
                )
            client = exchange.client_name
            kind, pid = "http", None
            bridge = headers.get("x-browserdeck-bridge", "")
            if bridge.isdigit() and len(bridge) < 10:
                # A `browserdeck mcp` process carries this client's stdio here: the session
                # (its tabs) lasts as long as that process. Over the Unix socket the
                # kernel names the process (SO_PEERCRED); over TCP the header does.
                kind, pid, ttl = "stdio", exchange.peer_pid or int(bridge), None
            session = AgentSession.new(
                kind,
                key[:12],
                ttl=ttl,
                profile=query.get("profile") or self.default_profile,
                client=client,
                pid=pid,
            )
            self.sessions[key] = session
            self._keys[session.owner.id] = key
            # A handshake session idles out in its transport (http.py), which knows when
            # a stream of it is open; one on the stateless protocol has no transport.
            handshake = "mcp-session-id" in headers
            self.registry.begin(
                session.owner.id,
                label=session.owner.label,
                kind="mcp",
                pid=pid,
                idle_after=None if handshake or pid is not None else SESSION_TTL,
            )
            self._expire_sessions()
        session.last_used = time.monotonic()
        return session

    def _expire_sessions(self) -> None:
        now = time.monotonic()
        for key, session in list(self.sessions.items()):
            if session.lock.locked():
                continue
            if session.owner.ttl is None and not pid_alive(session.owner.pid):
                self.end_session(key, PROCESS_EXITED)
            elif session.owner.ttl is not None and now - session.last_used > SESSION_TTL:
                self.end_session(key, idle(SESSION_TTL))

    def end_session(self, key: str, reason: EndReason = CLIENT_ENDED) -> None:
        """End a session: its tab claims and code process go now, and the service's
        ``Sessions.end`` closes the tabs it opened and gives back those it reused."""
        session = self.sessions.pop(key, None)
        if session is None:
            return
        self._keys.pop(session.owner.id, None)
        if reason.tell:  # its client may name the key again (X-Browserdeck-Session)
            self._told.remember(key, reason)
        self.claims.release(session.owner)
        if self.on_transport_end is not None:
            self.on_transport_end(key, reason)
        task = aio.create_task(self._ended(session, reason), name="mcp-end-session")
        self._releases.add(task)
        task.add_done_callback(self._releases.discard)

    async def _ended(self, session: AgentSession, reason: EndReason) -> None:
        from browserdeck.mcpserver import runcode

        try:
            await runcode.reset(session)
            await self.registry.end(session.owner.id, reason)
        except Exception:  # the service may be stopping under it
            log.exception("ending MCP session %s", session.owner.label)

    def _registry_ended(self, ended: Session, reason: EndReason) -> None:
        """The service ended one of our sessions (its bridge died, Stop all agents): the
        session goes here too, and its transport (its next request is told why)."""
        key = self._keys.get(ended.id)
        if key is not None:
            self.end_session(key, reason)

    # --- MCP handlers -------------------------------------------------------------
    async def list_tools(self, exchange: Exchange) -> list[dict[str, Any]]:
        try:
            selection = self._selection_for(exchange)
        except BrowserdeckError as exc:  # a bad ?tools= on the /mcp URL
            raise RpcError(INVALID_PARAMS, str(exc)) from None
        return self.tool_list(selection)

    @staticmethod
    def tool_list(selection: dict[str, tools.ToolSpec]) -> list[dict[str, Any]]:
        return [
            {"name": t.name, "description": t.description, "inputSchema": t.schema}
            for t in selection.values()
        ]

    async def refuse(self, client: str | None, tool: str, error: SessionEndedError) -> None:
        """An ended session's call of ``tool``, refused: through the door all the same, so
        the activity log names the agent (its clientInfo name) and what it was told."""
        with contextlib.suppress(SessionEndedError):
            await self.deck.refuse(agent_caller(client, ""), tool, error)

    async def call_tool(
        self, exchange: Exchange, name: str, arguments: dict[str, Any]
    ) -> dict[str, Any]:
        try:
            selection = self._selection_for(exchange)
        except BrowserdeckError as exc:
            return _error(exc)
        spec = selection.get(name)
        if spec is None:
            known = all_tools().get(name)
            hint = (
                "start the server with --tools all (or name it in --tools)"
                if known
                else "call tools/list for the tools this server offers"
            )
            return _error(
                InvalidInput(
                    f"tool {name!r} is not offered by this server", hint=hint, code="unknown_tool"
                )
            )
        try:
            session = self.session_for(exchange)
        except SessionEndedError as exc:  # told once, the next call begins anew
            await self.refuse(exchange.client_name, name, exc)
            return _error(exc)
        raw_args = dict(arguments)
        # Playwright MCP's "filename": save the result there instead of answering with it.
        save_to = (
            None if "filename" in spec.schema["properties"] else raw_args.pop("filename", None)
        )
        async with session.lock:
            try:
                # The name is checked before the tool runs: a refused one changes nothing.
                save_name = (
                    confine.output_name(save_to) if isinstance(save_to, str) and save_to else None
                )
                args = validate_object(raw_args, spec.schema, name)
                call = Call(self, session, spec, args)
                call.roots = lambda: self.client_roots(exchange)
                call.max_chars = self._max_chars_for(exchange)
                # A risky action may ask this client's user (mcpserver/asking.py).
                take_answer(self.deck, exchange, session.client)
                with line_open(self.deck, session.owner.id, exchange, session.client):
                    reply = await spec.handler(call)
                if save_name is not None:
                    folder = self.output_folder(await call.roots())
                    reply = _save_reply(reply, folder, save_name)
            except BrowserdeckError as exc:
                return _error(exc)
            except AskLater as later:  # the stateless protocol asks in a round of its own
                return input_required(later.question, exchange)
            except Exception as exc:
                log.exception("MCP tool %s failed", name)
                return _error(
                    BrowserdeckError(
                        f"{name} failed: {type(exc).__name__}: {exc}",
                        hint="this is a browserdeck bug; see its log",
                        code="internal",
                    )
                )
            finally:
                session.last_used = time.monotonic()
                if session.owner.ttl is not None:
                    self.claims.touch(session.owner)
        return self.render(reply, spec, self._max_chars_for(exchange))

    def _max_chars_for(self, exchange: Exchange) -> int:
        """``?maxChars=`` on the /mcp URL (``browserdeck mcp --max-chars``), else ours."""
        raw = exchange.query.get("maxChars", "")
        if raw.isdigit():
            return max(output.MIN_MAX_CHARS, min(int(raw), 10_000_000))
        return self.max_chars

    def render(
        self, reply: Reply, spec: tools.ToolSpec, max_chars: int | None = None
    ) -> dict[str, Any]:
        """A ``tools/call`` result: the text (capped), then the images."""
        content: list[dict[str, Any]] = []
        if reply.text:
            text = output.cap(
                reply.text,
                tool=spec.name,
                max_chars=max_chars or self.max_chars,
                narrow=reply.narrow or spec.narrow,
            )
            content.append({"type": "text", "text": text})
        for data, mime in reply.images:
            import base64

            content.append(
                {"type": "image", "data": base64.b64encode(data).decode(), "mimeType": mime}
            )
        if not content:
            content.append({"type": "text", "text": "done"})
        return {"content": content, "isError": False}

    # --- lifecycle ------------------------------------------------------------------
    async def close(self) -> None:
        self._unhook()
        for key in list(self.sessions):
            self.end_session(key, SERVICE_STOPPING)
        if self._releases:
            await asyncio.wait(set(self._releases), timeout=5)


def _save_reply(reply: Reply, folder: Path, name: str) -> Reply:
    """Write the result (the image, else the text) to a new file; answer with where."""
    if reply.images:
        data = reply.images[0][0]
        what = f"{len(data):,} bytes of {reply.images[0][1]}"
    else:
        data = utf8(reply.text)  # a lone surrogate of page text: U+FFFD, as on the wire
        what = f"{len(reply.text):,} characters"
    path = output.write_output(folder, name, data)
    return Reply(f"saved {what} to {path}")


def _error(exc: BrowserdeckError) -> dict[str, Any]:
    hint = exc.hint_for("mcp")  # what to do next, in tool names
    text = f"error: {exc.message}" + (f"\nhint: {hint}" if hint else "")
    return {"content": [{"type": "text", "text": text}], "isError": True}
