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

``import_server_pieces`` then imports those pieces with the SDK's pydantic models
(``mcp_types``: every message of two protocol versions, ~500 models) built on first use
rather than at import (pydantic's ``defer_build``): a service uses the few its clients
send and receive. See ``_models_built_on_first_use`` for how it is scoped.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

# Outermost first: `mcp.server`'s spec is found through `mcp`'s path.
PACKAGES = ("mcp", "mcp.server")
# What the service's MCP server imports of the SDK (server.py, http.py).
SERVER_PIECES = (
    "mcp_types",
    "mcp_types.methods",
    "mcp.server.context",
    "mcp.server.lowlevel",
    "mcp.server.streamable_http_manager",
    "mcp.server.transport_security",
)
# Top-level packages whose models are built on first use while SERVER_PIECES import.
DEFERRED_PACKAGES = frozenset({"mcp", "mcp_types"})

_lock = threading.RLock()
# Held while ConfigWrapper.for_model is ours, so two imports never nest the patch.
_patching = threading.Lock()


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


def import_server_pieces() -> None:
    """Import ``SERVER_PIECES`` (after ``skip_package_inits``), their models deferred."""
    with _models_built_on_first_use():
        for name in SERVER_PIECES:
            importlib.import_module(name)


@contextmanager
def _models_built_on_first_use() -> Iterator[None]:
    """While it is open, pydantic models and type adapters defined in
    ``DEFERRED_PACKAGES`` are built when first used (``defer_build``), unless a model
    sets ``defer_build`` itself (issue 14: the SDK's import, ~650 ms of CPU on the way
    to the service's first answer, was mostly building validators for ~500 models and
    six unions of them that the server never uses).

    Scoped by the defining module, not by pydantic's global defaults: a model of ours
    defined meanwhile on another thread (the service imports on threads) is built as
    always. Through two pydantic internals: ``ConfigWrapper.for_model`` (merges a new
    model's config) and ``TypeAdapter._defer_build`` (read as an adapter is made, with
    the module that made it in ``_module_name``). Where one is not what this expects,
    that half is skipped and its objects are built at import as always (slower, the same
    otherwise; tests/mcp/test_sdk_imports.py says which).
    """
    with _patching:
        undo = [_defer_models(), _defer_type_adapters()]
        try:
            yield
        finally:
            for restore in undo:
                restore()


def _in_deferred_package(module: object) -> bool:
    return isinstance(module, str) and module.partition(".")[0] in DEFERRED_PACKAGES


def _defer_models() -> Callable[[], None]:
    """Patch ``ConfigWrapper.for_model``; returns what undoes it."""
    try:
        from pydantic._internal._config import ConfigWrapper
    except ImportError:
        return lambda: None
    original = ConfigWrapper.__dict__.get("for_model")
    if not isinstance(original, classmethod):
        return lambda: None
    merge = original.__func__

    def for_model(cls: type, bases: Any, namespace: Any, kwargs: Any, *args: Any, **kw: Any) -> Any:
        wrapper = merge(cls, bases, namespace, kwargs, *args, **kw)
        config = getattr(wrapper, "config_dict", None)
        if (
            isinstance(namespace, dict)
            and _in_deferred_package(namespace.get("__module__"))
            and isinstance(config, dict)
        ):
            config.setdefault("defer_build", True)
        return wrapper

    ConfigWrapper.for_model = classmethod(for_model)  # type: ignore[method-assign,assignment]

    def restore() -> None:
        ConfigWrapper.for_model = original  # type: ignore[method-assign,assignment]

    return restore


def _defer_type_adapters() -> Callable[[], None]:
    """Patch ``TypeAdapter._defer_build``; returns what undoes it."""
    from pydantic import TypeAdapter

    original = TypeAdapter.__dict__.get("_defer_build")
    if not isinstance(original, property) or original.fget is None:
        return lambda: None
    built_as_configured = original.fget

    def defer_build(self: TypeAdapter[Any]) -> bool:
        if _in_deferred_package(getattr(self, "_module_name", None)):
            return True
        return bool(built_as_configured(self))

    TypeAdapter._defer_build = property(defer_build)  # type: ignore[method-assign,assignment]

    def restore() -> None:
        TypeAdapter._defer_build = original  # type: ignore[method-assign,assignment]

    return restore


skip_package_inits()
import_server_pieces()
