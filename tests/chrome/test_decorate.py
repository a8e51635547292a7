"""Profile decoration on disk (what Chrome makes of it is in test_launcher.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from browserdeck.chrome.decorate import (
    color_to_skcolor,
    decorate_profile,
    local_state_path,
    preferences_path,
    read_decoration,
    skcolor_to_color,
)
from browserdeck.errors import InvalidInput


def load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def test_colour_is_stored_as_a_signed_argb_int() -> None:
    assert color_to_skcolor("#FF4500") == 0xFFFF4500 - 2**32
    assert color_to_skcolor("#0066cc") == 0xFF0066CC - 2**32
    assert skcolor_to_color(color_to_skcolor("#0066CC")) == "#0066CC"
    with pytest.raises(InvalidInput):
        color_to_skcolor("orange")


def test_fresh_profile_is_bootstrapped_and_decorated(tmp_path: Path) -> None:
    udd = tmp_path / "user-data"
    decorate_profile(udd, "agent", "#FF4500")
    prefs = load(preferences_path(udd))
    state = load(local_state_path(udd))
    seed = color_to_skcolor("#FF4500")
    assert prefs["profile"]["name"] == "agent"
    assert prefs["profile"]["exit_type"] == "Normal"
    assert prefs["profile"]["exited_cleanly"] is True
    assert prefs["browser"]["theme"]["user_color2"] == seed
    assert prefs["extensions"]["theme"]["id"] == "user_color_theme_id"
    assert state["profile"]["info_cache"]["Default"]["name"] == "agent"
    assert state["profile"]["info_cache"]["Default"]["profile_color_seed"] == seed
    assert read_decoration(udd) == {
        "name": "agent",
        "color": "#FF4500",
        "local_state_name": "agent",
        "local_state_color": "#FF4500",
        "exit_type": "Normal",
        "exited_cleanly": True,
    }


def test_existing_prefs_are_kept(tmp_path: Path) -> None:
    udd = tmp_path / "user-data"
    preferences_path(udd).parent.mkdir(parents=True)
    preferences_path(udd).write_text(
        json.dumps(
            {
                "homepage": "https://example.org/",
                "browser": {"window_placement": {"top": 3}, "theme": {"color_scheme2": 2}},
                "profile": {"exit_type": "Crashed", "content_settings": {"x": 1}},
            }
        )
    )
    local_state_path(udd).write_text(
        json.dumps({"profile": {"info_cache": {"Default": {"gaia_name": "A"}}}, "x": [1, 2]})
    )
    decorate_profile(udd, "work", "#0066CC")
    prefs = load(preferences_path(udd))
    assert prefs["homepage"] == "https://example.org/"
    assert prefs["browser"]["window_placement"] == {"top": 3}
    assert prefs["browser"]["theme"]["color_scheme2"] == 2
    assert prefs["profile"]["content_settings"] == {"x": 1}
    assert prefs["profile"]["exit_type"] == "Normal"  # a crash no longer shows "Restore pages?"
    state = load(local_state_path(udd))
    assert state["x"] == [1, 2]
    assert state["profile"]["info_cache"]["Default"]["gaia_name"] == "A"
    assert read_decoration(udd)["color"] == "#0066CC"


def test_redecorating_with_the_same_values_does_not_rewrite(tmp_path: Path) -> None:
    udd = tmp_path / "user-data"
    decorate_profile(udd, "agent", "#FF4500")
    before = (preferences_path(udd).stat().st_ino, local_state_path(udd).stat().st_ino)
    decorate_profile(udd, "agent", "#FF4500")
    after = (preferences_path(udd).stat().st_ino, local_state_path(udd).stat().st_ino)
    assert before == after  # an atomic rewrite would have replaced the inode
    decorate_profile(udd, "agent", "#00AA00")
    assert preferences_path(udd).stat().st_ino != before[0]
    assert read_decoration(udd)["color"] == "#00AA00"
    leftovers = [p.name for p in udd.rglob("*.tmp")]
    assert leftovers == []


def test_a_corrupt_file_is_kept_aside_not_lost(tmp_path: Path) -> None:
    udd = tmp_path / "user-data"
    preferences_path(udd).parent.mkdir(parents=True)
    preferences_path(udd).write_text('{"half": ')
    decorate_profile(udd, "agent", "#FF4500")
    aside = list(preferences_path(udd).parent.glob("Preferences.bad-*"))
    assert len(aside) == 1
    assert aside[0].read_text() == '{"half": '
    assert read_decoration(udd)["name"] == "agent"


def test_non_object_nodes_are_replaced(tmp_path: Path) -> None:
    udd = tmp_path / "user-data"
    preferences_path(udd).parent.mkdir(parents=True)
    preferences_path(udd).write_text(json.dumps({"browser": 5, "profile": None}))
    decorate_profile(udd, "agent", "#FF4500")
    assert read_decoration(udd)["color"] == "#FF4500"


def test_read_decoration_of_an_empty_dir(tmp_path: Path) -> None:
    assert read_decoration(tmp_path) == {
        "name": None,
        "color": None,
        "local_state_name": None,
        "local_state_color": None,
        "exit_type": None,
        "exited_cleanly": None,
    }
