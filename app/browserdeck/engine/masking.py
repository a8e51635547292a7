"""Screenshots never show a secret the engine typed: its inputs are covered while they are taken.

The inputs are those placeholders.py remembered for the tab's current document. Each is
covered by an opaque box drawn over it (in a closed shadow root, as the ref labels are)
for the capture, then the boxes are removed. A password input shows bullets by itself;
it is covered too when it holds a secret (a page's "show password" button turns it into
text). What a page draws from the value elsewhere is not known here: docs/secrets.md.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

from playwright.async_api import Error as PlaywrightError

from browserdeck.engine import placeholders

if TYPE_CHECKING:
    from browserdeck.engine.state import PageState

MASK_ID = "__browserdeck_mask__"
MASK_COLOR = "#000000"

_DRAW_JS = """([boxes, id, color]) => {
  document.getElementById(id)?.remove();
  const host = document.createElement('div');
  host.id = id;
  host.style.cssText = 'position:absolute;left:0;top:0;width:0;height:0;overflow:visible;' +
    'z-index:2147483647;pointer-events:none;';
  const root = host.attachShadow({mode: 'closed'});
  for (const [x, y, w, h] of boxes) {
    const box = document.createElement('div');
    box.style.cssText = `position:absolute;left:${x + scrollX}px;top:${y + scrollY}px;` +
      `width:${w}px;height:${h}px;background:${color};`;
    root.append(box);
  }
  document.documentElement.appendChild(host);
}"""
_REMOVE_JS = "(id) => document.getElementById(id)?.remove()"


async def held_boxes(state: PageState) -> list[list[float]]:
    """The boxes ([x, y, width, height]) of this document's inputs that hold a secret."""
    boxes: list[list[float]] = []
    for held in placeholders.held_inputs(state):
        with contextlib.suppress(PlaywrightError):  # gone with its frame: nothing to cover
            handle = await asyncio.shield(held)
            if handle is None:
                continue
            box = await handle.bounding_box()
            if box is not None:
                # A pixel more on each side: antialiased edges of the text stay covered.
                boxes.append([box["x"] - 1, box["y"] - 1, box["width"] + 2, box["height"] + 2])
    return boxes


async def cover(state: PageState) -> bool:
    """Draw a box over every input of this document that holds a secret; True if any."""
    if not placeholders.held_inputs(state):
        return False
    boxes = await held_boxes(state)
    if not boxes:
        return False
    await state.page.evaluate(_DRAW_JS, [boxes, MASK_ID, MASK_COLOR])
    return True


async def uncover(state: PageState) -> None:
    with contextlib.suppress(PlaywrightError):  # the page navigated: the boxes went with it
        await state.page.evaluate(_REMOVE_JS, MASK_ID)
