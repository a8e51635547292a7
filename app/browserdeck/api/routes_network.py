"""A tab's network: routes, online/offline, HAR recordings, the requests it made.

As in ``routes_engine.py``, a route only translates HTTP to the front door: the body
(or the query) is the request model (``engine/netoptions.py``). Routes and recordings
belong to the caller's agent session (``X-Browserdeck-Session``; else the client).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Path, Query, Request

from browserdeck import results as r
from browserdeck import results_network as rn
from browserdeck.api.routes_engine import _QUERY, WIRE, ProfileQ, TargetQ, _on_tab
from browserdeck.engine import netoptions as n

router = APIRouter(tags=["network"])


class RouteListQuery(n.RouteListOptions):
    model_config = _QUERY


class UnrouteQuery(n.UnrouteOptions):
    model_config = _QUERY


class RequestsQuery(n.NetworkRequestsOptions):
    model_config = _QUERY


@router.post(
    "/network/routes",
    summary="Add a route: mock (status, body), change headers of, or abort matching requests",
    response_model=rn.Routes,
    **WIRE,
)
async def add_route(
    request: Request, body: n.RouteOptions, profile: ProfileQ = None, target_id: TargetQ = None
) -> rn.Routes:
    return await _on_tab(request, profile, target_id, body)


@router.get(
    "/network/routes",
    summary="The routes you set and the profile-wide ones",
    response_model=rn.Routes,
    **WIRE,
)
async def list_routes(
    request: Request,
    query: Annotated[RouteListQuery, Query()],
    profile: ProfileQ = None,
    target_id: TargetQ = None,
) -> rn.Routes:
    return await _on_tab(request, profile, target_id, query)


@router.delete(
    "/network/routes",
    summary="Remove your routes (those of a pattern, or all); scope=profile: profile-wide ones",
    response_model=rn.Routes,
    **WIRE,
)
async def remove_routes(
    request: Request,
    query: Annotated[UnrouteQuery, Query()],
    profile: ProfileQ = None,
    target_id: TargetQ = None,
) -> rn.Routes:
    return await _on_tab(request, profile, target_id, query)


@router.post(
    "/network/state",
    summary="Take a tab (and its origin's service workers) offline, or back online",
    response_model=r.Offline,
    **WIRE,
)
async def network_state(
    request: Request,
    body: n.NetworkStateOptions,
    profile: ProfileQ = None,
    target_id: TargetQ = None,
) -> r.Offline:
    return await _on_tab(request, profile, target_id, body)


@router.post(
    "/network/har/start",
    summary="Start recording a HAR of a tab (session: of every tab your session works in)",
    response_model=rn.Har,
    **WIRE,
)
async def har_start(
    request: Request,
    body: Annotated[n.HarStartOptions | None, Body()] = None,
    profile: ProfileQ = None,
    target_id: TargetQ = None,
) -> rn.Har:
    return await _on_tab(request, profile, target_id, body or n.HarStartOptions())


@router.post(
    "/network/har/stop",
    summary="Stop your HAR recording and write the file; answers its absolute path",
    response_model=rn.Har,
    **WIRE,
)
async def har_stop(
    request: Request,
    body: Annotated[n.HarStopOptions | None, Body()] = None,
    profile: ProfileQ = None,
    target_id: TargetQ = None,
) -> rn.Har:
    return await _on_tab(request, profile, target_id, body or n.HarStopOptions())


@router.get(
    "/network/requests",
    summary="A tab's network requests, numbered; filters: URL text, type, method, status",
    response_model=rn.NetworkRequests,
    **WIRE,
)
async def requests(
    request: Request,
    query: Annotated[RequestsQuery, Query()],
    profile: ProfileQ = None,
    target_id: TargetQ = None,
) -> rn.NetworkRequests:
    return await _on_tab(request, profile, target_id, query)


@router.get(
    "/network/requests/{index}",
    summary="One request's headers and body (bounded; credentials redacted)",
    response_model=rn.RequestDetail,
    **WIRE,
)
async def request_detail(
    request: Request,
    index: Annotated[int, Path(ge=1, description="the request's number in the tab")],
    part: Annotated[n.Part | None, Query(description="only this part")] = None,
    max_chars: Annotated[int | None, Query(alias="maxChars", ge=100, le=1_000_000)] = None,
    profile: ProfileQ = None,
    target_id: TargetQ = None,
) -> rn.RequestDetail:
    values = {"index": index, "part": part, "maxChars": max_chars}
    detail = n.NetworkRequestOptions.of(values, where="GET /network/requests/{index}")
    return await _on_tab(request, profile, target_id, detail)
