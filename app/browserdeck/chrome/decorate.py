"""Profile bootstrap and decoration: the profile's name and colour, written into Chrome's files.

Chrome keeps per-install state in ``<user-data-dir>/Local State`` and per-profile
prefs in ``<user-data-dir>/Default/Preferences`` (both JSON).  Writing the keys
below before launch gives the window a visible tint (Chrome's "custom colour"
theme), names the profile, and marks the last exit as clean so no "Restore
pages?" bubble appears after a kill.

Bootstrap: on a fresh profile both files are simply created with these keys.
Chromium loads seeded prefs as user-set values and fills in everything else
(checked on Chromium 156 through ``chrome://prefs-internals``: ``user_color2`` and
``profile.name`` show as ``user_controlled`` and survive ``Browser.close``), so no
throwaway first launch is needed.

Decoration is re-applied before every launch.  It only ever parses, updates a
few keys and writes atomically (temp file + ``os.replace``), and skips the write
when nothing changed.  A file that does not parse is kept aside as
``<file>.bad-<time>`` (Chrome would discard it anyway) and a fresh one written.
"""

from __future__ import annotations

import json
import logging
import os
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from browserdeck.errors import InvalidInput
from browserdeck.util.files import write_atomic

__all__ = [
    "color_to_skcolor",
    "decorate_profile",
    "local_state_path",
    "preferences_path",
    "read_decoration",
    "skcolor_to_color",
]

log = logging.getLogger(__name__)

_COLOR_RE = re.compile(r"^#?([0-9A-Fa-f]{6})$")
# Chrome's ThemeHelper::kUserColorThemeID: "the theme is a user-picked colour".
_USER_COLOR_THEME_ID = "user_color_theme_id"
# ui::mojom::BrowserColorVariant::kVibrant: a stronger tint than the default kTonalSpot,
# so the agent's window is told apart from a default-blue Chrome at a glance.
_COLOR_VARIANT_VIBRANT = 3
# extensions.theme.system_theme: 0 = Chrome's own theme. On Linux the default can be
# GTK/Qt, which ignores the user colour.
_SYSTEM_THEME_DEFAULT = 0
_GENERIC_AVATAR_INDEX = 26  # the plain silhouette; without one the toolbar shows a broken icon
_GENERIC_AVATAR_ICON = f"chrome://theme/IDR_PROFILE_AVATAR_{_GENERIC_AVATAR_INDEX}"


def local_state_path(user_data_dir: Path) -> Path:
    return Path(user_data_dir) / "Local State"


def preferences_path(user_data_dir: Path) -> Path:
    return Path(user_data_dir) / "Default" / "Preferences"


def color_to_skcolor(color: str) -> int:
    """``#RRGGBB`` → opaque ARGB as the signed 32-bit int Chrome stores (SkColor)."""
    match = _COLOR_RE.match(color.strip())
    if not match:
        raise InvalidInput(
            f"colour {color!r} is not #RRGGBB",
            hint="use a hex colour such as #FF4500",
        )
    argb = 0xFF000000 | int(match.group(1), 16)
    return argb - (1 << 32) if argb & 0x80000000 else argb


def skcolor_to_color(value: int) -> str:
    return f"#{value & 0xFFFFFF:06X}"


def _read_json(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict):
        return data
    aside = path.with_name(f"{path.name}.bad-{time.strftime('%Y%m%d-%H%M%S')}")
    os.replace(path, aside)
    log.warning("%s did not parse as a JSON object; kept it as %s and started afresh", path, aside)
    return {}


def _write_json_atomic(path: Path, data: dict[str, Any]) -> None:
    # Chrome writes its prefs compact and UTF-8; match it.
    write_atomic(path, json.dumps(data, ensure_ascii=False, separators=(",", ":")))


