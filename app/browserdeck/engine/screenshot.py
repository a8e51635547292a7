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
import io
import json
import logging
from typing import TYPE_CHECKING, Any

from PIL import Image
from playwright.async_api import Error as PlaywrightError

from browserdeck.engine import options as o
from browserdeck.engine.actions import write_artifact
from browserdeck.engine.errors import playwright_errors
from browserdeck.engine.refs import resolve
from browserdeck.engine.snapshot import snapshot as take_snapshot
from browserdeck.engine.state import PageState, RefInfo
from browserdeck.errors import InvalidInput

if TYPE_CHECKING:
    from playwright.async_api import FloatRect

log = logging.getLogger(__name__)

MAX_LABELS = 150
SCREENSHOT_TIMEOUT_MS = 20_000
OVERLAY_ID = "__browserdeck_labels__"

# Runs in Playwright's utility world: boxes of the wanted refs (viewport coordinates).
_COLLECT_JS = """(wanted) => {
  const want = new Set(wanted);
  const found = [];
  const walk = (root) => {
    const it = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT);
    for (let n = it.currentNode; n; n = it.nextNode()) {
      const r = n._ariaRef;
      if (r && want.has(r.ref) && n.isConnected) {
        const b = n.getBoundingClientRect();
        found.push([r.ref, b.x, b.y, b.width, b.height]);
      }
      if (n.shadowRoot) walk(n.shadowRoot);
    }
  };
  walk(document.documentElement);
  return {found, vw: innerWidth, vh: innerHeight, sx: scrollX, sy: scrollY};
}"""

_VIEWPORT_JS = "() => ({vw: innerWidth, vh: innerHeight, sx: scrollX, sy: scrollY})"

_DRAW_JS = """([labels, fixed, id]) => {
  document.getElementById(id)?.remove();
  const host = document.createElement('div');
  host.id = id;
  host.style.cssText = 'position:' + (fixed ? 'fixed' : 'absolute') +
    ';left:0;top:0;width:0;height:0;overflow:visible;z-index:2147483647;pointer-events:none;';
  const root = host.attachShadow({mode: 'closed'});
  for (const [ref, x, y, w, h] of labels) {
    const box = document.createElement('div');
    box.style.cssText = `position:absolute;left:${x}px;top:${y}px;width:${w}px;` +
      `height:${h}px;border:2px solid #FF4500;box-sizing:border-box;`;
    const tag = document.createElement('div');
    tag.textContent = ref;
    tag.style.cssText = `position:absolute;left:${x}px;top:${Math.max(0, y - 15)}px;` +
      'background:#FF4500;color:#fff;font:bold 11px/13px monospace;padding:1px 3px;' +
      'border-radius:2px;white-space:nowrap;';
    root.append(box, tag);
  }
  document.documentElement.appendChild(host);
}"""

_REMOVE_JS = "(id) => document.getElementById(id)?.remove()"


async def screenshot(state: PageState, opts: o.ScreenshotOptions) -> dict[str, Any]:
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
    labels: list[dict[str, Any]] = []
    skipped = 0
    snapshot_taken = False

    if opts.labels:
        async with state.lock:
            if not _table_usable(state):
                await _snapshot_unlocked(state)
                snapshot_taken = True
            boxes, skipped = await _label_boxes(state, opts.full_page)
            labels = [{"ref": ref, "box": box} for ref, box in boxes]
            with playwright_errors("draw labels"):
                await page.evaluate(
                    _DRAW_JS,
                    [
                        [[r, b["x"], b["y"], b["width"], b["height"]] for r, b in boxes],
                        not opts.full_page,
                        OVERLAY_ID,
                    ],
                )
            try:
                with playwright_errors("screenshot", timeout):
                    data = await page.screenshot(full_page=opts.full_page, **kwargs)
            finally:
                try:
                    await page.evaluate(_REMOVE_JS, OVERLAY_ID)
                except PlaywrightError:
                    log.debug("label overlay removal failed (page gone?)", exc_info=True)
    elif opts.ref:
        r = await resolve(state, opts.ref, "screenshot")
        with playwright_errors(r.what("screenshot"), timeout):
            data = await r.locator.screenshot(**kwargs)
    elif opts.element:
        with playwright_errors(f"screenshot of {opts.element!r}", timeout):
            data = await page.locator(opts.element).screenshot(**kwargs)
    else:
        with playwright_errors("screenshot", timeout):
            data = await page.screenshot(full_page=opts.full_page, **kwargs)

    data, width, height, scale = fit(
        data, opts.type, kwargs.get("quality"), opts.max_width, opts.max_height
    )
    if scale != 1.0:
        for label in labels:
            label["box"] = {k: round(v * scale, 1) for k, v in label["box"].items()}
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
        if snapshot_taken:
            out["note"] = "no usable snapshot: took one; the labels are its refs"
    return out


def _table_usable(state: PageState) -> bool:
    table = state.table
    return (
        table is not None
        and table.page_token == state.token
        and table.main_epoch == state.main_epoch
    )


