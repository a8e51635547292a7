"""Snapshot, act, navigate, screenshot, console, offline, PDF and arming.

Routes only translate HTTP <-> the front door: the body (or the query) is the request
model, handed to ``Deck.on_tab``, which answers with the request's answer model
(``results.py``); each route's ``response_model`` publishes it, dumped with only the
keys that were set. Every POST body may carry ``targetId``; ``?targetId=`` works too
(the body wins).
"""

from __future__ import annotations

import typing
from typing import Annotated, Any, Literal, TypeVar

from fastapi import APIRouter, Body, Query, Request
from pydantic import BaseModel, ValidationError

from browserdeck import results as r
from browserdeck.api.deps import caller_of, deck_of
from browserdeck.door.request import TabRequest
from browserdeck.engine import options as o
from browserdeck.errors import InvalidInput

router = APIRouter(tags=["engine"])

ProfileQ = Annotated[str | None, Query(description="profile name; default: defaultProfile")]
TargetQ = Annotated[
    str | None,
    Query(alias="targetId", description="tab: CDP targetId or a unique prefix; default: yours"),
]
M = TypeVar("M", bound=BaseModel)
A = TypeVar("A")
CSS: dict[str, Any] = {"format": "css-selector"}  # as fields.Css publishes it


def _build(model: type[M], **values: Any) -> M:
    """A query route's request from its parameters (FastAPI checked their types)."""
    try:
        return model.model_validate({k: v for k, v in values.items() if v is not None})
    except ValidationError as exc:  # a rule of the model's own (a CSS-only selector)
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise InvalidInput(
            f"invalid request: {problems}", hint="see GET /openapi.json for the fields"
        ) from None


async def _on_tab(
    request: Request, profile: str | None, target_id: str | None, body: TabRequest[A]
) -> A:
    deck = deck_of(request)
    return await deck.on_tab(caller_of(request), body, profile=profile, target=target_id)


# Only the keys the answer set: the JSON is the engine's, no null it did not send. Each
# route's response_model is exactly its request's ``answer``: FastAPI serializes by the
# declared class, and would drop a subclass's own fields.
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
) -> r.Snapshot:
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


# The act kinds, as the models of the /act body declare them.
KINDS = [typing.get_args(m.model_fields["kind"].annotation)[0] for m in typing.get_args(o.AnyAct)]


@router.post(
    "/act",
    summary="Act on a tab: " + ", ".join(KINDS),
    response_model=r.ActResult,
    **WIRE,
)
async def act(
    request: Request,
    body: Annotated[o.Act, Body()],
    profile: ProfileQ = None,
    target_id: TargetQ = None,
) -> r.ActResult:
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
) -> r.Navigated:
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
) -> r.Screenshot:
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
) -> r.Console:
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
) -> r.Offline:
    return await _on_tab(request, profile, target_id, body)


@router.post(
    "/pdf", summary="PDF of the page (headless Chromium only)", response_model=r.Pdf, **WIRE
)
async def pdf(
    request: Request,
    body: Annotated[o.PdfOptions | None, Body()] = None,
    profile: ProfileQ = None,
    target_id: TargetQ = None,
) -> r.Pdf:
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
) -> r.Armed:
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
) -> r.Armed:
    return await _on_tab(request, profile, target_id, body or o.DialogOptions())
