"""Snapshot, act, navigate, screenshot, console, offline, PDF and arming.

Routes only translate HTTP <-> engine: resolve the profile's browser and the tab
(``browser_target``), build the engine's typed options, return its dict. Every
POST body may carry ``targetId``; ``?targetId=`` works too (the body wins).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeVar

from fastapi import APIRouter, Body, Query, Request
from pydantic import BaseModel, ValidationError

from browserdeck import confine, urls
from browserdeck.api.deps import BrowserTarget, browser_target, engine_of, note, service_of
from browserdeck.engine import options as o
from browserdeck.errors import InvalidInput

router = APIRouter(tags=["engine"])

ProfileQ = Annotated[str | None, Query(description="profile name; default: defaultProfile")]
TargetQ = Annotated[
    str | None,
    Query(alias="targetId", description="tab: CDP targetId or a unique prefix; default: yours"),
]
M = TypeVar("M", bound=BaseModel)


def _build(model: type[M], **values: Any) -> M:
    try:
        return model.model_validate({k: v for k, v in values.items() if v is not None})
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
        )
        raise InvalidInput(
            f"invalid request: {problems}",
            hint="see GET /openapi.json for the fields this route takes",
        ) from None


async def _target(request: Request, profile: str | None, target_id: str | None) -> BrowserTarget:
    return await browser_target(request, profile, target_id)


def _tabs_changed(request: Request, t: BrowserTarget) -> None:
    service_of(request).events.tabs_changed.send(profile=t.ctx.name)


@router.get("/snapshot", summary="Accessibility snapshot of a tab, with element refs")
async def snapshot(
    request: Request,
    profile: ProfileQ = None,
    target_id: TargetQ = None,
    format: Annotated[o.SnapshotFormat, Query(description="ai (default), role or aria")] = "ai",
    refs: Annotated[o.RefMode | None, Query(description="aria or role ref resolution")] = None,
    interactive: Annotated[bool, Query(description="only actionable elements, flat")] = False,
    compact: Annotated[bool, Query(description="drop unnamed wrappers")] = False,
    depth: Annotated[int | None, Query(ge=1, le=200)] = None,
    selector: Annotated[str | None, Query(description="CSS: snapshot only this")] = None,
    frame: Annotated[str | None, Query(description="CSS of an iframe: inside it")] = None,
    limit: Annotated[int | None, Query(ge=1, le=20_000, description="max lines/nodes")] = None,
    max_chars: Annotated[int | None, Query(alias="maxChars", ge=500, le=2_000_000)] = None,
) -> dict[str, Any]:
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
    )
    t = await _target(request, profile, target_id)
    return await engine_of(request).snapshot(t.cdp_url, t.target_id, t.headers, opts)


@router.post(
    "/act",
    summary="Act on a tab: click, type, press, hover, drag, select, fill, "
    "resize, wait, evaluate, close, scrollIntoView",
)
async def act(
    request: Request,
    body: Annotated[o.Act, Body()],
    profile: ProfileQ = None,
    target_id: TargetQ = None,
) -> dict[str, Any]:
    note(request, **_act_details(body))
    if body.wait_ms is None:  # the actionWaitMs setting bounds the wait for consequences
        body = body.model_copy(update={"wait_ms": service_of(request).config.action_wait_ms})
    t = await _target(request, profile, body.target_id or target_id)
    try:
        out = await engine_of(request).act(t.cdp_url, t.target_id, t.headers, body)
    finally:
        await _note_elements(request, t, body)
    if out.get("closed") or out.get("navigated"):
        _tabs_changed(request, t)
    return out


def _act_details(body: o.AnyAct) -> dict[str, Any]:
    """Kind, ref(s) and what was typed (its length only: it may be a password)."""
    details: dict[str, Any] = {"kind": body.kind}
    names = {"ref": "ref", "start_ref": "startRef", "end_ref": "endRef", "key": "key"}
    for field, name in names.items():
        value = getattr(body, field, None)
        if isinstance(value, str) and value:
            details[name] = value
    text = getattr(body, "text", None)
    if body.kind in ("type", "fill") and isinstance(text, str):
        details["typedChars"] = len(text)
    values = getattr(body, "values", None)
    if body.kind == "select" and isinstance(values, list):
        details["values"] = [str(v)[:60] for v in values[:5]]
    return details


async def _note_elements(request: Request, t: BrowserTarget, body: o.AnyAct) -> None:
    """The role and name of the element(s) acted on, from the tab's ref table."""
    refs = [getattr(body, f, None) for f in ("ref", "start_ref")]
    wanted = [r for r in refs if isinstance(r, str) and r]
    if not wanted:
        return
    try:
        state = await engine_of(request).pool.page(t.cdp_url, t.target_id, t.headers)
    except Exception:  # the tab or browser went: the error says so, the name is extra
        return
    table = state.table
    if table is None:
        return
    by_ref = {info.ref: info for info in table.refs.values()}
    from browserdeck.engine.refs import normalize

    info = by_ref.get(normalize(wanted[0]))
    if info is not None:
        note(request, element=info.describe())