async def _snapshot_unlocked(state: PageState) -> None:
    # The caller holds state.lock; snapshot() takes it too, so release around it is not
    # possible without a gap another snapshot could fill. Build it inline instead.
    from browserdeck.engine import snapshot as snap
    from browserdeck.engine import snapshot_text as st

    opts = o.SnapshotOptions()
    text = await snap.ai_text(state, opts)
    table, _ = snap.build_table(state, st.parse(text), opts, "aria")
    state.table = table


async def _label_boxes(
    state: PageState, full_page: bool
) -> tuple[list[tuple[str, dict[str, float]]], int]:
    """(ref, box) for interactive refs of the latest snapshot, in snapshot order."""
    table = state.table
    assert table is not None
    wanted = [info for info in table.refs.values() if info.interactive]
    main = [i for i in wanted if not i.frame_chain]
    framed = [i for i in wanted if i.frame_chain]
    boxes: dict[str, tuple[float, float, float, float]] = {}
    view = await _boxes_in_utility_world(state, main, boxes)
    if view is None:  # no utility world reachable: one call per element
        await _boxes_by_locator(state, main, boxes)
    if framed:
        await _boxes_by_locator(state, framed[: MAX_LABELS * 2], boxes)
    if view is None:
        with playwright_errors("measure the viewport"):
            view = await state.page.evaluate(_VIEWPORT_JS)
    vw, vh, sx, sy = float(view["vw"]), float(view["vh"]), float(view["sx"]), float(view["sy"])
    out: list[tuple[str, dict[str, float]]] = []
    skipped = 0
    for info in wanted:
        box = boxes.get(info.pw_ref)
        if box is None or box[2] <= 0 or box[3] <= 0:
            skipped += 1
            continue
        x, y, w, h = box
        if not full_page and (x + w <= 0 or y + h <= 0 or x >= vw or y >= vh):
            skipped += 1
            continue
        if len(out) >= MAX_LABELS:
            skipped += 1
            continue
        if full_page:
            x, y = x + sx, y + sy
        out.append(
            (
                info.ref,
                {"x": round(x, 1), "y": round(y, 1), "width": round(w, 1), "height": round(h, 1)},
            )
        )
    return out, skipped


async def _boxes_in_utility_world(
    state: PageState, infos: list[RefInfo], boxes: dict[str, tuple[float, float, float, float]]
) -> dict[str, Any] | None:
    cdp = state.cdp
    if cdp is None:
        return None
    try:
        if not state.runtime_enabled:
            await cdp.send("Runtime.enable")
            state.runtime_enabled = True
        ctx = state.utility_context()
        if ctx is None:
            return None
        result = await cdp.send(
            "Runtime.evaluate",
            {
                "expression": f"({_COLLECT_JS})({json.dumps([i.pw_ref for i in infos])})",
                "contextId": ctx,
                "returnByValue": True,
            },
        )
    except PlaywrightError:
        log.debug("utility-world label lookup failed", exc_info=True)
        return None
    value = (result.get("result") or {}).get("value")
    if not isinstance(value, dict) or result.get("exceptionDetails"):
        return None
    for pw_ref, x, y, w, h in value.get("found", []):
        boxes.setdefault(pw_ref, (x, y, w, h))
    return value


async def _boxes_by_locator(
    state: PageState, infos: list[RefInfo], boxes: dict[str, tuple[float, float, float, float]]
) -> None:
    async def one(info: RefInfo) -> tuple[str, FloatRect | None]:
        try:
            return info.pw_ref, await state.page.locator(f"aria-ref={info.pw_ref}").bounding_box(
                timeout=1000
            )
        except PlaywrightError:
            return info.pw_ref, None

    for pw_ref, rect in await asyncio.gather(*(one(i) for i in infos)):
        if rect is not None:
            boxes[pw_ref] = (rect["x"], rect["y"], rect["width"], rect["height"])


def fit(
    data: bytes, fmt: str, quality: int | None, max_width: int | None, max_height: int | None
) -> tuple[bytes, int, int, float]:
    """Downscale to fit maxWidth x maxHeight (vision models cap image sizes)."""
    with Image.open(io.BytesIO(data)) as img:
        width, height = img.size
        scale = min(
            1.0,
            (max_width / width) if max_width else 1.0,
            (max_height / height) if max_height else 1.0,
        )
        if scale >= 1.0:
            return data, width, height, 1.0
        size = (max(1, round(width * scale)), max(1, round(height * scale)))
        small = img.convert("RGB" if fmt == "jpeg" else "RGBA").resize(
            size, Image.Resampling.LANCZOS
        )
    buf = io.BytesIO()
    if fmt == "jpeg":
        small.save(buf, format="JPEG", quality=quality or 80)
    else:
        small.save(buf, format="PNG", optimize=False)
    return buf.getvalue(), size[0], size[1], round(scale, 6)


__all__ = ["screenshot", "take_snapshot"]
