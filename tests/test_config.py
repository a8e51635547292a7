from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from browserdeck import config
from browserdeck.api.errors import status_of
from browserdeck.errors import Conflict, InvalidInput
from browserdeck.secrets import tokens as secrets
from browserdeck.util import paths


def test_defaults_are_written_on_first_load(bd_home: Path) -> None:
    result = config.load()
    assert result.problem is None
    assert result.path == bd_home / "config" / "config.json"
    on_disk = json.loads(result.path.read_text())
    assert on_disk["controlPort"] == 18791
    assert on_disk["profiles"]["agent"] == {"driver": "managed", "color": "#FF4500", "cdpPort": 18800}
    assert on_disk["profiles"]["chrome"]["driver"] == "extension"
    assert result.config.cdp_url_of(result.config.profiles["chrome"]) == "http://127.0.0.1:18792"


def test_browserdeck_home_relocates_every_path(bd_home: Path) -> None:
    for p in (paths.config_file(), paths.data_dir(), paths.state_dir(), paths.log_dir(),
              paths.cache_dir(), paths.profile_user_data_dir("agent"), paths.token_file()):
        assert bd_home in p.parents


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the API socket is Linux's")
def test_without_a_runtime_dir_the_socket_sits_in_the_state_folder_platformdirs_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A container or a su shell has no XDG_RUNTIME_DIR: the socket's folder is <state>/run,
    # the state folder found without platformdirs (issue 14: ~15 ms of a CLI call).
    import platformdirs

    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    for name in ("BROWSERDECK_HOME", "XDG_RUNTIME_DIR", "XDG_STATE_HOME"):
        monkeypatch.delenv(name, raising=False)
    for state_home in (None, str(tmp_path / "state"), "relative/state", ""):
        if state_home is not None:
            monkeypatch.setenv("XDG_STATE_HOME", state_home)
        assert paths.linux_state_dir() == platformdirs.user_state_dir(paths.APP_NAME), state_home
    monkeypatch.delenv("XDG_STATE_HOME")
    code = (
        "import sys\n"
        "from browserdeck.util import paths\n"
        "paths.api_socket_path()\n"
        "print(paths.runtime_path(), sorted({'pathlib', 'platformdirs'} & set(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60).stdout.split()
    assert out == [str(paths.state_dir() / "run"), "[]"]
    assert stat.S_IMODE(os.stat(paths.state_dir()).st_mode) == 0o700  # as state_dir() makes it


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("Work", "uppercase"),
        ("-work", "starts with '-'"),
        ("a" * 65, "65 characters"),
        ("my_profile", "'_'"),
        ("wörk", "'ö'"),
        ("", "missing"),
    ],
)
def test_invalid_profile_names_say_why(name: str, fragment: str) -> None:
    with pytest.raises(InvalidInput) as info:
        config.validate_profile_name(name)
    assert fragment in info.value.message
    assert info.value.hint


@pytest.mark.parametrize("name", ["agent", "work", "my-project-1", "1st", "a" * 64])
def test_valid_profile_names(name: str) -> None:
    assert config.validate_profile_name(name) == name


@pytest.mark.parametrize("color", ["red", "#FFF", "#GG0000", "FF4500", 7])
def test_invalid_colors(color: object) -> None:
    with pytest.raises(InvalidInput, match="#RRGGBB"):
        config.validate_color(color)


@pytest.mark.parametrize("port", [80, 0, 70000, "18800", True])
def test_invalid_ports(port: object) -> None:
    with pytest.raises(InvalidInput, match="1024 to 65535"):
        config.validate_port(port, "cdpPort")


def test_port_collision_is_named() -> None:
    raw = config.default_config().to_json()
    raw["profiles"]["work"] = {"driver": "managed", "cdpPort": 18800, "color": "#0066CC"}
    with pytest.raises(InvalidInput) as info:
        config.from_json(raw)
    assert "port 18800 is used twice" in info.value.message
    assert "'agent'" in info.value.message and "'work'" in info.value.message


def test_control_port_collides_with_relay() -> None:
    raw = config.default_config().to_json()
    raw["relayPort"] = 18791
    with pytest.raises(InvalidInput, match="port 18791 is used twice"):
        config.from_json(raw)