def _node(root: dict[str, Any], *keys: str) -> dict[str, Any]:
    """The dict at ``root[k1][k2]...``, replacing anything that is not a dict."""
    node = root
    for key in keys:
        child = node.get(key)
        if not isinstance(child, dict):
            child = {}
            node[key] = child
        node = child
    return node


def _update(path: Path, apply: Callable[[dict[str, Any]], None]) -> None:
    data = _read_json(path)
    before = json.dumps(data, sort_keys=True)
    apply(data)
    if not path.exists() or json.dumps(data, sort_keys=True) != before:
        _write_json_atomic(path, data)


def decorate_profile(user_data_dir: Path, name: str, color: str) -> None:
    """Name and tint the profile and mark its last exit clean (creates the files if missing).

    Must not be called while a browser is using ``user_data_dir``: Chrome rewrites
    both files from memory and would undo (or race) the edit.
    """
    seed = color_to_skcolor(color)
    user_data_dir = Path(user_data_dir)

    def local_state(data: dict[str, Any]) -> None:
        info = _node(data, "profile", "info_cache", "Default")
        info["name"] = name
        info["is_using_default_name"] = False
        info["profile_color_seed"] = seed
        if "avatar_icon" not in info:
            info["avatar_icon"] = _GENERIC_AVATAR_ICON
            info["is_using_default_avatar"] = True
        _node(data, "profile")["last_used"] = "Default"
        _node(data, "user_experience_metrics", "stability")["exited_cleanly"] = True

    def preferences(data: dict[str, Any]) -> None:
        profile = _node(data, "profile")
        profile["name"] = name
        profile["using_default_name"] = False
        profile.setdefault("avatar_index", _GENERIC_AVATAR_INDEX)
        profile.setdefault("using_default_avatar", True)
        # A killed browser leaves exit_type "Crashed"; "Normal" avoids the restore bubble.
        profile["exit_type"] = "Normal"
        profile["exited_cleanly"] = True
        theme = _node(data, "browser", "theme")
        theme["user_color2"] = seed
        theme["color_variant2"] = _COLOR_VARIANT_VIBRANT
        theme["is_grayscale2"] = False
        theme["follows_system_colors"] = False
        ext_theme = _node(data, "extensions", "theme")
        ext_theme["id"] = _USER_COLOR_THEME_ID
        ext_theme["system_theme"] = _SYSTEM_THEME_DEFAULT
        # Pre-2023 Chrome ("autogenerated" colour themes) reads this one instead.
        _node(data, "autogenerated", "theme")["color"] = seed

    _update(local_state_path(user_data_dir), local_state)
    _update(preferences_path(user_data_dir), preferences)


def read_decoration(user_data_dir: Path) -> dict[str, Any]:
    """What the profile files say now: ``name``, ``color`` (``#RRGGBB`` or None) and more.

    Keys: ``name`` and ``color`` (from Preferences, what the window shows),
    ``local_state_name`` and ``local_state_color`` (the profile picker's copy),
    ``exit_type`` and ``exited_cleanly``.  Missing values are None.
    """
    user_data_dir = Path(user_data_dir)

    def load(path: Path) -> dict[str, Any]:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def dig(data: dict[str, Any], *keys: str) -> Any:
        node: Any = data
        for key in keys:
            if not isinstance(node, dict):
                return None
            node = node.get(key)
        return node

    def as_color(value: Any) -> str | None:
        return skcolor_to_color(value) if isinstance(value, int) and value else None

    prefs = load(preferences_path(user_data_dir))
    state = load(local_state_path(user_data_dir))
    return {
        "name": dig(prefs, "profile", "name"),
        "color": as_color(dig(prefs, "browser", "theme", "user_color2")),
        "local_state_name": dig(state, "profile", "info_cache", "Default", "name"),
        "local_state_color": as_color(
            dig(state, "profile", "info_cache", "Default", "profile_color_seed")
        ),
        "exit_type": dig(prefs, "profile", "exit_type"),
        "exited_cleanly": dig(prefs, "profile", "exited_cleanly"),
    }
