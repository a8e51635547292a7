"""``evaluate`` with ``world: "isolated"``: browserdeck's own page functions out of the
page's reach.

A page owns its JavaScript world: it can replace ``String.prototype.trim``,
``Array.prototype.map`` or ``JSON.stringify`` and add ``Object.prototype.toJSON``, and so
rewrite what a function run there returns (``browser_visible_text`` said what the page
wanted, not what it showed). browserdeck's DOM tools (mcpserver/dom.py) therefore run in
an isolated world of the tab's main frame (CDP ``Page.createIsolatedWorld``, over the
engine's own CDP session of the tab): the same DOM, none of the page's JavaScript objects,
and the result comes back by value through Chrome's own serialiser.

The element a ref names is handed over by a random attribute set on it in the page's
world (a Playwright locator is resolved there) and taken off again at once in ours: a
page that moved the mark could point the function at another of its elements, which
shows nothing it could not write into the element itself; the function and everything it
reads run in our world either way. A ref inside a frame, or a tab without the engine's
CDP session, runs in the page's world as before (``None`` here: the caller does so).
"""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING, Any

from browserdeck.engine.refs import resolve
from browserdeck.errors import InvalidInput

if TYPE_CHECKING:
    from browserdeck.engine import options as o
    from browserdeck.engine.state import PageState

WORLD = "browserdeck"
_MARK = "data-browserdeck-"
# The function, given the element found by its mark (in open shadow roots too), the mark
# taken off before anything else runs.
_WITH_ELEMENT = """function (mark) {
  const find = (root) => {
    const hit = root.querySelector('[' + mark + ']');
    if (hit) return hit;
    for (const host of root.querySelectorAll('*')) {
      const inner = host.shadowRoot && find(host.shadowRoot);
      if (inner) return inner;
    }
    return null;
  };
  const el = find(document);
  if (!el) throw new Error('the element is not in the page any more (or the page took its mark off)');
  el.removeAttribute(mark);
  return (%s)(el);
}"""


async def evaluate(state: PageState, action: o.EvaluateAct, timeout: int) -> tuple[bool, Any]:
    """``(True, value)`` of ``action.fn`` run in our isolated world, or ``(False, None)``
    when it must run in the page's world (see the module docstring)."""
    cdp = state.cdp
    if cdp is None:
        return False, None
    mark = ""
    if action.ref:
        r = await resolve(state, action.ref, "evaluate on")
        if r.info.frame_chain:
            return False, None
        mark = _MARK + secrets.token_hex(8)
        await r.locator.evaluate("(el, mark) => el.setAttribute(mark, '')", mark, timeout=timeout)
    tree = await cdp.send("Page.getFrameTree")
    frame = tree["frameTree"]["frame"]["id"]
    world = await cdp.send(
        "Page.createIsolatedWorld", {"frameId": frame, "worldName": WORLD}
    )
    call: dict[str, Any] = {
        "executionContextId": world["executionContextId"],
        "returnByValue": True,
        "awaitPromise": True,
    }
    if mark:
        call["functionDeclaration"] = _WITH_ELEMENT % action.fn
        call["arguments"] = [{"value": mark}]
    else:
        call["functionDeclaration"] = f"function () {{ return ({action.fn})(); }}"
    answer = await cdp.send("Runtime.callFunctionOn", call)
    thrown = answer.get("exceptionDetails")
    if thrown:
        exception = thrown.get("exception") or {}
        text = str(exception.get("description") or thrown.get("text") or "an error")
        raise InvalidInput(
            f"evaluate{' on ' + action.ref if action.ref else ''}: the script threw "
            + text.splitlines()[0],
            hint="fix the script; it runs in browserdeck's own world of the page, e.g. "
            "'() => document.title', or '(el) => el.textContent' with a ref",
            code="script_error",
        )
    return True, (answer.get("result") or {}).get("value")
