"""A setting is declared in one place: its model's field (config/schema.py, ``declare``).

Everything else (the table of settings, the file's keys, the check, the dialog's words,
what saving restarts, docs/configuration.md) is read off that declaration; these tests
fail when a setting is added somewhere else, or declared with something missing.
"""

from __future__ import annotations

import dataclasses
import typing
from pathlib import Path

import pytest

from browserdeck import config, driverspecs, reconfig
from browserdeck.config.schema import Setting, declare, declared
from browserdeck.errors import InvalidInput

# The python type a value of each kind has (None aside, for a profile field that is unset).
_PYTHON_TYPE = {
    "bool": bool,
    "port": int,
    "int": int,
    "choice": str,
    "color": str,
    "url": str,
    "path": str,
    "profile-ref": str,
    "string": str,
    "paths": list[str],
    "words": list[str],
    "origins": list[str],
}


def _every() -> list[Setting]:
    return [*config.SETTINGS, *config.PROFILE_FIELDS]


@pytest.mark.parametrize(
    ("model", "table", "not_settings"),
    [
        (config.Config, config.SETTINGS, {"profiles"}),
        (config.ProfileConfig, config.PROFILE_FIELDS, {"name"}),
    ],
)
def test_every_field_of_the_models_is_a_declared_setting(
    model: type, table: tuple[Setting, ...], not_settings: set[str]
) -> None:
    # A field added with a plain default would be saved and loaded by nobody.
    fields = [f.name for f in dataclasses.fields(model) if f.name not in not_settings]
    assert [s.attr for s in table] == fields
    hints = typing.get_type_hints(model)
    for setting in table:
        assert setting.key == config.key_of(setting.attr)
        assert config.attr_of(setting.key) == setting.attr
        # The annotation mypy checks `config.x` with agrees with the declared kind.
        want = _PYTHON_TYPE[setting.type]
        assert hints[setting.attr] in (want, want | None), setting.key


def test_the_file_holds_exactly_the_declared_settings() -> None:
    saved = config.default_config().to_json()
    assert list(saved) == [s.key for s in config.SETTINGS] + ["profiles"]
    for setting in config.SETTINGS:
        assert saved[setting.key] == setting.default
        assert config.check_setting(setting, setting.default) == setting.default


def test_every_declaration_has_the_dialogs_words_and_the_references() -> None:
    for s in _every():
        assert s.description, f"{s.key}: no description for the reference and the API"
        assert s.label, f"{s.key}: no label for the settings dialog"
        assert s.help or s.choice_labels, f"{s.key}: no help line for the settings dialog"
        if s.type == "choice":
            assert set(s.choice_labels) == set(s.choices), f"{s.key}: a choice without words"
        if s.scope == "global":
            assert s.group in ("general", "ports", "advanced", "browsers"), s.key
            assert bool(s.checkbox) == (s.type == "bool"), f"{s.key}: checkbox text"
        else:
            assert s.group == "profile" and not s.checkbox, s.key
        if s.minimum is not None or s.maximum is not None:
            assert s.type == "int", f"{s.key}: bounds on a {s.type}"


def test_per_driver_fields_are_the_ones_drivers_pick_from() -> None:
    driver_fields = {s.key for s in config.PROFILE_FIELDS if s.scope == "driver"}
    assert driver_fields == set(driverspecs.DRIVER_FIELDS)


def test_what_saving_restarts_is_read_off_the_declarations() -> None:
    # Subsets: a setting added later declares its own (a live profile field: restarts="").
    live = {"color", "poolIdleSeconds", "approval", "allowedOrigins", "blockedOrigins"}
    assert live <= reconfig.LIVE_PROFILE_KEYS
    assert {"cdpPort", "driver", "headless"}.isdisjoint(reconfig.LIVE_PROFILE_KEYS)
    assert {
        "headless": "headless",
        "executablePath": "executable_path",
        "noSandbox": "no_sandbox",
    }.items() <= reconfig.LAUNCH_KEYS.items()
    assert {
        "relayPort": "relay_port",
        "relayClientMode": "relay_client_mode",
    }.items() <= reconfig.RELAY_KEYS.items()


def test_one_new_field_is_a_whole_setting() -> None:
    """What a newcomer writes to add a setting, and everything it gives them."""

    @dataclasses.dataclass
    class Wider(config.Config):
        zoom_percent: int = declare(
            "int",
            100,
            "Zoom of new tabs, in percent.",
            label="Zoom (%)",
            help="New tabs open at this zoom.",
            minimum=25,
            maximum=500,
            group="advanced",
            restarts="launched",
        )

    table = declared(Wider, "global")
    assert [s.key for s in table] == [s.key for s in config.SETTINGS] + ["zoomPercent"]
    zoom = table[-1]
    assert (zoom.attr, zoom.default, zoom.group, zoom.restarts) == (
        "zoom_percent",
        100,
        "advanced",
        "launched",
    )
    assert Wider().zoom_percent == 100
    assert config.check_setting(zoom, 200) == 200
    with pytest.raises(InvalidInput) as e:
        config.check_setting(zoom, 1000)
    assert "from 25 to 500" in str(e.value)
    assert config.setting_schema(zoom)["maximum"] == 500


def test_configuration_doc_says_what_saving_restarts() -> None:
    doc = (Path(__file__).resolve().parents[1] / "docs" / "configuration.md").read_text()
    assert "| `relayPort` | port | `18792` | restarts extension profiles |" in doc
    assert '| `color` | color | `"#FF4500"` | at once |' in doc
    assert "## Adding a setting" in doc
