"""Recorded agent sessions (list, read, export) and taking a browser over (recording/)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Query, Request

from browserdeck import recorded as rec
from browserdeck.api.deps import caller_of, deck_of
from browserdeck.door import admin

router = APIRouter()

WIRE: dict[str, Any] = {"response_model_exclude_unset": True}
ProfileQ = Annotated[str | None, Query(description="profile name; default: defaultProfile")]


@router.get(
    "/sessions",
    summary="Recorded agent sessions, the newest first (calls, errors, when)",
    response_model=rec.RecordedSessions,
)
async def sessions(request: Request) -> rec.RecordedSessions:
    return await deck_of(request).list_sessions(caller_of(request))


@router.get(
    "/sessions/{session_id}",
    summary="A recorded session's timeline: every call, with its images' names",
    response_model=rec.RecordedSession,
)
async def session(request: Request, session_id: str) -> rec.RecordedSession:
    return await deck_of(request).get_session(caller_of(request), session_id)


@router.post(
    "/sessions/{session_id}/export",
    summary="Write a recorded session as a Playwright trace (.zip), one HTML file or a WebM; "
    "answers the file's absolute path",
    response_model=rec.SessionExport,
    **WIRE,
)
async def export_session(
    request: Request,
    session_id: str,
    body: Annotated[admin.ExportSession | None, Body()] = None,
) -> rec.SessionExport:
    asked = body or admin.ExportSession()
    return await deck_of(request).export_session(
        caller_of(request), asked.model_copy(update={"session": session_id})
    )


@router.post(
    "/take-over",
    summary="Take the profile's browser over: agents' calls on it wait (takeOverWaitSeconds), "
    "then are refused, until you hand it back",
    response_model=rec.TakeOverState,
    **WIRE,
)
async def take_over(request: Request, profile: ProfileQ = None) -> rec.TakeOverState:
    return await deck_of(request).take_over(caller_of(request), profile)


@router.post(
    "/hand-back",
    summary="Hand the profile's browser back to the agents (their next answer says you acted)",
    response_model=rec.TakeOverState,
    **WIRE,
)
async def hand_back(request: Request, profile: ProfileQ = None) -> rec.TakeOverState:
    return await deck_of(request).hand_back(caller_of(request), profile)
