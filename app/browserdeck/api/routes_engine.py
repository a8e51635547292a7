"""Snapshot, act, navigate, screenshot, console, offline, PDF and arming.

Routes only translate HTTP <-> the front door: the body (or the query) is the request
model, handed to ``Deck.on_tab``, which answers with the request's answer model
(``results.py``); each route's ``response_model`` publishes it, dumped with only the
keys that were set. Every POST body may carry ``targetId``; ``?targetId=`` works too
(the body wins).
"""

from __future__ import annotations

import typing
from typing import Annotated, Any, TypeVar

from fastapi import APIRouter, Body, Query, Request
from pydantic import ConfigDict

from browserdeck import results as r
from browserdeck.api.deps import caller_of, deck_of
from browserdeck.door.request import TabRequest
from browserdeck.engine import options as o
from browserdeck.engine import pagetext

router = APIRouter(tags=["engine"])

ProfileQ = Annotated[str | None, Query(description="profile name; default: defaultProfile")]
TargetQ = Annotated[
    str | None,
    Query(alias="targetId", description="tab: CDP targetId or a unique prefix; default: yours"),
]
A = TypeVar("A")
# A query's values are text: read as the model's types (lax), the route's other
# parameters (profile, targetId) left to them. The fields, their bounds and descriptions
# are the request model's own, checked once.
_QUERY = ConfigDict(strict=False, extra="ignore")


class SnapshotQuery(o.SnapshotOptions):
    model_config = _QUERY


class ConsoleQuery(o.ConsoleOptions):
    model_config = _QUERY


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
    query: Annotated[SnapshotQuery, Query()],
    profile: ProfileQ = None,
    target_id: TargetQ = None,
) -> r.Snapshot:
    answer = await _on_tab(request, profile, target_id, query)
    if answer.format == "aria":
        return answer
    # Page text quoted as MCP quotes it (engine/pagetext.py): a CLI or HTTP agent reads
    # this text too, and a name must never read as a ref or a new line. The marker of a
    # cut text is the engine's own last line (a page's lines are never a bare "[").
    text, marker = answer.snapshot, ""
    if answer.truncated is not None:
        head, sep, last = text.rpartition("\n")
        if last.startswith("[... truncated"):
            text, marker = head, sep + last
    return answer.model_copy(update={"snapshot": pagetext.escape_snapshot(text) + marker})


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
    query: Annotated[ConsoleQuery, Query()],
    profile: ProfileQ = None,
    target_id: TargetQ = None,
) -> r.Console:
    return await _on_tab(request, profile, target_id, query)


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
