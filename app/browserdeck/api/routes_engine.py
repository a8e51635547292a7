"""Snapshot, act, navigate, screenshot, console, offline, PDF and arming.

Routes only translate HTTP <-> the front door: parse the query or body into the
engine's typed options and hand them to ``Deck.on_tab``, which resolves the profile's
browser and the tab and returns the typed answer (``results.py``); each route's
``response_model`` publishes it, dumped with only the keys that were set. Every POST body may carry
``targetId``; ``?targetId=`` works too (the body wins).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeVar

from fastapi import APIRouter, Body, Query, Request
from pydantic import BaseModel

from browserdeck import results as r
from browserdeck.api.deps import caller_of, deck_of
from browserdeck.deck import TabRequest, build
from browserdeck.engine import options as o

router = APIRouter(tags=["engine"])

ProfileQ = Annotated[str | None, Query(description="profile name; default: defaultProfile")]
TargetQ = Annotated[
    str | None,
    Query(alias="targetId", description="tab: CDP targetId or a unique prefix; default: yours"),
]
M = TypeVar("M", bound=BaseModel)
HINT = "see GET /openapi.json for the fields this route takes"
CSS: dict[str, Any] = {"format": "css-selector"}  # as fields.Css publishes it


def _build(model: type[M], **values: Any) -> M:
    return build(model, values, hint=HINT)


async def _on_tab(
    request: Request, profile: str | None, target_id: str | None, body: TabRequest
) -> r.TabResult:
    return await deck_of(request).on_tab(caller_of(request), profile, target_id, body)


# Only the keys the answer set: the JSON is the engine's, no null it did not send. Each
# route's response_model is exactly the class Deck.answer_type gives its request: FastAPI
# serializes by the declared class, and would drop a subclass's own fields.
WIRE: dict[str, Any] = {"response_model_exclude_unset": True}


@router.get(
    "/snapshot",
    summary="Accessibility snapshot of a tab, with element refs",
    response_model=r.Snapshot,
    **WIRE,
)
async def snapshot(
    request: Request,
    profile: ProfileQ = None,
    target_id: TargetQ = None,
    format: Annotated[o.SnapshotFormat, Query(description="ai (default), role or aria")] = "ai",
    refs: Annotated[o.RefMode | None, Query(description="aria or role ref resolution")] = None,
    interactive: Annotated[bool, Query(description="only actionable elements, flat")] = False,
    compact: Annotated[bool, Query(description="drop unnamed wrappers")] = False,
    depth: Annotated[int | None, Query(ge=1, le=200)] = None,
    selector: Annotated[
        str | None, Query(description="CSS: snapshot only this", json_schema_extra=CSS)
    ] = None,
    frame: Annotated[
        str | None, Query(description="CSS of an iframe: inside it", json_schema_extra=CSS)
    ] = None,
    limit: Annotated[int | None, Query(ge=1, le=20_000, description="max lines/nodes")] = None,
    max_chars: Annotated[int | None, Query(alias="maxChars", ge=500, le=2_000_000)] = None,
    viewport: Annotated[bool, Query(description="only what is inside the viewport")] = False,
) -> r.TabResult:
    opts = _build(
        o.SnapshotOptions,
        format=format,
        refs=refs,
        interactive=interactive,
        compact=compact,
        depth=depth,
        selector=selector,
        frame=frame,
        limit=limit,
        max_chars=max_chars,
        viewport=viewport,
    )
    return await _on_tab(request, profile, target_id, opts)


@router.post(
    "/act",
    summary="Act on a tab: click, type, press, hover, drag, select, fill, "
    "resize, wait, evaluate, close, scrollIntoView",
    response_model=r.ActResult,
    **WIRE,
)
async def act(
    request: Request,
    body: Annotated[o.Act, Body()],
    profile: ProfileQ = None,
    target_id: TargetQ = None,
) -> r.TabResult:
    return await _on_tab(request, profile, target_id, body)


@router.post(
    "/navigate",
    summary="Go to a URL, or back/forward/reload (action)",
    response_model=r.Navigated,
    **WIRE,
)
async def navigate(
    request: Request,
    body: o.NavigateOptions,
    profile: ProfileQ = None,
    target_id: TargetQ = None,
) -> r.TabResult:
    return await _on_tab(request, profile, target_id, body)


@router.post(
    "/screenshot",
    summary="Screenshot (viewport, full page or element; labels)",
    response_model=r.Screenshot,
    **WIRE,
)
async def screenshot(
    request: Request,
    body: Annotated[o.ScreenshotOptions | None, Body()] = None,
    profile: ProfileQ = None,
    target_id: TargetQ = None,
) -> r.TabResult:
    return await _on_tab(request, profile, target_id, body or o.ScreenshotOptions())


@router.get(
    "/console",
    summary="Console messages, page errors and network requests of a tab",
    response_model=r.Console,
    **WIRE,
)
async def console(
    request: Request,
    profile: ProfileQ = None,
    target_id: TargetQ = None,
    level: Annotated[
        Literal["debug", "info", "warning", "error"] | None,
        Query(description="minimum level; default: all"),
    ] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 200,
    clear: bool = False,
) -> r.TabResult:
    opts = _build(o.ConsoleOptions, level=level, limit=limit, clear=clear)
    return await _on_tab(request, profile, target_id, opts)


@router.post(
    "/set/offline",
    summary="Emulate offline for a tab (and its origin's service workers), or back online",
    response_model=r.Offline,
    **WIRE,
)
async def set_offline(
    request: Request,
    body: o.OfflineOptions,
    profile: ProfileQ = None,
    target_id: TargetQ = None,
) -> r.TabResult:
    return await _on_tab(request, profile, target_id, body)


@router.post(
    "/pdf", summary="PDF of the page (headless Chromium only)", response_model=r.Pdf, **WIRE
)
async def pdf(
    request: Request,
    body: Annotated[o.PdfOptions | None, Body()] = None,
    profile: ProfileQ = None,
    target_id: TargetQ = None,
) -> r.TabResult:
    return await _on_tab(request, profile, target_id, body or o.PdfOptions())


@router.post(
    "/hooks/file-chooser",
    summary="Upload files: into an input now, via a click, or "
    "arm the next file chooser (default and max 2 minutes)",
    response_model=r.Armed,
    **WIRE,
)
async def file_chooser(
    request: Request,
    body: o.FileChooserOptions,
    profile: ProfileQ = None,
    target_id: TargetQ = None,
) -> r.TabResult:
    return await _on_tab(request, profile, target_id, body)


@router.post(
    "/hooks/dialog",
    summary="Arm the answer to the next alert/confirm/prompt (default and max 2 minutes)",
    response_model=r.Armed,
    **WIRE,
)
async def dialog(
    request: Request,
    body: Annotated[o.DialogOptions | None, Body()] = None,
    profile: ProfileQ = None,
    target_id: TargetQ = None,
) -> r.TabResult:
    return await _on_tab(request, profile, target_id, body or o.DialogOptions())
