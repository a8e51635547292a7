"""The composition root: builds the service with its ways in and wires them together.

Everything below this module is built without knowing what sits on top of it: the
service (profiles, browsers, relays, engine) never imports the API, the API never
imports MCP. Here they meet: the service gets a factory for its control API, the
API gets MCP mounted at ``/mcp``, and the tray's "stop all agents" gets a way to end
MCP sessions and release their tab claims. ``browserdeck serve`` and the tray app
both build their service here (tests/test_layers.py keeps it on top).
"""

from __future__ import annotations

from pathlib import Path

from browserdeck.api.server import ApiServer
from browserdeck.mcpserver import claims
from browserdeck.mcpserver import http as mcp_http
from browserdeck.service import Service


def control_api(service: Service, port: int) -> ApiServer:
    """The control API on ``port`` with MCP over streamable HTTP at ``/mcp``."""
    return ApiServer(
        service,
        port=port,
        extend=lambda app: mcp_http.mount(app, service),
        # End MCP streams first: an open event stream would otherwise hold uvicorn's
        # graceful shutdown for its whole timeout.
        before_stop=mcp_http.shutdown,
    )


async def release_agents(service: Service) -> tuple[int, dict[str, set[str]]]:
    """End the MCP sessions at ``/mcp`` and release every MCP server's tab claims.

    Agents in their own ``browserdeck mcp`` process lose their claims (and, through
    ``Service.stop_all_agents``, the tabs), and must start again.
    """
    api = service.api
    endpoint = mcp_http.endpoint_of(api.app) if isinstance(api, ApiServer) else None
    sessions = await endpoint.end_all_sessions() if endpoint is not None else 0
    held: dict[str, set[str]] = {}
    for claim in claims.release_all():
        held.setdefault(claim.profile, set()).add(claim.target_id)
    return sessions, held


def build_service(
    *,
    force_headless: bool = False,
    control_port: int | None = None,
    serve_api: bool = True,
    run_relays: bool = True,
    config_path: Path | None = None,
    prelaunch: bool = False,
) -> Service:
    """The service as ``browserdeck serve`` and the tray app run it (not started yet)."""
    service = Service(
        force_headless=force_headless,
        control_port=control_port,
        front_end=control_api if serve_api else None,
        run_relays=run_relays,
        config_path=config_path,
        prelaunch=prelaunch,
    )
    service.agent_releasers.append(lambda: release_agents(service))
    return service
