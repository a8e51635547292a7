"""Settings: declared once, validated precisely, saved atomically.

Each setting is one field of ``Config`` (model.py, global) or ``ProfileConfig``
(profile.py, per profile), declared with ``schema.declare``; the table of settings
(``SETTINGS``, ``PROFILE_FIELDS``) is read off those fields and drives the check
(check.py), the settings dialog, ``reconfig``, the CLI and docs/configuration.md
(docs.py). store.py loads and saves the file. Callers use ``config.X`` from here.
"""

from __future__ import annotations

from browserdeck.config.check import COLOR_RE, check_setting, setting_schema, split_rules
from browserdeck.config.docs import settings_markdown
from browserdeck.config.model import (
    MANAGED_PORT_RANGE,
    PROFILE_PALETTE,
    SETTING_KEYS,
    SETTINGS,
    Config,
    allocate_cdp_port,
    check_consistency,
    default_config,
    from_json,
    next_color,
    validate_port,
)
from browserdeck.config.profile import (
    CREATE_FIELDS,
    DRIVERS,
    PROFILE_FIELDS,
    PROFILE_KEYS,
    PROFILE_NAME_RE,
    Driver,
    ProfileConfig,
    parse_profile,
    validate_cdp_url,
    validate_color,
    validate_profile_name,
)
from browserdeck.config.schema import Setting, attr_of, declare, key_of
from browserdeck.config.store import (
    TEMP_FILE_GRACE,
    LoadResult,
    load,
    read,
    read_cached,
    remove_stale_temp_files,
    save,
    updated,
)
from browserdeck.errors import ConfigError
from browserdeck.policy.guard import is_loopback_url

__all__ = [
    "COLOR_RE",
    "CREATE_FIELDS",
    "DRIVERS",
    "MANAGED_PORT_RANGE",
    "PROFILE_FIELDS",
    "PROFILE_KEYS",
    "PROFILE_NAME_RE",
    "PROFILE_PALETTE",
    "SETTINGS",
    "SETTING_KEYS",
    "TEMP_FILE_GRACE",
    "Config",
    "ConfigError",
    "Driver",
    "LoadResult",
    "ProfileConfig",
    "Setting",
    "allocate_cdp_port",
    "attr_of",
    "check_consistency",
    "check_setting",
    "declare",
    "default_config",
    "from_json",
    "is_loopback_url",
    "key_of",
    "load",
    "next_color",
    "parse_profile",
    "read",
    "read_cached",
    "remove_stale_temp_files",
    "save",
    "setting_schema",
    "settings_markdown",
    "split_rules",
    "updated",
    "validate_cdp_url",
    "validate_color",
    "validate_port",
    "validate_profile_name",
]
