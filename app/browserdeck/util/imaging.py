"""Fitting an image into a box: the one downscale for images handed to an LLM.

Vision models downscale large images anyway (and bill for the upload); doing it
here keeps results small and predictable. Used by the engine's screenshot
(``maxWidth``/``maxHeight``) and by the MCP tools (``screenshotMaxDimension``,
default 1568, Anthropic's recommended longest edge).
"""

from __future__ import annotations

import io
from dataclasses import dataclass

from browserdeck.errors import InvalidInput

FORMATS = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}
_READABLE = "supported formats: PNG, JPEG, GIF, WebP"


@dataclass(frozen=True)
class Fitted:
    """The image as fitted: its bytes, MIME type, size, and the scale applied (1.0: as given)."""

    data: bytes
    mime: str
    width: int
    height: int
    scale: float


def fit(
    data: bytes,
    max_width: int | None,
    max_height: int | None,
    *,
    jpeg_quality: int = 85,
) -> Fitted:
    """``data`` downscaled (never up) so it fits ``max_width`` x ``max_height`` (None: no limit).

    The format is kept (a GIF becomes a PNG of its first frame: animation is of no use
    to a vision model); an image that already fits is returned unchanged. Raises
    InvalidInput for data that is not a readable PNG, JPEG, GIF or WebP.
    """
    # Imported here: Pillow costs start-up time to every process that merely imports this.
    from PIL import Image, UnidentifiedImageError

    try:
        image = Image.open(io.BytesIO(data))  # reads the header only; decoding waits
    except (UnidentifiedImageError, OSError) as exc:
        raise InvalidInput(f"not an image this server can read ({exc})", hint=_READABLE) from None
    with image:
        fmt = (image.format or "PNG").upper()
        if fmt not in FORMATS:
            raise InvalidInput(
                f"unsupported image format {fmt}",
                hint="convert it to PNG, JPEG, GIF or WebP first",
            )
        width, height = image.size
        scale = min(
            1.0,
            (max_width / width) if max_width else 1.0,
            (max_height / height) if max_height else 1.0,
        )
        if scale >= 1.0:
            return Fitted(data, FORMATS[fmt], width, height, 1.0)
        try:
            image.load()
        except OSError as exc:
            raise InvalidInput(f"the image is damaged ({exc})", hint=_READABLE) from None
        size = (max(1, round(width * scale)), max(1, round(height * scale)))
        source: Image.Image = image
        if fmt == "GIF":
            fmt = "PNG"
        if fmt == "JPEG":
            source = image.convert("RGB")
        elif image.mode not in ("RGB", "RGBA", "L", "LA"):  # palette: resample in colour
            source = image.convert("RGBA")
        resized = source.resize(size, Image.Resampling.LANCZOS)
    out = io.BytesIO()
    if fmt == "JPEG":
        resized.save(out, "JPEG", quality=jpeg_quality)
    else:
        resized.save(out, fmt)
    return Fitted(out.getvalue(), FORMATS[fmt], size[0], size[1], round(scale, 6))
