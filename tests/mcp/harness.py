"""Drive browserdeck's MCP server the way clients do: the official SDK client, stdio or HTTP."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
from mcp.client.streamable_http import streamable_http_client
from mcp.types import Implementation

from browserdeck import config
from browserdeck.config import Config
from mcp import Client, StdioServerParameters
from tests.support.service import service_config


def mcp_config(home: Path, **overrides: object) -> Config:
    """A config on free ports without the extension profile, saved under ``home``."""
    previous = os.environ.get("BROWSERDECK_HOME")
    os.environ["BROWSERDECK_HOME"] = str(home)
    try:
        cfg = service_config(**overrides)
        cfg.profiles.pop("chrome", None)
        cfg.no_sandbox = os.geteuid() == 0 if hasattr(os, "geteuid") else False
        config.save(cfg)
    finally:
        if previous is not None:
            os.environ["BROWSERDECK_HOME"] = previous
    return cfg


def stdio_params(home: Path, chromium: str, *args: str) -> StdioServerParameters:
    env = {
        "BROWSERDECK_HOME": str(home),
        "BROWSERDECK_CHROME": chromium,
        "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
    }
    return StdioServerParameters(
        command=sys.executable, args=["-m", "browserdeck", "mcp", *args], env=env, cwd=str(home)
    )


@asynccontextmanager
async def stdio_client(home: Path, chromium: str, *args: str) -> AsyncIterator[Client]:
    async with Client(stdio_params(home, chromium, *args), read_timeout_seconds=90) as client:
        yield client


@asynccontextmanager
async def http_client(
    url: str,
    token: str | None,
    *,
    mode: str = "legacy",
    headers: dict[str, str] | None = None,
    client_info: Implementation | None = None,
) -> AsyncIterator[Client]:
    all_headers = dict(headers or {})
    if token is not None:
        all_headers["Authorization"] = f"Bearer {token}"
    async with (
        httpx2.AsyncClient(headers=all_headers, timeout=90) as http,
        Client(
            streamable_http_client(url, http_client=http),
            mode=mode,
            read_timeout_seconds=90,
            client_info=client_info,
        ) as client,
    ):
        yield client


def text(result: Any) -> str:
    return "\n".join(c.text for c in result.content if c.type == "text")


async def call(client: Client, tool: str, args: dict[str, Any] | None = None) -> str:
    """Call a tool that must succeed; its text."""
    result = await client.call_tool(tool, args or {})
    assert not result.is_error, f"{tool} failed: {text(result)}"
    return text(result)


async def call_error(client: Client, tool: str, args: dict[str, Any] | None = None) -> str:
    result = await client.call_tool(tool, args or {})
    assert result.is_error, f"{tool} should have failed: {text(result)}"
    return text(result)


def ref_of(snapshot: str, role: str, name: str, nth: int = 0) -> str:
    found = re.findall(rf'- {role} "{re.escape(name)}"[^\n]*?\[ref=([^\]]+)\]', snapshot)
    assert len(found) > nth, f"no ref for {role} {name!r} in:\n{snapshot}"
    return str(found[nth])
