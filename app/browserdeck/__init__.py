"""browserdeck: a real browser for AI agents, driven through one local API."""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
