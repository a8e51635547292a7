"""Secrets, cookies, web storage and auth states (group all), named as Playwright MCP's.

Every tool here follows from its request model's ``mcp`` hint (engine/storage.py,
door/logins.py): its name, description and arguments, their schemas from the model.
What each answers is listed in lines; secrets' values never appear in them (they are
redacted from every answer before it gets here).
"""

from __future__ import annotations

import time
import typing
from typing import Any

from browserdeck import results as r
from browserdeck.door import logins
from browserdeck.door.request import Mcp, Request
from browserdeck.door.words import say
from browserdeck.engine import pagetext
from browserdeck.engine import storage as s
from browserdeck.mcpserver.context import Call, Reply
from browserdeck.mcpserver.schema import from_model
from browserdeck.mcpserver.tools.registry import tool


def _cookie_line(c: r.Cookie) -> str:
    flags = [f"domain: {c.domain}", f"path: {c.path}"]
    flags += [name for name, on in (("httpOnly", c.http_only), ("secure", c.secure)) if on]
    if c.same_site:
        flags.append(f"sameSite: {c.same_site}")
    return f"{pagetext.quote(c.name)}={pagetext.quote(c.value)} ({', '.join(flags)})"


def stored_text(request: s.AnyStorage, data: r.Stored) -> str:
    """What a cookie or web-storage call found or did, in lines: names and values are the
    page's, quoted (``pagetext``) and fenced as page content."""
    line = say(type(request).said, request.given())
    if data.cookies is not None:
        if not data.cookies:
            return f"{line}: none found"
        found = "\n".join(_cookie_line(c) for c in data.cookies)
        return f"{line}:\n" + pagetext.fence(found, "cookies")
    if data.items is not None:
        where = f" of {data.origin}" if data.origin else ""
        if not data.items:
            return f"{line}{where}: none found"
        found = "\n".join(f"{pagetext.quote(i.key)}={pagetext.quote(i.value)}" for i in data.items)
        return f"{line}{where}:\n" + pagetext.fence(found, "storage items")
    if data.removed is not None:
        return f"{line} ({data.removed} removed)"
    return line


def _storage_tool(model: type[s.StorageCall], hint: Mcp, fixed: dict[str, Any]) -> None:
    kind = typing.get_args(model.model_fields["kind"].annotation)[0]

    async def run(call: Call) -> Reply:
        request = s.storage_of({**call.args, **fixed, "kind": kind}, where=hint.tool)
        return Reply(stored_text(request, await call.on_tab(request)))

    tool(hint.tool, hint.description, from_model(model, *hint.args), group=hint.group)(run)


for _model in typing.get_args(s.AnyStorage):
    if _model.mcp is not None:
        _storage_tool(_model, _model.mcp, {})
for _model, _hint, _fixed in s.WEB_STORAGE_TOOLS:
    _storage_tool(_model, _hint, _fixed)


def _hinted(model: type[Request[Any]]) -> tuple[Mcp, dict[str, Any]]:
    hint = getattr(model, "mcp", None)
    assert isinstance(hint, Mcp)
    return hint, {"group": hint.group}


def _state_line(state: r.AuthState) -> str:
    parts = [f"{state.cookies} cookies"]
    if state.origins:
        parts.append(f"site storage of {', '.join(state.origins)}")
    if state.session_storage:
        parts.append(f"sessionStorage of {', '.join(state.session_storage)}")
    if state.indexed_db:
        parts.append(f"IndexedDB of {', '.join(state.indexed_db)}")
    return "; ".join(parts)


def _problems(state: r.AuthState) -> list[str]:
    return [f"not done: {p}" for p in state.problems]


_SECRETS, _G = _hinted(logins.ListSecrets)


@tool(_SECRETS.tool, _SECRETS.description, from_model(logins.ListSecrets), **_G)
async def secrets(call: Call) -> Reply:
    found = (await call.app.deck.secrets(call.caller())).secrets
    if not found:
        return Reply(
            "no secrets are stored; the user adds them with `browserdeck secret set NAME "
            "--origin URL` or in Settings"
        )
    lines = []
    for e in found:
        uses = [f"<secret>{e.name}</secret>"] * e.value + [f"<totp>{e.name}</totp>"] * e.totp
        lines.append(f"{e.name}: {' or '.join(uses)} on {', '.join(e.origins)}")
    return Reply("\n".join(lines))


_SAVE, _G = _hinted(logins.SaveAuthState)


@tool(_SAVE.tool, _SAVE.description, from_model(logins.SaveAuthState, *_SAVE.args), **_G)
async def storage_state(call: Call) -> Reply:
    request = logins.SaveAuthState.of(call.args, where=_SAVE.tool)
    saved = await call.app.deck.save_auth_state(call.caller(), call.profile, request)
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(saved.saved_at))
    lines = [f"saved the logins of {saved.profile} as {saved.name!r} ({when}): {_state_line(saved)}"]
    return Reply("\n".join(lines + _problems(saved)))


_LOAD, _G = _hinted(logins.LoadAuthState)


@tool(_LOAD.tool, _LOAD.description, from_model(logins.LoadAuthState, *_LOAD.args), **_G)
async def set_storage_state(call: Call) -> Reply:
    request = logins.LoadAuthState.of(call.args, where=_LOAD.tool)
    loaded = await call.app.deck.load_auth_state(call.caller(), call.profile, request)
    line = f"loaded {loaded.name!r} into {loaded.loaded_into}: {_state_line(loaded)}"
    return Reply("\n".join([line, *_problems(loaded), "reload open tabs to use it"]))
