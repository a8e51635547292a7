"""The cap on a tool result's text (output.py applies it), in a module of its own.

``browserdeck mcp`` declares its ``--max-chars`` default with it before it starts the
service, and output.py imports ``re``, ``pathlib`` and the artifact paths: the MCP
client waits for that start.
"""

from __future__ import annotations

DEFAULT_MAX_CHARS = 20_000
MIN_MAX_CHARS = 500