def test_unknown_default_profile_and_unknown_keys() -> None:
    raw = config.default_config().to_json()
    raw["defaultProfile"] = "nope"
    with pytest.raises(InvalidInput, match="defaultProfile 'nope'"):
        config.from_json(raw)
    raw = config.default_config().to_json()
    raw["colour"] = "#FF0000"
    with pytest.raises(InvalidInput, match="unknown setting"):
        config.from_json(raw)


def test_remote_and_managed_shape_rules() -> None:
    with pytest.raises(InvalidInput, match="needs a cdpUrl"):
        config.parse_profile("r", {"driver": "remote"}, "profiles.r")
    with pytest.raises(InvalidInput, match="needs a cdpPort"):
        config.parse_profile("m", {"driver": "managed"}, "profiles.m")
    with pytest.raises(InvalidInput, match="only for remote"):
        config.parse_profile("m", {"driver": "managed", "cdpPort": 18801,
                                   "cdpUrl": "http://x:1"}, "profiles.m")
    remote = config.parse_profile("r", {"driver": "remote", "cdpUrl": "http://10.0.0.42:9222"}, "r")
    cfg = config.default_config()
    assert not cfg.may_launch(remote)
    assert not config.is_loopback_url("http://10.0.0.42:9222")
    assert config.is_loopback_url("http://localhost:9222")


def test_port_allocation_is_lowest_free_and_exhaustion_is_clear() -> None:
    cfg = config.default_config()
    assert config.allocate_cdp_port(cfg) == 18801
    for port in config.MANAGED_PORT_RANGE:
        name = f"p{port}"
        cfg.profiles[name] = config.ProfileConfig(name, "managed", "#000000", cdp_port=port)
    with pytest.raises(Conflict, match="no free CDP port left in 18800-18899"):
        config.allocate_cdp_port(cfg)


def test_atomic_save_leaves_no_temp_files(bd_home: Path) -> None:
    cfg = config.load().config
    cfg.headless = True
    config.save(cfg)
    files = sorted(p.name for p in paths.config_dir().iterdir())
    assert files == ["config.json"]
    assert config.load().config.headless is True


def test_invalid_save_keeps_the_file(bd_home: Path) -> None:
    result = config.load()
    before = result.path.read_text()
    cfg = result.config
    cfg.relay_port = cfg.control_port
    with pytest.raises(InvalidInput):
        config.save(cfg)
    assert result.path.read_text() == before


@pytest.mark.parametrize(
    ("content", "reason"),
    [("{not json", "not valid JSON"), ('{"controlPort": "x"}', "invalid controlPort")],
)
def test_corrupt_config_is_kept_aside_and_reported(bd_home: Path, content: str, reason: str) -> None:
    path = paths.config_file()
    path.write_text(content)
    result = config.load()
    assert result.problem is not None and reason in result.problem
    aside = [p for p in path.parent.iterdir() if p.name.startswith("config.json.bad-")]
    assert len(aside) == 1
    assert aside[0].read_text() == content  # nothing lost
    assert str(aside[0]) in result.problem
    # The service runs on defaults and the file is valid again.
    assert json.loads(path.read_text())["controlPort"] == 18791


def test_token_fallback_file_is_0600_and_stable(bd_home: Path) -> None:
    token = secrets.get_token("api")
    assert token and len(token) >= 43
    assert secrets.get_token("api") == token
    mode = stat.S_IMODE(os.stat(paths.token_file("api")).st_mode)
    assert mode == 0o600
    assert secrets.get_token("relay") != token


