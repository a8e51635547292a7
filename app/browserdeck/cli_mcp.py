"""``browserdeck mcp``: the MCP server over stdio (registered by cli.py)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any


def cmd_mcp(args: argparse.Namespace) -> int:
    from browserdeck import logsetup
    from browserdeck.errors import BrowserdeckError
    from browserdeck.mcpserver import client_config_snippet, stdio
    from browserdeck.mcpserver.backend import load_config
    from browserdeck.mcpserver.server import McpApp, select_tools

    if args.print_config:
        snippet = client_config_snippet(
            transport=args.transport, tools=args.tools, profile=args.profile, url=args.url
        )
        print(json.dumps(snippet, indent=2))
        return 0
    try:
        chosen = select_tools(args.tools, run_code=load_config().mcp_run_code)
    except BrowserdeckError as exc:
        print(
            f"error: {exc.message}" + (f"\n  hint: {exc.hint}" if exc.hint else ""), file=sys.stderr
        )
        return 2
    if args.list_tools:
        listed = [
            t.model_dump(by_alias=True, exclude_none=True, mode="json")
            for t in McpApp.tool_list(chosen)
        ]
        for item in listed:
            print(f"{item['name']:28} {len(json.dumps(item)):6,} chars  {item['description']}")
        print(f"{len(listed)} tools, tools/list JSON {len(json.dumps(listed)):,} chars")
        return 0
    logsetup.setup()
    asyncio.run(
        stdio.serve(
            tools_spec=args.tools, profile=args.profile, url=args.url, max_chars=args.max_chars
        )
    )
    return 0


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    from browserdeck.mcpserver.output import DEFAULT_MAX_CHARS

    p = sub.add_parser(
        "mcp",
        help="MCP server over stdio (uses the running service, else starts one in-process)",
        description="Serve MCP over stdio. Uses the running browserdeck service when there is "
        "one; otherwise starts a headless one in this process on the first tool call. The same "
        "server runs over HTTP at /mcp on the control port.",
    )
    p.add_argument(
        "--tools", default="core", help="core (default), all, or a comma list of tool names"
    )
    p.add_argument(
        "--profile", "-p", help="profile for this server's sessions (default: the default profile)"
    )
    p.add_argument(
        "--url", help="control API URL of the service to use (no in-process fallback then)"
    )
    p.add_argument(
        "--max-chars",
        type=int,
        default=DEFAULT_MAX_CHARS,
        help=f"cap on a tool result's text; beyond it the text goes to a file "
        f"(default {DEFAULT_MAX_CHARS})",
    )
    p.add_argument(
        "--list-tools",
        action="store_true",
        help="print the selected tools and their schema size, then exit",
    )
    p.add_argument(
        "--print-config",
        action="store_true",
        help="print an mcpServers config snippet for MCP clients, then exit",
    )
    p.add_argument(
        "--transport",
        choices=("stdio", "http"),
        default="stdio",
        help="with --print-config: the snippet's transport",
    )
    p.set_defaults(local=cmd_mcp)
