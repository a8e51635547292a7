"""The agent engine: Playwright over CDP, snapshots with element refs, actions, screenshots.

See docs/engine.md for the ref rules, what each option does and the error table. The
requests it answers are in ``options.py`` (the act kinds in ``acts.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

# Lazy: the engine (Playwright's client, ~90 ms of imports) loads on first use of
# ``Engine``, so a module that needs only the request models or the snapshot text does
# not pull it in: `serve` answers MCP's `initialize` before the engine is imported.
if TYPE_CHECKING:
    from browserdeck.engine.engine import Engine

__all__ = ["Engine"]


def __getattr__(name: str) -> Any:
    if name == "Engine":
        from browserdeck.engine.engine import Engine

        return Engine
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
