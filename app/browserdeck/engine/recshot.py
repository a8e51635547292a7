"""The session recorder's picture of a tab: one capture, and what to hide and outline in it.

The recorder (``recording/``) takes one before an action and one after it. The one before
is on the action's path, so it costs one ``Page.captureScreenshot`` (a JPEG, encoded for
speed) and, in the same round trip, one ``Runtime.evaluate`` in Playwright's utility
world that finds the boxes: the element acted on (tagged ``_ariaRef`` there by the latest
snapshot, as the labelled screenshot finds it) and every password input in view, which
the recorder paints over before the image is written anywhere. Everything else (masking,
outlining, encoding, the disk) is the recorder's, off the action's path.

The console errors, page errors and failed requests since a moment are read from what
the tab's state already keeps: no round trip.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from playwright.async_api import Error as PlaywrightError

from browserdeck.engine import masking, placeholders
from browserdeck.engine import options as o
from browserdeck.engine.refs import normalize, resolve
from browserdeck.engine.state import PageState
from browserdeck.errors import BrowserdeckError

log = logging.getLogger(__name__)

# Inputs whose text is never shown: password fields and the autofill kinds that hold a
# password, a card number or its code, a one-time code.
SECRET_INPUTS = (
    "input[type=password],"
    "input[autocomplete~=current-password],input[autocomplete~=new-password],"
    "input[autocomplete~=cc-number],input[autocomplete~=cc-csc],"
    "input[autocomplete~=one-time-code]"
)
MAX_MASKS = 50

# Runs in the utility world (the DOM is shared; ``_ariaRef`` is visible only there), or in
# the page's own world when that is not known yet (then no target: it is looked up apart).
_BOXES_JS = """([pwRef, selector, maxMasks]) => {
  const vw = innerWidth, vh = innerHeight;
  const inView = (b) => b.width > 0 && b.height > 0 && b.right > 0 && b.bottom > 0
    && b.left < vw && b.top < vh;
  const box = (b) => [b.x, b.y, b.width, b.height];
  let target = null;
  const masks = [];
  const walk = (root) => {
    for (const el of root.querySelectorAll(selector)) {
      if (masks.length >= maxMasks) break;
      const b = el.getBoundingClientRect();
      if (inView(b)) masks.push(box(b));
    }
    const it = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT);
    for (let n = it.currentNode; n; n = it.nextNode()) {
      if (n.shadowRoot) walk(n.shadowRoot);
      if (pwRef && target === null && n._ariaRef && n._ariaRef.ref === pwRef) {
        const b = n.getBoundingClientRect();
        if (b.width > 0 && b.height > 0) target = box(b);
      }
    }
  };
  walk(document);
  return {t: target, m: masks, vw, vh};
}"""


def _rect(values: Any) -> dict[str, float] | None:
    if not isinstance(values, list) or len(values) != 4:
        return None
    x, y, w, h = (round(float(v), 1) for v in values)
    return {"x": x, "y": y, "width": w, "height": h}


async def _boxes(state: PageState, pw_ref: str | None) -> dict[str, Any]:
    """The target's box (if in the main frame) and the secret inputs in view: the kinds
    that hold one, and every input the engine typed a vault secret into (masking.py)."""
    found = await _page_boxes(state, pw_ref)
    if placeholders.held_inputs(state):
        found["m"] = [*found.get("m", []), *await masking.held_boxes(state)]
    return found


async def _page_boxes(state: PageState, pw_ref: str | None) -> dict[str, Any]:
    cdp = state.cdp
    arg = json.dumps([pw_ref or "", SECRET_INPUTS, MAX_MASKS])
    expression = f"({_BOXES_JS})({arg})"
    if cdp is not None:
        if not state.runtime_enabled:
            await cdp.send("Runtime.enable")
            state.runtime_enabled = True
        params: dict[str, Any] = {"expression": expression, "returnByValue": True}
        ctx = state.utility_context()
        if ctx is not None:
            params["contextId"] = ctx
        result = await cdp.send("Runtime.evaluate", params)
        value = (result.get("result") or {}).get("value")
        if isinstance(value, dict) and not result.get("exceptionDetails"):
            if ctx is None:
                value["t"] = None
            return value
    value = await state.page.evaluate(expression)
    if isinstance(value, dict):
        value["t"] = None
        return value
    return {"t": None, "m": [], "vw": 0, "vh": 0}


async def _framed_target(state: PageState, ref: str) -> dict[str, float] | None:
    """The box of an element inside an iframe (its own document: a locator finds it)."""
    try:
        found = await resolve(state, ref, "outline")
        box = await found.locator.bounding_box(timeout=1000)
    except (BrowserdeckError, PlaywrightError):
        return None
    return _rect([box["x"], box["y"], box["width"], box["height"]]) if box else None


async def _capture(state: PageState, quality: int) -> str | None:
    cdp = state.cdp
    params = {
        "format": "jpeg",
        "quality": quality,
        "fromSurface": True,
        "captureBeyondViewport": False,
        "optimizeForSpeed": True,
    }
    if cdp is not None:
        shot = await cdp.send("Page.captureScreenshot", params)
        data = shot.get("data")
        return data if isinstance(data, str) else None
    import base64

    raw = await state.page.screenshot(type="jpeg", quality=quality, scale="css", timeout=5000)
    return base64.b64encode(raw).decode("ascii")


def _events_since(state: PageState, since: float | None) -> dict[str, Any]:
    if since is None:
        return {}
    return {
        "consoleErrors": [e for e in state.console if e.time >= since and e.type == "error"],
        "pageErrors": [e for e in state.errors if e.time >= since],
        "failedRequests": [
            e
            for e in state.requests
            if e.time >= since and (e.failure or (e.status is not None and e.status >= 400))
        ],
    }


async def take(state: PageState, opts: o.RecordShot) -> dict[str, Any]:
    """The picture, its boxes and the events since ``opts.since``."""
    page = state.page
    out: dict[str, Any] = {"ok": True, "targetId": state.target_id, "url": page.url}
    out.update(_events_since(state, opts.since))
    if not opts.image:
        return out
    info = None
    if opts.ref and state.table is not None:
        try:
            info = state.table.refs.get(normalize(opts.ref))
        except BrowserdeckError:
            info = None
    main_ref = info.pw_ref if info is not None and not info.frame_chain else None
    framed = info is not None and bool(info.frame_chain)
    jobs: list[Any] = [_capture(state, opts.quality), _boxes(state, main_ref)]
    if framed and opts.ref:
        jobs.append(_framed_target(state, opts.ref))
    done = await asyncio.gather(*jobs)
    jpeg, boxes = done[0], done[1]
    target = done[2] if framed else _rect(boxes.get("t"))
    out["jpeg"] = jpeg
    vw, vh = int(boxes.get("vw") or 0), int(boxes.get("vh") or 0)
    if vw and vh:
        out["viewport"] = {"width": vw, "height": vh}
    out["target"] = target
    out["masks"] = [m for m in (_rect(b) for b in boxes.get("m") or []) if m is not None]
    return out
