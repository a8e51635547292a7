"""The FastAPI app: routes translate HTTP <-> service calls, nothing more.

Errors: every ``BrowserdeckError`` becomes ``{"error": {"code", "message", "hint"}}``
with the status ``api/errors.py`` maps it to; request validation errors become 400 with the field named; any
other exception becomes a 500 with the exception text (never a traceback) and is
logged with its traceback.
"""

from __future__ import annotations

import json
import logging
import re
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from browserdeck import __version__
from browserdeck.api.errors import status_of
from browserdeck.client import CLIENT_NAME as CLI_CLIENT_NAME
from browserdeck.errors import BrowserdeckError
from browserdeck.util import paths
from browserdeck.util.fastjson import utf8

if TYPE_CHECKING:
    from browserdeck.deck import Deck
    from browserdeck.errors import Via

log = logging.getLogger(__name__)


class AnswerJSON(JSONResponse):
    """Every JSON answer of the API, errors included: Starlette's, encoded by
    ``fastjson.utf8`` so a lone surrogate of page text (an answer's, or an error message
    quoting the page: "the script threw a\\ud800") is U+FFFD rather than a
    UnicodeEncodeError inside the handler (a bare 500)."""

    def render(self, content: Any) -> bytes:
        return utf8(json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":")))


def error_response(
    status: int,
    code: str,
    message: str,
    hint: str | None,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    return AnswerJSON(
        {"error": {"code": code, "message": message, "hint": hint}}, status, headers=headers
    )


def log_server_error(request: Request, status: int, code: str, message: str) -> None:
    """Every 5xx leaves one line: the route, the profile and the cause."""
    if status < 500:
        return
    profile = request.query_params.get("profile") or "(default)"
    log.error(
        "%s %s profile=%s -> %d %s: %s",
        request.method,
        request.url.path,
        profile,
        status,
        code,
        message,
    )


_METHODS = frozenset({"get", "put", "post", "delete", "options", "head", "patch", "trace"})


def _allowed_methods(request: Request) -> str:
    """The methods the spec documents at this path: its own path's if it has one (OpenAPI
    matches a concrete path before a templated one), else every template's that matches.
    Starlette's Allow names the first route whose pattern matched (DELETE of
    /tabs/{target_id} for /tabs/keep, which is POST)."""
    path = request.url.path
    paths: dict[str, Any] = request.app.openapi().get("paths", {})
    matching = [paths[path]] if path in paths else [
        ops
        for template, ops in paths.items()
        if re.fullmatch(re.sub(r"\\\{[^}]*\\\}", "[^/]+", re.escape(template)), path)
    ]
    return ", ".join(sorted({m.upper() for ops in matching for m in ops if m in _METHODS}))


def create_app(deck: Deck) -> FastAPI:
    """The FastAPI app of the API's routes, on the front door ``deck`` (shared with the
    routes served beside it, MCP). Not guarded: ``api.staged.guarded`` puts the guard
    round it and those routes (the server does)."""
    app = FastAPI(
        title="browserdeck control API",
        version=__version__,
        description="Drive real browser profiles: tabs, snapshots with element refs, actions, "
        "screenshots. Every route but /health needs 'Authorization: Bearer <token>'; "
        "every route takes ?profile=NAME.",
        docs_url=None,
        redoc_url=None,
        default_response_class=AnswerJSON,
    )
    # The front door every route calls; mounted routes (MCP) share it.
    app.state.deck = deck

    @app.exception_handler(BrowserdeckError)
    async def _browserdeck_error(request: Request, exc: BrowserdeckError) -> JSONResponse:
        status = status_of(exc)
        log_server_error(request, status, exc.code, exc.message)
        # What to do next in the caller's words: the CLI's commands to the CLI, else routes.
        via: Via = "cli" if request.headers.get("x-browserdeck-client") == CLI_CLIENT_NAME else "api"
        return error_response(status, exc.code, exc.message, exc.hint_for(via))

    @app.exception_handler(RequestValidationError)
    async def _validation_error(_: Request, exc: RequestValidationError) -> JSONResponse:
        problems = []
        for err in exc.errors():
            where = ".".join(str(p) for p in err.get("loc", ()) if p != "body")
            # An empty location is the body itself (missing, not an object, not JSON).
            problems.append(f"{where or 'the body'}: {err.get('msg')}")
        return error_response(
            400,
            "invalid_input",
            "invalid request: " + "; ".join(problems),
            "see GET /openapi.json for the fields this route takes",
        )

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        # Starlette's own 404/405 and unreadable bodies: the same error shape as the rest.
        status = exc.status_code
        where = f"{request.method} {request.url.path}"
        if status == 404:
            return error_response(
                404,
                "no_route",
                f"no route {where}",
                "see GET /openapi.json for the routes; ids in a path "
                "(targetId, profile name) cannot contain '/'",
            )
        if status == 405:
            allowed = _allowed_methods(request) or next(
                (v for k, v in (exc.headers or {}).items() if k.lower() == "allow"), ""
            )
            return error_response(
                405,
                "method_not_allowed",
                f"{where} is not allowed",
                f"this route takes {allowed or 'another method'}; see GET /openapi.json",
                headers={"Allow": allowed} if allowed else None,
            )
        if status == 400:
            return error_response(
                400,
                "invalid_input",
                f"cannot read the request body: {exc.detail}",
                'send a JSON object encoded as UTF-8, e.g. {"url": "https://example.com"}',
            )
        log_server_error(request, status, "http_error", str(exc.detail))
        return error_response(status, "http_error", str(exc.detail), None)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception(
            "unexpected error in %s %s profile=%s",
            request.method,
            request.url.path,
            request.query_params.get("profile") or "(default)",
        )
        return error_response(
            500,
            "internal",
            f"{type(exc).__name__}: {exc}",
            f"this is a browserdeck bug; details are in {paths.log_dir()}",
        )

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = finish_openapi(FastAPI.openapi(app))
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]

    from browserdeck.api import (
        routes_core,
        routes_engine,
        routes_logins,
        routes_network,
        routes_recording,
    )

    app.include_router(routes_core.router)
    app.include_router(routes_engine.router)
    app.include_router(routes_recording.router)
    app.include_router(routes_logins.router)
    app.include_router(routes_network.router)
    return app


