"""The MCP SDK's server pieces without the rest of the SDK (issue 14: time to ``/mcp``).

The service imports the SDK's low-level server and its streamable HTTP transport. The
SDK's package ``__init__`` files (``mcp``, ``mcp.server``) also import its client, its
stdio transports and the high-level ``MCPServer`` with its resource and prompt managers:
about a sixth of the whole service's import time, on the path of a service that an MCP
client started and is waiting for. ``skip_package_inits`` registers those two packages
without running their ``__init__``, so importing ``mcp.server.lowlevel`` loads only what
it imports itself. Nothing is lost: a name the ``__init__`` would have bound (``from mcp
import Client``) runs it then, on first use (PEP 562 module ``__getattr__``), so other
code in the process (tests, the bench) sees the whole SDK. Importing this module does
it; server.py imports it before the SDK.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
import types
from collections.abc import Callable

# Outermost first: `mcp.server`'s spec is found through `mcp`'s path.
PACKAGES = ("mcp", "mcp.server")

_lock = threading.RLock()


def skip_package_inits() -> None:
    """Register ``PACKAGES`` without running their ``__init__`` (none already imported)."""
    with _lock:
        for name in PACKAGES:
            if name in sys.modules:
                continue
            spec = importlib.util.find_spec(name)
            if spec is None or spec.loader is None or spec.submodule_search_locations is None:
                return  # not the SDK we know: import it the ordinary way
            module = importlib.util.module_from_spec(spec)
            module.__getattr__ = _completing(module, spec)  # type: ignore[method-assign]
            sys.modules[name] = module
            parent, _, child = name.rpartition(".")
            if parent:
                setattr(sys.modules[parent], child, module)


def _completing(
    module: types.ModuleType, spec: importlib.machinery.ModuleSpec
) -> Callable[[str], object]:
    def __getattr__(attr: str) -> object:
        # A submodule (`from mcp import types`, as the SDK itself does): import just it.
        if not attr.startswith("__"):
            full = f"{module.__name__}.{attr}"
            if full in sys.modules or importlib.util.find_spec(full) is not None:
                return importlib.import_module(full)
        with _lock:
            if module.__dict__.pop("__getattr__", None) is not None:
                assert spec.loader is not None
                spec.loader.exec_module(module)  # the skipped __init__, now
        try:
            return module.__dict__[attr]
        except KeyError:
            raise AttributeError(f"module {module.__name__!r} has no attribute {attr!r}") from None

    return __getattr__


skip_package_inits()
