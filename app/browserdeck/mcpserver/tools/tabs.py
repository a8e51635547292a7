"""Tabs, the session's tab, close and profiles (core)."""

from __future__ import annotations

from browserdeck.engine import pagetext
from browserdeck.errors import Conflict, InvalidInput, NotFound
from browserdeck.mcpserver.context import Call, Reply
from browserdeck.mcpserver.schema import b, i, obj, s
from browserdeck.mcpserver.tools.registry import tool

# --- tabs, profiles, close ------------------------------------------------------------


@tool(
    "browser_tabs",
    "List, open (new), select or close tabs. Tabs of other agents are refused unless force.",
    obj(
        {
            "action": s(enum=["list", "new", "select", "close"]),
            "targetId": s("tab id or unique prefix (from list)"),
            "index": i("tab index from list"),
            "url": s("for new"),
            "force": b("act on another agent's tab"),
        },
        ["action"],
    ),
)
async def tabs(call: Call) -> Reply:
    a = call.args
    action = a["action"]
    if action == "new":
        opened = await call.app.deck.open_tab(
            call.caller(), call.profile, a.get("url") or "about:blank"
        )
        target = opened.target_id
        call.app.claims.claim(await call.profile_name(), target, call.session.owner)
        call.session.tab = target
        return Reply(f"opened tab {target[:8]} and made it current: {pagetext.url(opened.url)}")
    if action == "list":
        return Reply(await _tab_list(call))
    listed = await call.tabs()
    if "index" in a:
        if not 0 <= a["index"] < len(listed):
            raise NotFound(
                f"no tab at index {a['index']} ({len(listed)} tabs)",
                hint="list tabs with browser_tabs action=list",
            )
        target = listed[a["index"]].target_id
    elif a.get("targetId"):
        target = a["targetId"]
    elif action == "close" and call.session.tab:
        target = call.session.tab
    else:
        raise InvalidInput(f"browser_tabs action={action} needs targetId or index")
    if action == "select":
        tab = await call.select_tab(target, force=bool(a.get("force")))
        return Reply(
            f"current tab is now {tab.target_id[:8]}: {pagetext.title(tab.title)} — "
            f"{pagetext.url(tab.url)}"
        )
    return Reply(await _close_tab(call, target, force=bool(a.get("force"))))


async def _close_tab(call: Call, target: str, *, force: bool) -> str:
    from browserdeck.tabs import match

    profile = await call.profile_name()
    tab = match(await call.tabs(), target)
    target_id = tab.target_id
    holder = call.app.claims.owner_of(profile, target_id)
    if holder is not None and holder.owner != call.session.owner.id and not force:
        raise Conflict(
            f"tab {target_id[:8]} belongs to another agent ({holder.label})",
            hint="close your own tabs, or pass force: true",
            code="tab_owned",
        )
    await call.app.deck.close_tab(call.caller(), call.profile, target_id)
    call.app.claims.release(call.session.owner, profile, target_id)
    call.forget_tab(target_id)
    return f"closed tab {target_id[:8]}"


async def _tab_list(call: Call) -> str:
    profile = await call.profile_name()
    listed = await call.tabs()
    call.app.claims.prune(profile, {t.target_id for t in listed})
    owners = call.app.claims.owners(profile)
    if not listed:
        return f"no tabs in profile {profile}"
    lines = []
    for k, t in enumerate(listed):
        tid = t.target_id
        holder = owners.get(tid)
        mine = holder is None or holder.owner == call.session.owner.id
        if holder is not None and not mine:
            mark = f"held by {holder.label}"
        elif tid == call.session.tab:
            mark = "current, yours"
        elif holder is not None:
            mark = "yours"
        else:
            mark = "free"
        # Titles and URLs are the pages' own words: quoted, so none can pass for a line.
        lines.append(
            f"{k}. {tid[:8]} [{mark}] {pagetext.title(t.title)} — {pagetext.url(t.url)}"
        )
    return f"profile {profile}:\n" + "\n".join(lines)


@tool("browser_close", "Close this session's tab (the browser stays up for other agents).", obj())
async def close(call: Call) -> Reply:
    if call.session.tab is None:
        return Reply("this session has no tab open")
    return Reply(await _close_tab(call, call.session.tab, force=False))


@tool(
    "browser_profiles",
    "Browser profiles: list, start, stop, or use one for this session's next calls.",
    obj({"action": s(enum=["list", "start", "stop", "use"]), "name": s()}, ["action"]),
)
async def profiles(call: Call) -> Reply:
    a = call.args
    action, name = a["action"], a.get("name")
    if action == "list":
        listed = await call.app.deck.profiles(call.caller())
        current = call.session.profile or listed.default_profile
        lines = []
        for p in listed.profiles:
            bits = [p.driver, "running" if p.running else p.state]
            if p.running:
                bits.append(f"{p.tabs} tab(s)")
            mark = "* " if p.profile == current else "  "
            lines.append(
                f"{mark}{p.profile} ({', '.join(b for b in bits if b)})"
                + (" — default" if p.default else "")
            )
        return Reply("\n".join(lines) + "\n(* = this session's profile)")
    if not name:
        raise InvalidInput(
            f"browser_profiles action={action} needs name", hint="list profiles with action=list"
        )
    if action == "use":
        status = await call.app.deck.status(call.caller(), name)
        if call.session.tab is not None:
            call.app.claims.release(call.session.owner, await call.profile_name())
        call.session.profile = name
        call.session.resolved_profile = name
        call.session.tab = None
        return Reply(
            f"this session now uses profile {name} ({status.driver}, "
            f"{'running' if status.running else 'not running yet'})"
        )
    deck = call.app.deck
    done = await (deck.start if action == "start" else deck.stop)(call.caller(), name)
    return Reply(f"profile {name}: {done.state}" + (f" ({done.detail})" if done.detail else ""))