def test_token_env_override(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BROWSERDECK_TOKEN", "from-env")
    assert secrets.get_token("api") == "from-env"
    assert not paths.token_file("api").exists()


def test_settings_schema_covers_every_config_field() -> None:
    cfg = config.default_config().to_json()
    declared = {s.key for s in config.SETTINGS} | {"profiles"}
    assert declared == set(cfg)
    for setting in config.SETTINGS:
        assert setting.description and setting.type


def test_configuration_doc_is_generated_from_the_schema() -> None:
    doc = Path(__file__).resolve().parents[1] / "docs" / "configuration.md"
    assert doc.read_text() == config.settings_markdown(), (
        "docs/configuration.md is stale: run `python -m browserdeck.config > docs/configuration.md`"
    )


def test_read_only_never_writes_or_moves_the_file(bd_home: Path) -> None:
    path = paths.config_file()
    assert not path.exists()
    assert config.read().default_profile == "agent"
    assert not path.exists()  # defaults, but nothing created
    for broken in (b'{"profiles": {', b'{"profiles": \xff}', b'{"colour": 1}'):
        path.write_bytes(broken)
        with pytest.raises(config.ConfigError, match="cannot be used") as err:
            config.read()
        assert err.value.hint
        assert path.read_bytes() == broken
        assert list(path.parent.glob("config.json.bad-*")) == []


def test_token_is_stable_with_a_keyring_that_drops_writes(
    bd_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `keyring --disable` selects the null backend: set_password succeeds and stores nothing.
    import keyring
    from keyring.backends.null import Keyring as NullKeyring

    monkeypatch.setattr(keyring.core, "_keyring_backend", NullKeyring())
    first = secrets.get_token("api")
    assert first and secrets.get_token("api") == first
    assert paths.token_file("api").read_text().strip() == first


def test_asking_for_an_impossible_profile_name_says_why() -> None:
    cfg = config.default_config()
    with pytest.raises(InvalidInput) as err:
        cfg.profile("Work")
    assert err.value.code == "invalid_profile_name" and status_of(err.value) == 400
    assert "uppercase" in err.value.message and "agent, chrome" in err.value.message
    with pytest.raises(InvalidInput) as err:
        cfg.profile("ghost")
    assert err.value.code == "unknown_profile" and status_of(err.value) == 404


@pytest.mark.parametrize(
    ("key", "value", "fragment", "code"),
    [
        ("controlPort", 80, "ports must be integers from 1024 to 65535", "invalid_port"),
        ("controlPort", True, "ports must be integers from 1024 to 65535", "invalid_port"),
        ("mcpIdleMinutes", 1441, "expected a whole number from 0 to 1440", "invalid_setting"),
        ("mcpIdleMinutes", "5", "expected an integer", "invalid_setting"),
        ("relayClientMode", "x", "expected one of single-active, multi-client", "invalid_setting"),
        ("enabled", 1, "expected true or false", "invalid_setting"),
        ("uploadRoots", ["/ok", " "], "expected a list of paths", "invalid_setting"),
        ("executablePath", " ", "expected a non-empty string", "invalid_setting"),
    ],
)
def test_every_kind_of_setting_is_refused_in_plain_words(
    key: str, value: object, fragment: str, code: str
) -> None:
    """One check (config.check_setting, pydantic from the declaration) for the loader,
    profile creation and the settings dialog; its words name the setting and the rule."""
    with pytest.raises(InvalidInput) as caught:
        config.from_json({key: value})
    assert caught.value.message == f"invalid {key} {value!r}: {fragment}" or (
        caught.value.message == f"invalid {key} {value}: {fragment}"
    )
    assert caught.value.code == code
    # The dialog calls the same check with the field's label in place of the key.
    with pytest.raises(InvalidInput, match=fragment):
        config.check_setting(config.SETTING_KEYS[key], value, "Some label")


def test_settings_are_normalised_by_the_same_check() -> None:
    loaded = config.from_json({"uploadRoots": os.pathsep.join(["/a ", "", "/b"])})
    assert loaded.upload_roots == ["/a", "/b"]
    profile = config.parse_profile("p", {"driver": "managed", "cdpPort": 18810,
                                         "color": "#ff4500"}, "profiles.p")
    assert profile.color == "#FF4500"


def test_read_cached_follows_the_file_and_never_raises(bd_home: Path) -> None:
    """MCP tools read the settings on every call: a changed file is seen at once, a
    broken one gives the defaults (the service reports it), and neither is written."""
    assert config.read_cached().mcp_run_code is False  # no file yet: the defaults
    path = paths.config_file()
    config.save(config.updated(config.default_config(), lambda c: setattr(c, "mcp_run_code", True)))
    assert config.read_cached().mcp_run_code is True
    text = path.read_text(encoding="utf-8")
    path.write_text("{not json", encoding="utf-8")
    os.utime(path, ns=(1, 1))  # a different mtime even on a coarse clock
    assert config.read_cached().mcp_run_code is False
    assert path.read_text(encoding="utf-8") == "{not json"  # left for the service to report
    path.write_text(text, encoding="utf-8")
    assert config.read_cached().mcp_run_code is True
