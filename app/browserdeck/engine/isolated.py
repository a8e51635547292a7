"""``evaluate`` with ``world: "isolated"``: browserdeck's own page functions out of the
page's reach.

A page owns its JavaScript world: it can replace ``String.prototype.trim``,
``Array.prototype.map`` or ``JSON.stringify`` and add ``Object.prototype.toJSON``, and so
rewrite what a function run there returns (``browser_visible_text`` said what the page
wanted, not what it showed). browserdeck's DOM tools (mcpserver/dom.py) therefore run in
a world the page cannot reach, over the engine's own CDP session of the tab, and their
result comes back by value through Chrome's own serialiser:

* without an element, in an isolated world of our own in the main frame
  (``Page.createIsolatedWorld``): the same DOM, none of the page's objects;
* with a ref, in Playwright's utility world of the main frame, where the last snapshot
  left each element's ref on it (``_ariaRef``, the same expando the labelled screenshot
  reads, docs/engine.md): the element is found there by its ref, so nothing of the page's
  world takes part in choosing it either. The ref is first resolved as every action's is
  (stale refs are refused).

A ref inside a frame, a tab without the engine's CDP session, or a utility world the
engine does not know (Playwright makes it for the first snapshot of a document, so a live
ref always has one), runs in the page's world as before (``(False, None)`` here: the
caller does so).
"""

from __future__ import annotations

import contextlib
import json
from typing import TYPE_CHECKING, Any

from browserdeck.engine.errors import NEW_SNAPSHOT
from browserdeck.engine.refs import resolve
from browserdeck.errors import Conflict, InvalidInput

if TYPE_CHECKING:
    from browserdeck.engine import options as o
    from browserdeck.engine.state import PageState

WORLD = "browserdeck"
# The element whose ref the last snapshot put on it, looked up in the utility world (open
# shadow roots included, as Playwright's snapshot walks them).
_BY_REF = """(ref) => {
  const walk = (root) => {
    const it = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT);
    for (let n = it.currentNode; n; n = it.nextNode()) {
      if (n._ariaRef && n._ariaRef.ref === ref) return n;
      if (n.shadowRoot) { const inner = walk(n.shadowRoot); if (inner) return inner; }
    }
    return null;
  };
  return walk(document.documentElement);
}"""


async def evaluate(state: PageState, action: o.EvaluateAct, timeout: int) -> tuple[bool, Any]:
    """``(True, value)`` of ``action.fn`` run out of the page's reach, or ``(False, None)``
    when it must run in the page's world (see the module docstring). ``timeout`` is the
    caller's to apply."""
    cdp = state.cdp
    if cdp is None:
        return False, None
    call: dict[str, Any] = {"returnByValue": True, "awaitPromise": True}
    handle = None
    if action.ref:
        r = await resolve(state, action.ref, "evaluate on")
        if r.info.frame_chain:
            return False, None
        if not state.runtime_enabled:
            await cdp.send("Runtime.enable")
            state.runtime_enabled = True
        utility = state.utility_context()
        if utility is None:
            return False, None
        found = await cdp.send(
            "Runtime.evaluate",
            {"expression": f"({_BY_REF})({json.dumps(r.info.pw_ref)})", "contextId": utility},
        )
        handle = (found.get("result") or {}).get("objectId")
        if not handle:
            raise Conflict(
                f"ref {r.ref} ({r.info.describe()}) is no longer on the page",
                hint=NEW_SNAPSHOT,
                code="stale_ref",
            )
        call.update(
            functionDeclaration=action.fn, objectId=handle, arguments=[{"objectId": handle}]
        )
    else:
        tree = await cdp.send("Page.getFrameTree")
        world = await cdp.send(
            "Page.createIsolatedWorld",
            {"frameId": tree["frameTree"]["frame"]["id"], "worldName": WORLD},
        )
        call.update(
            functionDeclaration=f"function () {{ return ({action.fn})(); }}",
            executionContextId=world["executionContextId"],
        )
    try:
        answer = await cdp.send("Runtime.callFunctionOn", call)
    finally:
        if handle:
            with contextlib.suppress(Exception):
                await cdp.send("Runtime.releaseObject", {"objectId": handle})
    thrown = answer.get("exceptionDetails")
    if thrown:
        exception = thrown.get("exception") or {}
        text = str(exception.get("description") or thrown.get("text") or "an error")
        raise InvalidInput(
            f"evaluate{' on ' + action.ref if action.ref else ''}: the script threw "
            + text.splitlines()[0],
            hint="fix the script; it runs in a world of browserdeck's own on the page, e.g. "
            "'() => document.title', or '(el) => el.textContent' with a ref",
            code="script_error",
        )
    return True, (answer.get("result") or {}).get("value")
