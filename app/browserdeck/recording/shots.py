"""The recorded images as a person sees them: masked, outlined, captioned (Pillow).

The engine hands the recorder a JPEG of the viewport and, in CSS pixels, the boxes of the
password inputs and of the element acted on (engine/recshot.py). Here, on a thread and
off the action's path, the inputs are painted over first (nothing unmasked is ever
written), the element is outlined in the accent colour with its ref beside it, and a
caption strip above the page says which step this is and what it did.
"""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from PIL import Image, ImageDraw, ImageFont

if TYPE_CHECKING:
    from PIL.ImageFont import FreeTypeFont
    from PIL.ImageFont import ImageFont as BitmapFont

    from browserdeck.util.labels import Rect

CAPTION_PX = 28  # the strip above the page (image pixels)
ACCENT = (255, 69, 0)  # the engine's label colour (#FF4500)
MASK = (70, 74, 82)
QUALITY = 75


@dataclass(frozen=True)
class Picture:
    """A finished image: JPEG bytes and their size in pixels (caption included)."""

    data: bytes
    width: int
    height: int


@cache
def _font(size: int) -> FreeTypeFont | BitmapFont:
    try:
        return ImageFont.load_default(size=size)
    except (OSError, TypeError):  # Pillow without FreeType: its bitmap font
        return ImageFont.load_default()


def _scaled(rect: Rect, k: float, top: int) -> tuple[float, float, float, float]:
    return (rect.x * k, rect.y * k + top, (rect.x + rect.width) * k, (rect.y + rect.height) * k + top)


def finish(
    jpeg_base64: str,
    *,
    css_width: int | None,
    masks: list[Rect],
    target: Rect | None,
    ref: str | None,
    caption: str,
) -> Picture:
    """The recorded image: ``masks`` painted over, ``target`` outlined, the caption above."""
    page = Image.open(io.BytesIO(base64.b64decode(jpeg_base64))).convert("RGB")
    k = page.width / css_width if css_width else 1.0
    image = Image.new("RGB", (page.width, page.height + CAPTION_PX), (32, 34, 38))
    image.paste(page, (0, CAPTION_PX))
    draw = ImageDraw.Draw(image)
    small = _font(12)
    for rect in masks:
        box = _scaled(rect, k, CAPTION_PX)
        draw.rectangle(box, fill=MASK)
        if box[2] - box[0] > 60 and box[3] - box[1] > 12:
            draw.text((box[0] + 4, box[1] + 1), "hidden", fill=(230, 230, 230), font=small)
    if target is not None:
        x0, y0, x1, y1 = _scaled(target, k, CAPTION_PX)
        draw.rectangle((x0 - 2, y0 - 2, x1 + 2, y1 + 2), outline=ACCENT, width=3)
        if ref:
            width = int(draw.textlength(ref, font=small)) + 8
            ty = y0 - 18 if y0 - 18 >= CAPTION_PX else y1 + 3
            draw.rectangle((x0 - 2, ty, x0 - 2 + width, ty + 16), fill=ACCENT)
            draw.text((x0 + 2, ty + 1), ref, fill=(255, 255, 255), font=small)
    draw.text((8, 6), caption[:200], fill=(240, 240, 240), font=_font(14))
    out = io.BytesIO()
    image.save(out, "JPEG", quality=QUALITY, optimize=False)
    return Picture(out.getvalue(), image.width, image.height)
