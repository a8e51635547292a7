"""The environment of the Playwright driver we spawn: Node's compile cache (issue 14).

The driver is the Node.js bundled with Playwright running Playwright's own JavaScript;
compiling that is most of the driver's start. With Node's compile cache warm,
``async_playwright().start()`` took ~375 ms wall / 505 ms CPU here instead of ~600 / 730,
on the path of a service that an MCP client started and is waiting for.

Node reads ``NODE_COMPILE_CACHE`` from its environment. Playwright builds the driver's
environment in ``playwright._impl.transport.get_driver_env`` (a copy of ``os.environ``)
for that one process, so the variable is added there, not to ``os.environ``: Chromium
and whatever else we spawn do not inherit it, nor does the user's shell.

The folder is ours and private (``paths.node_compile_cache_dir``): node runs the code it
finds cached there, so nobody else may have put it there. Node checks each file's
checksum and its own version and flags, and recompiles (and rewrites the file) when one
does not match, so a corrupt or stale cache costs a compile, nothing else
(tests/engine/test_driver_env.py).

playwright is pinned (==1.65). Were ``get_driver_env`` not there, the driver would start
without the cache, slower and otherwise the same; the tests above would fail.
"""

from __future__ import annotations

import functools
import logging

from playwright._impl import transport

from browserdeck import paths

log = logging.getLogger(__name__)

CACHE_VARIABLE = "NODE_COMPILE_CACHE"

_installed = False


def install() -> None:
    """Give every Playwright driver this process spawns from now on our compile cache."""
    global _installed
    if _installed:
        return
    original = getattr(transport, "get_driver_env", None)
    if not callable(original):
        log.warning("playwright has no get_driver_env: its driver starts without Node's cache")
        return

    @functools.wraps(original)
    def get_driver_env() -> dict[str, str]:
        env: dict[str, str] = original()
        try:
            env[CACHE_VARIABLE] = str(paths.node_compile_cache_dir())
        except OSError as exc:  # not ours (PermissionError) or not creatable: start uncached
            env.pop(CACHE_VARIABLE, None)
            log.warning("the Playwright driver starts without Node's compile cache: %s", exc)
        return env

    transport.get_driver_env = get_driver_env  # type: ignore[attr-defined]
    _installed = True
