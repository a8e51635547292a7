"""Screenshots, optionally with ref labels drawn over the elements.

Label boxes must come from the same element map the refs resolve against,
without taking another snapshot (that would replace Playwright's ref map and
cost as much as the screenshot). Playwright tags each element of an AI snapshot
with ``_ariaRef`` inside its own utility world, so one ``Runtime.evaluate`` in
that world over our CDP session finds every labelled element at once. Elements
inside iframes (other worlds or processes) fall back to one
``locator.bounding_box()`` each.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
from typing import Any

from playwright.async_api import Error as PlaywrightError

from browserdeck.engine import masking
from browserdeck.engine import options as o
from browserdeck.engine import snapshot as snap
from browserdeck.engine.actions import write_artifact
from browserdeck.engine.errors import playwright_errors
from browserdeck.engine.refs import resolve
from browserdeck.engine.state import PageState, RefInfo
from browserdeck.errors import FOCUS_TAB, ActionTimeout, Hint, InvalidInput
from browserdeck.results import ShotLabel
from browserdeck.util import aio
from browserdeck.util import labels as label_layout
from browserdeck.util.imaging import fit

log = logging.getLogger(__name__)

MAX_LABELS = 150
SCREENSHOT_TIMEOUT_MS = 20_000
OVERLAY_ID = "__browserdeck_labels__"

# Draws what labels.place() decided: per ref its box, its badge (or none: it is listed in
# the answer's "unplaced"), and a leader line from a badge that had to move away.
_OVERLAY_FN = """function drawLabels(labels, fixed, id) {
  document.getElementById(id)?.remove();
  const host = document.createElement('div');
  host.id = id;
  host.style.cssText = 'position:' + (fixed ? 'fixed' : 'absolute') +
    ';left:0;top:0;width:0;height:0;overflow:visible;z-index:2147483647;pointer-events:none;';
  const root = host.attachShadow({mode: 'closed'});
  const NS = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(NS, 'svg');
  svg.setAttribute('style', 'position:absolute;left:0;top:0;overflow:visible;');
  svg.setAttribute('width', '1');
  svg.setAttribute('height', '1');
  root.append(svg);
  for (const [ref, x, y, w, h, badge, leader] of labels) {
    const box = document.createElement('div');
    box.style.cssText = `position:absolute;left:${x}px;top:${y}px;width:${w}px;` +
      `height:${h}px;border:2px solid #FF4500;box-sizing:border-box;`;
    root.append(box);
    if (leader) {
      const line = document.createElementNS(NS, 'line');
      line.setAttribute('x1', leader[0]); line.setAttribute('y1', leader[1]);
      line.setAttribute('x2', leader[2]); line.setAttribute('y2', leader[3]);
      line.setAttribute('stroke', '#FF4500'); line.setAttribute('stroke-width', '1.5');
      svg.append(line);
    }
    if (!badge) continue;
    const tag = document.createElement('div');
    tag.textContent = ref;
    tag.style.cssText = `position:absolute;left:${badge[0]}px;top:${badge[1]}px;` +
      `width:${badge[2]}px;height:${badge[3]}px;box-sizing:border-box;text-align:center;` +
      'background:#FF4500;color:#fff;font:bold __FONT__px/__LINE__px monospace;' +
      'border-radius:2px;white-space:nowrap;overflow:hidden;';
    root.append(tag);
  }
  document.documentElement.appendChild(host);
}""".replace("__FONT__", str(label_layout.FONT_PX)).replace(
    "__LINE__", str(label_layout.BADGE_HEIGHT)
)

# Runs in Playwright's utility world, where its AI snapshot tagged each element with
# `_ariaRef`: the boxes of the wanted refs that are in view (page order, capped), and the
# page's visible text rectangles, which the badges avoid (labels.place).
_COLLECT_JS = """([refs, bases, max, fullPage, maxTexts]) => {
  const want = new Set(refs.split(' '));
  const label = (ref) => {
    const i = ref.lastIndexOf('e'), mapped = bases[ref.slice(0, i)];
    return mapped ? mapped[0] + 'e' + (Number(ref.slice(i + 1)) + mapped[1]) : ref;
  };
  const vw = innerWidth, vh = innerHeight, sx = scrollX, sy = scrollY;
  const ox = fullPage ? sx : 0, oy = fullPage ? sy : 0;
  const found = [], texts = [];
  const range = document.createRange();
  const walk = (root) => {
    const it = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT);
    for (let n = it.currentNode; n; n = it.nextNode()) {
      if (n.nodeType === 3) {
        if (texts.length >= maxTexts || !n.data.trim()) continue;
        range.selectNodeContents(n);
        for (const b of range.getClientRects()) {
          if (b.width <= 0 || b.height <= 0) continue;
          if (!fullPage && (b.right <= 0 || b.bottom <= 0 || b.left >= vw || b.top >= vh)) continue;
          texts.push([b.x + ox, b.y + oy, b.width, b.height]);
        }
        continue;
      }
      if (n.shadowRoot) walk(n.shadowRoot);
      const r = n._ariaRef;
      if (!r || found.length >= max || !want.has(r.ref)) continue;
      const b = n.getBoundingClientRect();
      if (b.width <= 0 || b.height <= 0) continue;
      if (!fullPage && (b.right <= 0 || b.bottom <= 0 || b.left >= vw || b.top >= vh)) continue;
      found.push([label(r.ref), b.x + ox, b.y + oy, b.width, b.height]);
    }
  };
  walk(document.documentElement);
  const doc = document.documentElement;
  return {found, texts, vw, vh, sx, sy, dw: doc.scrollWidth, dh: doc.scrollHeight};
}"""

_VIEWPORT_JS = (
    "() => ({vw: innerWidth, vh: innerHeight, sx: scrollX, sy: scrollY, "
    "dw: document.documentElement.scrollWidth, dh: document.documentElement.scrollHeight, "
    "texts: []})"
)

_DRAW_JS = "([labels, fixed, id]) => (" + _OVERLAY_FN + ")(labels, fixed, id)"

_REMOVE_JS = "(id) => document.getElementById(id)?.remove()"


async def screenshot(state: PageState, opts: o.ScreenshotOptions) -> dict[str, Any]:
    # Inputs holding a secret the engine typed are covered while the image is taken.
    covered = await masking.cover(state)
    try:
        return await _screenshot(state, opts)
    finally:
        if covered:
            await masking.uncover(state)


async def _screenshot(state: PageState, opts: o.ScreenshotOptions) -> dict[str, Any]:
    if opts.ref and opts.element:
        raise InvalidInput("give ref or element, not both", hint="one element per screenshot")
    if opts.labels and (opts.ref or opts.element):
        raise InvalidInput(
            "labels apply to page screenshots, not element screenshots",
            hint="drop ref/element, or drop labels",
        )
    if opts.quality is not None and opts.type != "jpeg":
        raise InvalidInput("quality applies to jpeg only", hint='add "type": "jpeg"')
    timeout = o.clamp(opts.timeout_ms, SCREENSHOT_TIMEOUT_MS, 500, 60_000)
    page = state.page
    kwargs: dict[str, Any] = {"type": opts.type, "timeout": timeout, "scale": "css"}
    if opts.type == "jpeg":
        kwargs["quality"] = opts.quality or 80
    labels: list[ShotLabel] = []
    unplaced: list[str] = []
    skipped = 0
    snapshot_taken = False

    if opts.labels:
        async with state.lock:
            if not _table_usable(state):
                await _snapshot_unlocked(state)
                snapshot_taken = True
            placement, skipped = await _draw_labels(state, opts.full_page)
            labels = _shot_labels(state, placement)
            unplaced = placement.unplaced
            try:
                if opts.full_page:
                    with playwright_errors("screenshot", timeout):
                        data = await page.screenshot(full_page=True, **kwargs)
                else:
                    data = await capture_viewport(state, opts.type, kwargs.get("quality"), timeout)
            finally:
                # Removed in the background: the response need not wait for it, and every
                # later engine call on this tab awaits it first (PageState.settle), so
                # no snapshot, screenshot or action ever sees the overlay.
                state.cleanup = aio.create_task(
                    _remove_overlay(state), name=f"labels-cleanup-{state.target_id[:8]}"
                )
    elif opts.ref:
        r = await resolve(state, opts.ref, "screenshot")
        with playwright_errors(r.what("screenshot"), timeout):
            data = await r.locator.screenshot(**kwargs)
    elif opts.element:
        with playwright_errors(f"screenshot of {opts.element!r}", timeout):
            data = await page.locator(opts.element).screenshot(**kwargs)
    elif opts.full_page:
        with playwright_errors("screenshot", timeout):
            data = await page.screenshot(full_page=True, **kwargs)
    else:
        data = await capture_viewport(state, opts.type, kwargs.get("quality"), timeout)

    # 80: the engine's JPEG quality when the caller gives none (what it always was).
    fitted = fit(data, opts.max_width, opts.max_height, jpeg_quality=kwargs.get("quality") or 80)
    data, width, height, scale = fitted.data, fitted.width, fitted.height, fitted.scale
    if scale != 1.0:
        labels = [label.scaled(scale) for label in labels]
    out: dict[str, Any] = {
        "ok": True,
        "targetId": state.target_id,
        "url": page.url,
        "type": opts.type,
        "width": width,
        "height": height,
        "bytes": len(data),
        "scale": scale,
    }
    if opts.inline:
        out["base64"] = base64.b64encode(data).decode("ascii")
    else:
        ext = "jpg" if opts.type == "jpeg" else "png"
        out["path"] = str(write_artifact("screenshots", state.target_id, ext, data))
    if opts.labels:
        out["labels"] = labels
        out["skipped"] = skipped
        # Refs in view whose badge fit nowhere on the image (never dropped silently).
        out["unplaced"] = unplaced
        if snapshot_taken:
            out["note"] = "no usable snapshot: took one; the labels are its refs"
    return out


def _shot_labels(state: PageState, placement: label_layout.Placement) -> list[ShotLabel]:
    """Each placed ref: its box, its badge (None: listed in "unplaced"), the leader line if
    the badge moved, and what the element is, from the ref table the labels were drawn
    from (read under the same lock, so a later snapshot cannot rename them)."""
    table = state.table
    infos = {i.ref: i for i in table.refs.values() if i.interactive} if table else {}
    out = []
    for p in placement.placed:
        info = infos.get(p.ref)
        out.append(
            ShotLabel(
                ref=p.ref,
                box=_rounded(p.box),
                badge=_rounded(p.badge) if p.badge is not None else None,
                leader=list(p.leader) if p.leader is not None else None,
                role=info.role if info is not None else "",
                name=info.name if info is not None else "",
            )
        )
    return out


def _rounded(r: label_layout.Rect) -> label_layout.Rect:
    return label_layout.Rect(*r.as_list())


async def capture_viewport(
    state: PageState, fmt: str, quality: int | None, timeout_ms: int
) -> bytes:
    """The viewport in CSS pixels, with one ``Page.captureScreenshot`` on the tab's CDP session.

    ``page.screenshot`` costs several round trips around the capture (viewport size,
    a caret-hiding style injected into every frame and removed again, ``document.fonts
    .ready``, layout metrics) and encodes PNGs for size. Here the capture and the layout
    metrics go out together, and PNGs are encoded for speed (``optimizeForSpeed``: about
    half the encoding time for a file about 1.5x as large). Only a device scale factor
    other than 1 (HiDPI, pinch zoom) needs a second, clipped capture, as Playwright's
    ``scale="css"`` does; a tab seen to need it gets the clip at once from then on.
    """
    cdp = state.cdp
    if cdp is None:
        with playwright_errors("screenshot", timeout_ms):
            return await state.page.screenshot(
                type=fmt,  # type: ignore[arg-type]
                quality=quality,
                scale="css",
                timeout=timeout_ms,
            )
    params: dict[str, Any] = {"format": fmt, "fromSurface": True, "captureBeyondViewport": False}
    if fmt == "jpeg":
        params["quality"] = quality or 80
    else:
        params["optimizeForSpeed"] = True
    try:
        async with asyncio.timeout(timeout_ms / 1000):
            with playwright_errors("screenshot", timeout_ms):
                if not state.hidpi:
                    shot, metrics = await asyncio.gather(
                        cdp.send("Page.captureScreenshot", params),
                        cdp.send("Page.getLayoutMetrics"),
                    )
                    clip = _css_clip(metrics)
                    if clip is None:
                        return base64.b64decode(shot["data"])
                    state.hidpi = True
                else:
                    clip = _css_clip(await cdp.send("Page.getLayoutMetrics"))
                shot = await cdp.send("Page.captureScreenshot", {**params, "clip": clip})
                return base64.b64decode(shot["data"])
    except TimeoutError:
        raise ActionTimeout(
            f"screenshot timed out after {timeout_ms} ms: the browser rendered no frame",
            hint=Hint(
                "a tab in the background of its window is not rendered: bring it to the "
                "front ({focus}), or raise timeoutMs if the page is busy",
                focus=FOCUS_TAB,
            ),
        ) from None


def _css_clip(metrics: dict[str, Any]) -> dict[str, float] | None:
    """The clip that captures the visual viewport in CSS pixels; None: no clip needed."""
    view = metrics.get("cssVisualViewport") or {}
    content, css_content = metrics.get("contentSize") or {}, metrics.get("cssContentSize") or {}
    device_scale = (
        float(content["width"]) / float(css_content["width"])
        if content.get("width") and css_content.get("width")
        else 1.0
    )
    zoom = float(view.get("scale") or 1.0)
    if abs(device_scale - 1.0) < 0.01 and abs(zoom - 1.0) < 0.01:
        return None
    return {
        "x": float(view.get("pageX", 0)),
        "y": float(view.get("pageY", 0)),
        "width": float(view.get("clientWidth", 0)),
        "height": float(view.get("clientHeight", 0)),
        # Output pixels are clip size x scale x device scale: CSS pixels of the layout
        # viewport, as Playwright's scale="css" gives.
        "scale": zoom / device_scale,
    }


async def _remove_overlay(state: PageState) -> None:
    try:
        await state.page.evaluate(_REMOVE_JS, OVERLAY_ID)
    except PlaywrightError:
        log.debug("label overlay removal failed (page gone?)", exc_info=True)


def _table_usable(state: PageState) -> bool:
    table = state.table
    return (
        table is not None
        and table.page_token == state.token
        and table.main_epoch == state.main_epoch
    )


async def _snapshot_unlocked(state: PageState) -> None:
    # A plain ai snapshot whose refs become the table; the caller holds state.lock.
    opts = o.SnapshotOptions()
    text = await snap.ai_text(state, opts)
    table, _ = snap.build_table(state, text, opts, "aria")
    state.table = table


Label = tuple[str, float, float, float, float]  # ref, x, y, width, height
LOCATOR_FALLBACK_MAX = 300


MAX_TEXT_RECTS = 4000  # page text the badges avoid; a cap keeps huge pages quick


async def _draw_labels(state: PageState, full_page: bool) -> tuple[label_layout.Placement, int]:
    """Draw the overlay for interactive refs of the latest snapshot that are in view.

    The boxes (and the page's text) are measured first, the badges placed by
    ``labels.place`` (the panel shows this same image), then the overlay drawn.
    """
    table = state.table
    assert table is not None
    wanted = [info for info in table.refs.values() if info.interactive]
    main = [i for i in wanted if not i.frame_chain]
    framed = [i for i in wanted if i.frame_chain]
    page = state.page
    view = await _collect_in_utility_world(state, main, full_page)
    if view is None:  # no utility world reachable: one call per element
        with playwright_errors("measure the viewport"):
            view = await page.evaluate(_VIEWPORT_JS)
        infos = [i for i in wanted if not i.frame_chain][:LOCATOR_FALLBACK_MAX]
        view["found"] = _in_view(await _boxes_by_locator(state, infos), view, full_page)
    found: list[Label] = list(view["found"])
    if framed and len(found) < MAX_LABELS:
        boxes = await _boxes_by_locator(state, framed[:LOCATOR_FALLBACK_MAX])
        found += _in_view(boxes, view, full_page)[: MAX_LABELS - len(found)]
    if full_page:
        width, height = float(view.get("dw") or view["vw"]), float(view.get("dh") or view["vh"])
    else:
        width, height = float(view["vw"]), float(view["vh"])
    texts = [(float(x), float(y), float(w), float(h)) for x, y, w, h in view.get("texts") or []]
    placement = await asyncio.to_thread(label_layout.place, found, width, height, texts)
    drawn = [
        [
            *(p.ref, p.box.x, p.box.y, p.box.width, p.box.height),
            p.badge.as_list() if p.badge else None,
            list(p.leader) if p.leader else None,
        ]
        for p in placement.placed
    ]
    with playwright_errors("draw labels"):
        await page.evaluate(_DRAW_JS, [drawn, not full_page, OVERLAY_ID])
    return placement, len(wanted) - len(found)


def _in_view(boxes: list[Label], view: dict[str, Any], full_page: bool) -> list[Label]:
    vw, vh = float(view["vw"]), float(view["vh"])
    sx, sy = float(view["sx"]), float(view["sy"])
    out: list[Label] = []
    for ref, x, y, w, h in boxes:
        if w <= 0 or h <= 0:
            continue
        if full_page:
            out.append((ref, x + sx, y + sy, w, h))
        elif x + w > 0 and y + h > 0 and x < vw and y < vh:
            out.append((ref, x, y, w, h))
    return out[:MAX_LABELS]


def _offsets(infos: list[RefInfo]) -> dict[str, tuple[str, int]]:
    """Per Playwright frame prefix, the engine's prefix and what it added to the numbers.

    The main frame's refs lose Playwright's per-navigation prefix (``f2e5`` -> ``e45``).
    """
    out: dict[str, tuple[str, int]] = {}
    for info in infos:
        prefix, _, digits = info.pw_ref.rpartition("e")
        if prefix not in out:
            ours, _, number = info.ref.rpartition("e")
            out[prefix] = (ours, int(number) - int(digits))
    return out


async def _collect_in_utility_world(
    state: PageState, want: list[RefInfo], full_page: bool
) -> dict[str, Any] | None:
    cdp = state.cdp
    if cdp is None:
        return None
    try:
        await state.enable_runtime()
        ctx = state.utility_context()
        if ctx is None:
            return None
        # Compact on purpose: thousands of refs are common and this is the hot path.
        refs = " ".join(i.pw_ref for i in want)
        arg = json.dumps([refs, _offsets(want), MAX_LABELS, full_page, MAX_TEXT_RECTS])
        result = await cdp.send(
            "Runtime.evaluate",
            {"expression": f"({_COLLECT_JS})({arg})", "contextId": ctx, "returnByValue": True},
        )
    except PlaywrightError:
        log.debug("utility-world label lookup failed", exc_info=True)
        return None
    value = (result.get("result") or {}).get("value")
    if not isinstance(value, dict) or result.get("exceptionDetails"):
        log.debug("utility-world label lookup failed: %s", result.get("exceptionDetails"))
        return None
    return value


async def _boxes_by_locator(state: PageState, infos: list[RefInfo]) -> list[Label]:
    async def one(info: RefInfo) -> Label | None:
        try:
            rect = await state.page.locator(f"aria-ref={info.pw_ref}").bounding_box(timeout=1000)
        except PlaywrightError:
            return None
        if rect is None:
            return None
        return (info.ref, rect["x"], rect["y"], rect["width"], rect["height"])

    return [box for box in await asyncio.gather(*(one(i) for i in infos)) if box is not None]
