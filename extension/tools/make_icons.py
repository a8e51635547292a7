"""Draw the extension's toolbar icons (icons/icon{16,32,48,128}.png) with Pillow.

Same drawing as drawIcon() in background.js, which recolours the icon at run time to
the colour of the profile the relay serves; these files are what Chrome shows before
the first connection. Default colour: the `chrome` profile's #00AA00.

    .venv/bin/python extension/tools/make_icons.py [#RRGGBB]
"""

from __future__ import annotations

import sys
from pathlib import Path

from PIL import Image, ImageDraw

ICONS = Path(__file__).resolve().parent.parent / "icons"
SUPERSAMPLE = 8  # draw large, then downscale: smooth edges at 16 px


def draw(size: int, color: str) -> Image.Image:
    big = size * SUPERSAMPLE
    s = float(big)
    image = Image.new("RGBA", (big, big), (0, 0, 0, 0))
    g = ImageDraw.Draw(image)
    g.rounded_rectangle((0, 0, big - 1, big - 1), radius=int(s * 0.22), fill=color)
    m = s * 0.2
    w = s - 2 * m
    card = w - s * 0.1
    back = Image.new("RGBA", (big, big), (0, 0, 0, 0))
    ImageDraw.Draw(back).rounded_rectangle(
        (m + s * 0.1, m - s * 0.06, m + s * 0.1 + card, m - s * 0.06 + card),
        radius=int(s * 0.08),
        fill=(255, 255, 255, 140),
    )
    image.alpha_composite(back)
    g = ImageDraw.Draw(image)
    g.rounded_rectangle(
        (m, m + s * 0.06, m + card, m + s * 0.06 + card), radius=int(s * 0.08), fill="#ffffff"
    )
    bar_top = m + s * 0.06 + s * 0.12
    g.rectangle(
        (
            m + s * 0.06,
            bar_top,
            m + s * 0.06 + (w - s * 0.22),
            bar_top + max(SUPERSAMPLE, s * 0.07),
        ),
        fill=color,
    )
    return image.resize((size, size), Image.Resampling.LANCZOS)


def main(argv: list[str]) -> int:
    color = argv[1] if len(argv) > 1 else "#00AA00"
    ICONS.mkdir(exist_ok=True)
    for size in (16, 32, 48, 128):
        draw(size, color).save(ICONS / f"icon{size}.png", optimize=True)
    print(f"wrote {ICONS}/icon{{16,32,48,128}}.png in {color}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
