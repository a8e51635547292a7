"""The control API: HTTP on 127.0.0.1 (FastAPI), OpenAPI, and MCP on top of it."""
