"""The extension folder as shipped: pinned id, files the manifest names, icons, pairing text."""

from __future__ import annotations

import json
import re
import urllib.parse

from PIL import Image

from browserdeck.relay import EXTENSION_ID, pairing
from browserdeck.relay.extension_id import EXTENSION_PUBLIC_KEY, extension_id_from_key
from tests.relay.harness import EXTENSION_DIR

MANIFEST = json.loads((EXTENSION_DIR / "manifest.json").read_text())


def test_manifest_key_pins_the_extension_id() -> None:
    assert MANIFEST["key"] == EXTENSION_PUBLIC_KEY
    assert extension_id_from_key(MANIFEST["key"]) == EXTENSION_ID
    assert re.fullmatch(r"[a-p]{32}", EXTENSION_ID)
    # No private key ships anywhere in the extension folder.
    for path in EXTENSION_DIR.rglob("*"):
        if path.is_file() and path.suffix in (".pem", ".key", ".crx"):
            raise AssertionError(f"private material in the extension: {path}")


def test_manifest_is_mv3_without_a_build_step() -> None:
    assert MANIFEST["manifest_version"] == 3
    assert MANIFEST["background"] == {"service_worker": "background.js", "type": "module"}
    assert set(MANIFEST["permissions"]) == {
        "debugger",
        "tabs",
        "storage",
        "alarms",
        "webNavigation",
    }
    assert set(MANIFEST["host_permissions"]) == {"http://127.0.0.1/*", "http://localhost/*"}
    # Options must not be web-accessible: a page could otherwise open the pairing URL.
    assert "web_accessible_resources" not in MANIFEST
    named = [
        MANIFEST["background"]["service_worker"],
        MANIFEST["action"]["default_popup"],
        MANIFEST["options_ui"]["page"],
    ]
    named += list(MANIFEST["icons"].values()) + list(MANIFEST["action"]["default_icon"].values())
    for name in named:
        assert (EXTENSION_DIR / name).is_file(), name
    for page in ("popup.html", "options.html"):
        html = (EXTENSION_DIR / page).read_text()
        for src in re.findall(r'(?:src|href)="([^"]+)"', html):
            assert (EXTENSION_DIR / src).is_file(), f"{page} -> {src}"
        assert "<script>" not in html  # MV3 pages allow no inline script
    for script in EXTENSION_DIR.glob("*.js"):
        for module in re.findall(r'from "\./([^"]+)"', script.read_text()):
            assert (EXTENSION_DIR / module).is_file(), f"{script.name} imports {module}"


def test_icons_are_square_pngs_in_the_profile_colour() -> None:
    for size, name in MANIFEST["icons"].items():
        with Image.open(EXTENSION_DIR / name) as image:
            assert image.format == "PNG" and image.size == (int(size), int(size))
            rgba = image.convert("RGBA")
            corner = rgba.getpixel((int(size) // 2, int(size) - 2))
            # Resampling blurs edges a little; the bottom band is the profile colour.
            assert all(abs(a - b) <= 8 for a, b in zip(corner[:3], (0, 0xAA, 0), strict=True)), (
                corner
            )
            assert corner[3] == 255


def test_pairing_url_and_relay_url_help() -> None:
    url = pairing.pairing_url(18792, "tok_EN-123", profile="chrome")
    base, _, fragment = url.partition("#")
    assert base == f"chrome-extension://{EXTENSION_ID}/options.html"
    assert urllib.parse.parse_qs(fragment) == {
        "port": ["18792"],
        "token": ["tok_EN-123"],
        "profile": ["chrome"],
    }
    text = pairing.relay_url_help(18792, "tok_EN-123", profile="chrome")
    assert "http://127.0.0.1:18792" in text and "ws://127.0.0.1:18792/cdp" in text
    assert (
        'connect_over_cdp(\n      "http://127.0.0.1:18792", headers={"Authorization": "Bearer tok_EN-123"})'
        in text
    )
    assert "puppeteer.connect" in text and "headers" in text
    assert "browserdeck token --relay" in pairing.pairing_help(18792, "tok", profile="chrome")
