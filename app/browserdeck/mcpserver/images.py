"""Images handed to an LLM: validated, and no larger than the configured dimension.

Vision models downscale large images anyway (and bill for the upload); doing it
here keeps results small and predictable (``screenshotMaxDimension``, default 1568,
Anthropic's recommended longest edge).
"""

from __future__ import annotations

import io
from pathlib import Path

from browserdeck.errors import InvalidInput, NotFound

FORMATS = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}
MAX_FILE_BYTES = 50 * 2**20


def fit(data: bytes, max_dimension: int) -> tuple[bytes, str, tuple[int, int]]:
    """``data`` downscaled so neither side exceeds ``max_dimension`` (format kept).

    Returns the bytes, their MIME type and the final size. Images already small
    enough are returned unchanged.
    """
    from PIL import Image, UnidentifiedImageError

    try:
        image = Image.open(io.BytesIO(data))  # reads the header only; decoding waits
    except (UnidentifiedImageError, OSError) as exc:
        raise InvalidInput(
            f"not an image this server can read ({exc})",
            hint="supported formats: PNG, JPEG, GIF, WebP",
        ) from None
    fmt = (image.format or "PNG").upper()
    if fmt not in FORMATS:
        raise InvalidInput(
            f"unsupported image format {fmt}", hint="convert it to PNG, JPEG, GIF or WebP first"
        )
    width, height = image.size
    if max(width, height) <= max_dimension:
        return data, FORMATS[fmt], (width, height)
    try:
        image.load()
    except OSError as exc:
        raise InvalidInput(
            f"the image is damaged ({exc})", hint="supported formats: PNG, JPEG, GIF, WebP"
        ) from None
    scale = max_dimension / max(width, height)
    size = (max(1, round(width * scale)), max(1, round(height * scale)))
    source: Image.Image = image
    if fmt == "GIF":  # keep the first frame; animation is of no use to a vision model
        source = image.convert("RGBA")
        fmt = "PNG"
    resized = source.resize(size, Image.Resampling.LANCZOS)
    out = io.BytesIO()
    if fmt == "JPEG":
        resized.convert("RGB").save(out, "JPEG", quality=85)
    else:
        resized.save(out, fmt)
    return out.getvalue(), FORMATS[fmt], size


def read(path: str, max_dimension: int) -> tuple[bytes, str, tuple[int, int], int]:
    """Read and validate an image file; returns data, MIME type, size and the file's bytes."""
    file = Path(path).expanduser()
    if not file.is_file():
        raise NotFound(
            f"image file not found: {file}",
            hint="give an absolute path to a PNG, JPEG, GIF or WebP file",
        )
    size = file.stat().st_size
    if size > MAX_FILE_BYTES:
        raise InvalidInput(
            f"{file} is {size / 2**20:.0f} MB; the limit is {MAX_FILE_BYTES // 2**20} MB",
            hint="downscale it first",
        )
    if file.suffix.lower() in (".heic", ".heif"):
        raise InvalidInput(
            f"{file} is HEIC, which this server cannot decode",
            hint="convert it to JPEG or PNG first (e.g. `sips -s format jpeg` on "
            "macOS or `heif-convert`)",
        )
    data, mime, dims = fit(file.read_bytes(), max_dimension)
    return data, mime, dims, size