# Every status the API answers with an error body, and what it means. Documented on every
# operation: which one a call gets depends on the profile's state as much as on the route.
ERROR_STATUSES = {
    "400": "invalid input (the message names the field)",
    "401": "missing or wrong API token",
    "403": "refused: not from this machine, a web page's Origin, a non-loopback Host, or "
    "a file: URL while allowFileUrls is off",
    "404": "no such profile, tab, ref or route; a chrome:// page this browser does not "
    "have (page_not_available)",
    "409": "conflict: a stale or ambiguous ref, a crashed or hung tab (tab_crashed, "
    "tab_hung), a busy port, a config changed on disk, a call the profile's kind does not "
    "take (not_remote, not_managed)",
    "413": "the request body is too large",
    "500": "a browserdeck bug (logged with its traceback)",
    "502": "the page could not be loaded (navigation_failed)",
    "503": "the browser, extension or engine is not available (browser_gone, "
    "engine_restarting, disabled …)",
    "504": "the call did not finish within its deadline (timeout, tab_unresponsive)",
}

ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message", "hint"],
            "properties": {
                "code": {"type": "string", "description": "stable, machine-readable"},
                "message": {"type": "string", "description": "what happened and why"},
                "hint": {
                    "type": ["string", "null"],
                    "description": "what to do next",
                },
            },
        }
    },
}


# What an answer's fields lead to (OpenAPI links): a tab opened can be read, acted on and
# closed by its targetId; a profile created can be started, listed and deleted by its
# name; a tab closed or a profile deleted is gone for every call after. Clients (and the
# fuzzer's stateful phase) follow them. {(path, method): {link: (path, method, params)}}
_TAB = "$response.body#/targetId"
_CREATED = "$response.body#/profile"
LINKS: dict[tuple[str, str], dict[str, tuple[str, str, dict[str, str]]]] = {
    ("/tabs/open", "post"): {
        "SnapshotTab": ("/snapshot", "get", {"query.targetId": _TAB}),
        "ConsoleOfTab": ("/console", "get", {"query.targetId": _TAB}),
        "CloseTab": ("/tabs/{target_id}", "delete", {"path.target_id": _TAB}),
    },
    ("/tabs/{target_id}", "delete"): {
        "SnapshotClosedTab": (
            "/snapshot", "get", {"query.targetId": "$request.path.target_id"}
        ),
        "CloseClosedTab": (
            "/tabs/{target_id}", "delete", {"path.target_id": "$request.path.target_id"}
        ),
    },
    ("/profiles/create", "post"): {
        "StatusOfProfile": ("/", "get", {"query.profile": _CREATED}),
        "TabsOfProfile": ("/tabs", "get", {"query.profile": _CREATED}),
        "DeleteProfile": ("/profiles/{name}", "delete", {"path.name": _CREATED}),
    },
    ("/profiles/{name}", "delete"): {
        "StatusOfDeletedProfile": ("/", "get", {"query.profile": "$request.path.name"}),
    },
}


def _add_links(spec: dict[str, Any]) -> None:
    paths = spec.get("paths", {})
    for (path, method), links in LINKS.items():
        answer = paths.get(path, {}).get(method, {}).get("responses", {}).get("200")
        if answer is None:
            continue
        out = answer.setdefault("links", {})
        for name, (to_path, to_method, params) in links.items():
            target = paths.get(to_path, {}).get(to_method, {})
            if "operationId" in target:
                out[name] = {"operationId": target["operationId"], "parameters": params}


def finish_openapi(spec: dict[str, Any]) -> dict[str, Any]:
    """The spec as the server really answers: no 422 (validation errors are 400s), every
    error status with the error body, the profile-name rule on every profile name, and
    the links between answers and the calls they lead to."""
    from browserdeck.config import PROFILE_NAME_RE

    schemas = spec.setdefault("components", {}).setdefault("schemas", {})
    schemas.pop("HTTPValidationError", None)
    schemas.pop("ValidationError", None)
    schemas["Error"] = ERROR_SCHEMA
    name_schema = {"type": "string", "pattern": PROFILE_NAME_RE.pattern}
    # ?profile= (empty) means the default profile, as leaving it out does.
    query_schema = {"type": "string", "pattern": "^(" + PROFILE_NAME_RE.pattern[1:-1] + ")?$"}
    for path, ops in spec.get("paths", {}).items():
        for op in ops.values():
            if not isinstance(op, dict):
                continue
            responses = op.setdefault("responses", {})
            responses.pop("422", None)
            for status, why in ERROR_STATUSES.items():
                responses.setdefault(
                    status,
                    {
                        "description": why,
                        "content": {
                            "application/json": {"schema": {"$ref": "#/components/schemas/Error"}}
                        },
                    },
                )
            for param in op.get("parameters", []):
                if param.get("in") == "query" and param.get("name") == "profile":
                    param["schema"] = dict(query_schema, description="profile name")
                elif (
                    param.get("in") == "path"
                    and param.get("name") == "name"
                    and path.startswith("/profiles/")
                ):
                    param["schema"] = dict(name_schema, description="profile name")
    _add_links(spec)
    return spec
