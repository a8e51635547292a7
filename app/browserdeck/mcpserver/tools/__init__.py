"""Every MCP tool: its name, group, schema, and which front-door call it makes.

Names follow Playwright MCP wherever the action is the same, so prompts and
habits carry over. Groups:

- ``core``: Playwright MCP's core set plus ``browser_profiles`` and
  ``browser_navigate_forward``; what most agents need, with a small schema;
- ``all``: core plus PDF, DOM exploration (unibrowse), images, service workers,
  network sources and offline mode (Phoenix), the session's recording as a file,
  and Playwright MCP's storage tools (secrets' names, cookies, web storage, auth states);
- ``code``: ``browser_run_code``/``browser_reset``, only when the ``mcpRunCode``
  setting is on (they run arbitrary Python with Playwright objects in scope).

Actions answer in one short line; ``snapshot: true`` adds what changed on the page.

One module per group of tools (a mechanical split of the former tools.py); importing
this package registers them all, in the order tools/list shows them.
"""

from __future__ import annotations

# The order of these imports is the order of tools/list (and of their registration).
# isort: off
from browserdeck.mcpserver.tools import navigation  # noqa: F401
from browserdeck.mcpserver.tools import actions  # noqa: F401
from browserdeck.mcpserver.tools import capture  # noqa: F401
from browserdeck.mcpserver.tools import tabs  # noqa: F401
from browserdeck.mcpserver.tools import exploring  # noqa: F401
from browserdeck.mcpserver.tools import extras  # noqa: F401
from browserdeck.mcpserver.tools import recording  # noqa: F401
from browserdeck.mcpserver.tools import storage  # noqa: F401
from browserdeck.mcpserver.tools import code  # noqa: F401
# isort: on
from browserdeck.mcpserver.tools.registry import GROUPS, REGISTRY, Handler, ToolSpec, tool

__all__ = ["GROUPS", "REGISTRY", "Handler", "ToolSpec", "tool"]
