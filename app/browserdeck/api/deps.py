"""What routes need from the service: the profile, its running browser, the resolved tab."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fastapi import Request

if TYPE_CHECKING:
    from browserdeck.engine import Engine
    from browserdeck.service import ProfileContext, Service


def service_of(request: Request) -> Service:
    service: Service = request.app.state.service
    return service


def engine_of(request: Request) -> Engine:
    engine = service_of(request).engine
    assert engine is not None, "the engine starts before the API"
    return engine


def note(request: Request, **details: Any) -> None:
    """Say what this call did, for the activity log (tray panel, events).

    Kept in the request's scope state; the guard that reports every call
    (``api_call`` events) adds it to its entry. Never put secrets here: typed text
    goes in as its length only.
    """
    state = request.scope.setdefault("state", {})
    activity = state.setdefault("activity", {})
    activity.update({k: v for k, v in details.items() if v is not None})


def profile_of(request: Request, profile: str | None) -> ProfileContext:
    _note_agent(request)
    return service_of(request).profile(profile)


def _note_agent(request: Request) -> None:
    """Who calls (X-Browserdeck-Session), for a pooled remote profile's one-browser-per-session.

    A contextvar set in the request's own task: every ProfileContext method this request
    runs sees it, without a parameter threaded through each of them.
    """
    from browserdeck import remote

    session = (request.headers.get(remote.SESSION_HEADER) or "").strip()[:200]
    client = request.headers.get("X-Browserdeck-Client", "client")[:60]
    # Set even when absent: an in-process ASGI call runs in its caller's context.
    remote.CURRENT_AGENT.set((session, f"{client} {session[:24]}") if session else None)


@dataclass
class BrowserTarget:
    """The profile's browser is up (started on demand for managed profiles) and the tab resolved."""

    ctx: ProfileContext
    cdp_url: str
    target_id: str
    headers: dict[str, str]


async def browser_target(request: Request, profile: str | None, target_id: str | None) -> BrowserTarget:
    ctx = profile_of(request, profile)
    from browserdeck.service import QUIET_CLIENTS

    if request.headers.get("x-browserdeck-client") in QUIET_CLIENTS:
        # The panel only watches: it never starts a browser on demand. Its capture of a
        # tab whose browser the user just closed must not relaunch that browser (and, in
        # the moment before the exit watcher runs, swallow the "browser closed" notice).
        ctx.refuse_if_not_running()
    cdp_url = await ctx.ensure_browser()
    client = client_of(request)
    resolved = await ctx.resolve_target(target_id, client)
    ctx.note_used(client, resolved)
    note(request, profile=ctx.name, targetId=resolved)
    return BrowserTarget(ctx, cdp_url, resolved, ctx.headers)


def client_of(request: Request) -> str | None:
    """Who is calling, for the default tab: X-Browserdeck-Session (the CLI sends
    ``cli:<BROWSERDECK_CLIENT>``), else X-Browserdeck-Client."""
    return request.headers.get("x-browserdeck-session") or request.headers.get(
        "x-browserdeck-client"
    )
