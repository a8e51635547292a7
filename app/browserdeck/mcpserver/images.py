"""Image files handed to an LLM: validated, and no larger than the configured dimension
(``screenshotMaxDimension``; the downscale itself is ``imaging.fit``)."""

from __future__ import annotations

from pathlib import Path

from browserdeck.errors import InvalidInput, NotFound
from browserdeck.util.imaging import fit

MAX_FILE_BYTES = 50 * 2**20


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
    fitted = fit(file.read_bytes(), max_dimension, max_dimension)
    return fitted.data, fitted.mime, (fitted.width, fitted.height), size
