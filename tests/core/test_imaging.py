"""imaging.fit: the one downscale for the engine's screenshots and the MCP image tools."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from browserdeck.errors import InvalidInput
from browserdeck.util.imaging import fit


def encode(image: Image.Image, fmt: str) -> bytes:
    buf = io.BytesIO()
    image.save(buf, fmt)
    return buf.getvalue()


def test_an_image_that_fits_is_returned_as_it_is() -> None:
    data = encode(Image.new("RGB", (300, 200), "red"), "PNG")
    fitted = fit(data, 300, None)
    assert (fitted.data, fitted.mime, fitted.width, fitted.height, fitted.scale) == (
        data, "image/png", 300, 200, 1.0,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("fmt", "mode", "mime"),
    [("PNG", "RGBA", "image/png"), ("JPEG", "RGB", "image/jpeg"), ("GIF", "P", "image/png")],
)
def test_downscaled_to_the_tighter_side_keeping_the_format(fmt: str, mode: str, mime: str) -> None:
    data = encode(Image.new(mode, (1000, 400)), fmt)
    fitted = fit(data, 500, 100)
    assert (fitted.width, fitted.height, fitted.mime, fitted.scale) == (250, 100, mime, 0.25)
    with Image.open(io.BytesIO(fitted.data)) as out:
        assert out.size == (250, 100)
        assert out.format == mime.split("/")[1].upper()


def test_not_an_image_is_invalid_input() -> None:
    with pytest.raises(InvalidInput, match="not an image"):
        fit(b"<html>", 100, 100)