@router.post("/navigate", summary="Go to a URL, or back/forward/reload (action)")
async def navigate(
    request: Request,
    body: o.NavigateOptions,
    profile: ProfileQ = None,
    target_id: TargetQ = None,
) -> dict[str, Any]:
    if body.action == "goto":
        allow = service_of(request).config.allow_file_urls
        body = body.model_copy(update={"url": urls.prepare(body.url, allow_file_urls=allow)})
    note(request, kind=body.action, url=body.url if body.action == "goto" else None)
    t = await _target(request, profile, body.target_id or target_id)
    out = await engine_of(request).navigate(t.cdp_url, t.target_id, t.headers, body)
    _tabs_changed(request, t)
    return out


@router.post("/screenshot", summary="Screenshot (viewport, full page or element; labels)")
async def screenshot(
    request: Request,
    body: Annotated[o.ScreenshotOptions | None, Body()] = None,
    profile: ProfileQ = None,
    target_id: TargetQ = None,
) -> dict[str, Any]:
    opts = body or o.ScreenshotOptions()
    t = await _target(request, profile, opts.target_id or target_id)
    return await engine_of(request).screenshot(t.cdp_url, t.target_id, t.headers, opts)


@router.get("/console", summary="Console messages, page errors and network requests of a tab")
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
) -> dict[str, Any]:
    opts = _build(o.ConsoleOptions, level=level, limit=limit, clear=clear)
    t = await _target(request, profile, target_id)
    return await engine_of(request).console(t.cdp_url, t.target_id, t.headers, opts)


@router.post(
    "/set/offline",
    summary="Emulate offline for a tab (and its origin's service workers), or back online",
)
async def set_offline(
    request: Request,
    body: o.OfflineOptions,
    profile: ProfileQ = None,
    target_id: TargetQ = None,
) -> dict[str, Any]:
    t = await _target(request, profile, body.target_id or target_id)
    return await engine_of(request).set_offline(t.cdp_url, t.target_id, t.headers, body)


@router.post("/pdf", summary="PDF of the page (headless Chromium only)")
async def pdf(
    request: Request,
    body: Annotated[o.PdfOptions | None, Body()] = None,
    profile: ProfileQ = None,
    target_id: TargetQ = None,
) -> dict[str, Any]:
    opts = body or o.PdfOptions()
    t = await _target(request, profile, opts.target_id or target_id)
    return await engine_of(request).pdf(t.cdp_url, t.target_id, t.headers, opts)


@router.post(
    "/hooks/file-chooser",
    summary="Upload files: into an input now, via a click, or "
    "arm the next file chooser (default and max 2 minutes)",
)
async def file_chooser(
    request: Request,
    body: o.FileChooserOptions,
    profile: ProfileQ = None,
    target_id: TargetQ = None,
) -> dict[str, Any]:
    # Only files inside the caller's roots and uploadRoots (issue 10 item 5).
    allowed = confine.allowed_roots(body.roots, service_of(request).config.upload_roots)
    files = [str(confine.readable_file(p, allowed)) for p in body.paths]
    body = body.model_copy(update={"paths": files})
    if body.wait_ms is None:  # setting files is an action: the actionWaitMs setting bounds it
        body = body.model_copy(update={"wait_ms": service_of(request).config.action_wait_ms})
    t = await _target(request, profile, body.target_id or target_id)
    return await engine_of(request).arm_file_chooser(t.cdp_url, t.target_id, t.headers, body)


@router.post(
    "/hooks/dialog",
    summary="Arm the answer to the next alert/confirm/prompt (default and max 2 minutes)",
)
async def dialog(
    request: Request,
    body: Annotated[o.DialogOptions | None, Body()] = None,
    profile: ProfileQ = None,
    target_id: TargetQ = None,
) -> dict[str, Any]:
    opts = body or o.DialogOptions()
    t = await _target(request, profile, opts.target_id or target_id)
    return await engine_of(request).arm_dialog(t.cdp_url, t.target_id, t.headers, opts)
