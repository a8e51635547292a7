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
    return service_of(request).profile(profile)


@dataclass
class BrowserTarget:
    """The profile's browser is up (started on demand for managed profiles) and the tab resolved."""

    ctx: ProfileContext
    cdp_url: str
    target_id: str
    headers: dict[str, str]


async def browser_target(request: Request, profile: str | None, target_id: str | None) -> BrowserTarget:
    ctx = profile_of(request, profile)
    cdp_url = await ctx.ensure_browser()
    resolved = await ctx.resolve_target(target_id)
    note(request, profile=ctx.name, targetId=resolved)
    return BrowserTarget(ctx, cdp_url, resolved, ctx.headers)
