"""Settings: declared once, validated precisely, saved atomically.

The schema below (``SETTINGS`` and ``PROFILE_FIELDS``) is the single source of
truth: the settings dialog, ``browserdeck config`` and docs/configuration.md are
generated from it, and ``validate`` reads it.  On disk the config is JSON with
camelCase keys (``<config dir>/config.json``)::

    {"enabled": true, "controlPort": 18791, "defaultProfile": "agent",
     "profiles": {"agent": {"driver": "managed", "cdpPort": 18800, "color": "#FF4500"}}}

A file that fails to parse is never replaced silently: it is moved aside to
``config.json.bad-<time>`` and the error says where it went.

Why one module (about 1,000 lines): the declarations (``SETTINGS``, ``PROFILE_FIELDS``),
the typed model (``Config``, ``ProfileConfig``), the one check (``check_setting``) and
loading and saving are one concept, the settings, read by every layer as ``config.X``;
the declarations are a third of it, and the check reads them while the docs generator
at the end prints them.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from browserdeck import driverspecs as drivers
from browserdeck.policy import origins
from browserdeck.util import paths

if TYPE_CHECKING:
    from pydantic import TypeAdapter
from browserdeck.errors import (
    CREATE_PROFILE,
    DELETE_PROFILE,
    PROFILES,
    BrowserdeckError,
    ConfigError,
    Conflict,
    Hint,
    InvalidInput,
)
from browserdeck.policy.guard import is_loopback_url
from browserdeck.util.files import stale_temp_files, write_atomic

# A profile's driver: one of the names registered in drivers/ (drivers.SPECS).
Driver = str
DRIVERS: tuple[Driver, ...] = tuple(drivers.SPECS)

PROFILE_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")
COLOR_RE = re.compile(r"^#[0-9A-Fa-f]{6}$")
MANAGED_PORT_RANGE = range(18800, 18900)

# A palette for new profiles, so each one is visibly different without asking.
PROFILE_PALETTE = (
    "#FF4500",
    "#0066CC",
    "#00AA00",
    "#9C27B0",
    "#E91E63",
    "#009688",
    "#FF9800",
    "#795548",
    "#3F51B5",
    "#607D8B",
)


@dataclass(frozen=True)
class Setting:
    """One declared setting: key on disk, type, default and a description for people."""

    key: str
    # "bool" | "port" | "int" | "choice" | "path" | "paths" | "words" | "profile-ref" | "origins"
    type: str
    default: Any
    description: str
    choices: tuple[str, ...] = ()
    minimum: int | None = None
    maximum: int | None = None
    advanced: bool = False
    at_create: bool = False  # a profile field POST /profiles/create takes (CREATE_FIELDS)


SETTINGS: tuple[Setting, ...] = (
    Setting(
        "enabled",
        "bool",
        True,
        "Browser control on/off. When off nothing is launched and every browser "
        "route answers 'browser control is disabled in settings'.",
    ),
    Setting(
        "controlPort",
        "port",
        18791,
        "Port of the local control API (HTTP, MCP at /mcp), always on 127.0.0.1.",
    ),
    Setting(
        "relayPort",
        "port",
        18792,
        "Port of the extension relay for extension profiles without their own port.",
    ),
    Setting(
        "defaultProfile",
        "profile-ref",
        "agent",
        "Profile used when a request names none (?profile=).",
    ),
    Setting(
        "headless",
        "bool",
        False,
        "Run managed browsers headless. On Linux with no display they always are.",
    ),
    Setting(
        "noSandbox",
        "bool",
        False,
        "Launch managed browsers with --no-sandbox (needed when running as root).",
        advanced=True,
    ),
    Setting(
        "attachOnly",
        "bool",
        False,
        "Never launch a browser; only attach to one already listening on the "
        "profile's CDP port or URL.",
        advanced=True,
    ),
    Setting(
        "executablePath",
        "path",
        None,
        "Chrome/Chromium binary to launch instead of the auto-detected one (a headless "
        "profile runs Debian's `chromium-headless-shell` where the search picks Debian's "
        "`chromium` and the shell is installed beside it, the same version; set this to "
        "run another binary).",
        advanced=True,
    ),
    Setting(
        "relayClientMode",
        "choice",
        "single-active",
        "Extension relay arbitration: one CDP client at a time (second gets 409) or many at once.",
        choices=("single-active", "multi-client"),
        advanced=True,
    ),
    Setting(
        "startDefaultProfile",
        "bool",
        False,
        "Start the default profile's browser when browserdeck starts.",
    ),
    Setting("startAtLogin", "bool", False, "Start browserdeck when you log in."),
    Setting(
        "mcpIdleMinutes",
        "int",
        30,
        "A service that `browserdeck mcp` started stops (closing its browsers cleanly) "
        "after this many minutes with no MCP client alive and no API call (0 = never).",
        minimum=0,
        maximum=24 * 60,
        advanced=True,
    ),
    Setting(
        "agentIdleMinutes",
        "int",
        30,
        "A named API or CLI client (X-Browserdeck-Session, BROWSERDECK_CLIENT) that makes "
        "no call for this many minutes is ended like an MCP session that closes: the tabs "
        "it opened close (unless kept), tabs it used are given back, and its next call is "
        "told why (0 = never).",
        minimum=0,
        maximum=7 * 24 * 60,
        advanced=True,
    ),
    Setting(
        "mcpRunCode",
        "bool",
        False,
        "Expose browser_run_code/browser_reset over MCP (runs Python Playwright code "
        "you send; off by default).",
        advanced=True,
    ),
    Setting(
        "screenshotMaxDimension",
        "int",
        1568,
        "Largest width/height of screenshots handed to LLMs over MCP (downscaled).",
        minimum=256,
        maximum=8192,
        advanced=True,
    ),
    Setting(
        "actionWaitMs",
        "int",
        5000,
        "Longest an action (click, type, press, select, drag, upload) waits for what it "
        "caused: a navigation it started, the requests it started. 0: do not wait.",
        minimum=0,
        maximum=60000,
        advanced=True,
    ),
    Setting(
        "allowFileUrls",
        "bool",
        False,
        "Let agents open file:// URLs (they could then read any file this user can). "
        "Off by default, as in Playwright MCP.",
        advanced=True,
    ),
    Setting(
        "maxTabs",
        "int",
        40,
        "Most tabs an agent may open in one profile (each costs ~25 MB); opening one more "
        "is refused until one is closed.",
        minimum=1,
        maximum=500,
        advanced=True,
    ),
    Setting(
        "artifactsMaxMb",
        "int",
        500,
        "Most disk space (MB) each folder of saved files may use: screenshots, PDFs, "
        "downloads, MCP output, session recordings. The oldest files are removed first.",
        minimum=10,
        maximum=1_000_000,
        advanced=True,
    ),
    Setting(
        "takeOverWaitSeconds",
        "int",
        30,
        "While you have taken over a profile's browser (the panel's Take over), an agent's "
        "call on it waits this long for you to hand it back, then is refused (0: refused "
        "at once).",
        minimum=0,
        maximum=600,
        advanced=True,
    ),
    Setting(
        "artifactsMaxAgeDays",
        "int",
        7,
        "Saved screenshots, PDFs, downloads and MCP output older than this many days are "
        "removed.",
        minimum=1,
        maximum=3650,
        advanced=True,
    ),
    Setting(
        "logMaxMb",
        "int",
        20,
        "Most disk space (MB) the log files may use (rotated in four files).",
        minimum=1,
        maximum=10_000,
        advanced=True,
    ),
    Setting(
        "approval",
        "choice",
        None,
        "Ask you before an agent acts: off; risky (paying, deleting, sending, uploading, "
        "submitting a password, card or one-time code: docs/approval.md); all (every action "
        "that changes a page). A profile's own value wins; unset here and there: the "
        "driver's default (risky for extension profiles, your own Chrome; off for the others).",
        choices=("off", "risky", "all"),
    ),
    Setting(
        "approvalTimeoutSeconds",
        "int",
        60,
        "How long an action waits for your answer; no answer in time is a denial.",
        minimum=5,
        maximum=300,
    ),
    Setting(
        "approvalChannel",
        "choice",
        "tray",
        "Where you are asked first: tray (the tray app's window; else the agent's MCP client, "
        "when it can ask you) or mcp-client (the MCP client first, when it can; else the tray).",
        choices=("tray", "mcp-client"),
        advanced=True,
    ),
    Setting(
        "approvalWords",
        "words",
        [],
        "More words or phrases that make a click risky, besides the built-in English ones "
        "(buy, pay, order, delete, send …; docs/approval.md). Several: separate with commas.",
        advanced=True,
    ),
    Setting(
        "allowedOrigins",
        "origins",
        [],
        "Sites agents may reach: origins or globs (https://example.com, *.example.com, "
        "http://localhost:*). Empty: any site not blocked. Enforced for navigations, "
        "popups, subresources, WebSocket and EventSource; not a security boundary (a "
        "page's service worker and DNS tricks are not stopped: docs/security.md). A "
        "profile may override it.",
    ),
    Setting(
        "blockedOrigins",
        "origins",
        [],
        "Sites agents may never reach, in the same form as allowedOrigins; a block wins "
        "over an allow. A profile may override it.",
    ),
    Setting(
        "redactNetworkSecrets",
        "bool",
        True,
        "Replace the values of Authorization, Proxy-Authorization, Cookie, Set-Cookie and "
        "X-Api-Key headers (and stored secrets) with [redacted] in HAR recordings and in the request "
        "details agents read. Turn off only to debug a login.",
        advanced=True,
    ),
    Setting(
        "uploadRoots",
        "paths",
        [],
        "Folders agents may upload files from, besides the MCP client's own roots (or its "
        "working directory). Your home folder itself, dot-folders and browserdeck's own "
        "folders are never allowed. Several: separate with " + repr(os.pathsep) + ".",
        advanced=True,
    ),
)

PROFILE_FIELDS: tuple[Setting, ...] = (
    Setting(
        "driver",
        "choice",
        "managed",
        "managed: an isolated browser browserdeck launches; extension: your own "
        "Chrome through the browserdeck extension; remote: any CDP URL.",
        choices=DRIVERS,
        at_create=True,
    ),
    Setting(
        "color", "color", "#FF4500", "Tint of the browser window and the tray icon.", at_create=True
    ),
    Setting(
        "cdpPort",
        "port",
        None,
        "managed: the port of browserdeck's CDP endpoint for this profile's browser "
        "(127.0.0.1, API token required; the browser itself listens on no port; "
        "`browserdeck cdp-url` prints how to connect; allocated from 18800-18899 once); "
        "with attachOnly, the port of the browser you started yourself; extension: the "
        "relay port (defaults to relayPort).",
    ),
    Setting(
        "cdpUrl",
        "url",
        None,
        "remote: the CDP endpoint. http(s)://host:9222 for a browser started with "
        "--remote-debugging-port; ws(s)://… for a browser service (Browserless, Browserbase, "
        "Steel, Selenium Grid se:cdp), reached over that WebSocket alone (see docs/remote.md). "
        "A token in its query is moved to the secret store when the profile is created.",
        at_create=True,
    ),
    Setting(
        "tokenParam",
        "string",
        None,
        "remote ws(s): the query parameter that carries the service token kept in the secret "
        "store (e.g. token, apiKey); default: token, unless tokenHeader is set.",
        at_create=True,
    ),
    Setting(
        "tokenHeader",
        "string",
        None,
        "remote ws(s): send the stored token in this header instead (Authorization is sent "
        "as 'Bearer TOKEN', any other header as the bare token).",
        at_create=True,
    ),
    Setting(
        "pool",
        "bool",
        None,
        "remote ws(s): one browser from the service per agent session (MCP session, "
        "BROWSERDECK_CLIENT, X-Browserdeck-Session), released when the session ends or idles; "
        "off: one browser shared by every caller of the profile.",
        at_create=True,
    ),
    Setting(
        "poolIdleSeconds",
        "int",
        300,
        "remote pool: release a session's browser after this long without a call.",
        minimum=10,
        maximum=86400,
        at_create=True,
    ),
    Setting(
        "headless",
        "bool",
        None,
        "Override the global headless setting for this profile.",
        at_create=True,
    ),
    Setting("attachOnly", "bool", None, "Never launch; only attach (forced for remote)."),
    Setting(
        "approval",
        "choice",
        None,
        "Ask you before this profile's agents act (off, risky, all); default: the global "
        "approval setting, else the driver's default.",
        choices=("off", "risky", "all"),
        at_create=True,
    ),
    Setting(
        "allowedOrigins",
        "origins",
        None,
        "This profile's own allowedOrigins (replaces the global list; an empty list "
        "allows every site not blocked).",
    ),
    Setting(
        "blockedOrigins",
        "origins",
        None,
        "This profile's own blockedOrigins (replaces the global list).",
    ),
    Setting(
        "userDataDir",
        "path",
        None,
        "managed: use this user-data dir instead of <data dir>/browser/<name>/user-data.",
        advanced=True,
    ),
)

SETTING_KEYS = {s.key: s for s in SETTINGS}
PROFILE_KEYS = {s.key: s for s in PROFILE_FIELDS}
# What a new profile may be given (POST /profiles/create, `browserdeck create-profile`);
# cdpPort is allocated, and attachOnly and userDataDir are set in the settings by the user.
CREATE_FIELDS = tuple(s for s in PROFILE_FIELDS if s.at_create)
_PORT_SETTING = SETTING_KEYS["controlPort"]


@dataclass
class ProfileConfig:
    name: str
    driver: Driver = "managed"
    color: str = "#FF4500"
    cdp_port: int | None = None
    cdp_url: str | None = None
    headless: bool | None = None
    attach_only: bool | None = None
    user_data_dir: str | None = None
    token_param: str | None = None
    token_header: str | None = None
    pool: bool | None = None
    pool_idle_seconds: int | None = None
    approval: str | None = None  # off | risky | all; None: the global value, else the driver's
    allowed_origins: list[str] | None = None
    blocked_origins: list[str] | None = None

    @property
    def is_service(self) -> bool:
        """A remote profile on a ws(s):// endpoint: a browser service, driven over that socket."""
        spec = drivers.SPECS.get(self.driver)
        url = str(self.cdp_url or "").lower()
        return spec is not None and spec.services and url.startswith(("ws://", "wss://"))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"driver": self.driver, "color": self.color}
        for key, value in (
            ("cdpPort", self.cdp_port),
            ("cdpUrl", self.cdp_url),
            ("tokenParam", self.token_param),
            ("tokenHeader", self.token_header),
            ("pool", self.pool),
            ("poolIdleSeconds", self.pool_idle_seconds),
            ("headless", self.headless),
            ("attachOnly", self.attach_only),
            ("userDataDir", self.user_data_dir),
            ("approval", self.approval),
            ("allowedOrigins", self.allowed_origins),
            ("blockedOrigins", self.blocked_origins),
        ):
            if value is not None:
                out[key] = value
        return out


@dataclass
class Config:
    enabled: bool = True
    control_port: int = 18791
    relay_port: int = 18792
    default_profile: str = "agent"
    headless: bool = False
    no_sandbox: bool = False
    attach_only: bool = False
    executable_path: str | None = None
    relay_client_mode: str = "single-active"
    start_default_profile: bool = False
    start_at_login: bool = False
    mcp_idle_minutes: int = 30
    agent_idle_minutes: int = 30
    mcp_run_code: bool = False
    screenshot_max_dimension: int = 1568
    action_wait_ms: int = 5000
    allow_file_urls: bool = False
    max_tabs: int = 40
    artifacts_max_mb: int = 500
    take_over_wait_seconds: int = 30
    artifacts_max_age_days: int = 7
    log_max_mb: int = 20
    allowed_origins: list[str] = field(default_factory=list)
    blocked_origins: list[str] = field(default_factory=list)
    redact_network_secrets: bool = True
    upload_roots: list[str] = field(default_factory=list)
    approval: str | None = None
    approval_timeout_seconds: int = 60
    approval_channel: str = "tray"
    approval_words: list[str] = field(default_factory=list)
    profiles: dict[str, ProfileConfig] = field(default_factory=dict)

    # --- derived views -------------------------------------------------
    def profile(self, name: str | None) -> ProfileConfig:
        key = name or self.default_profile
        try:
            return self.profiles[key]
        except KeyError:
            known = ", ".join(sorted(self.profiles)) or "none"
            if not PROFILE_NAME_RE.match(key):
                # Not a name any profile can have: say what is wrong with it.
                try:
                    validate_profile_name(key)
                except InvalidInput as exc:
                    raise InvalidInput(
                        f"{exc.message}; no profile can have that name (profiles: {known})",
                        hint=exc.what_next,
                        code="invalid_profile_name",
                    ) from None
            raise InvalidInput(
                f"profile {key!r} does not exist (profiles: {known})",
                hint=Hint(
                    "list profiles with {profiles}; create one with {create}",
                    profiles=PROFILES,
                    create=CREATE_PROFILE,
                ),
                code="unknown_profile",
            ) from None

    def relay_port_of(self, profile: ProfileConfig) -> int:
        return profile.cdp_port if profile.cdp_port is not None else self.relay_port

    def cdp_url_of(self, profile: ProfileConfig) -> str:
        """The CDP endpoint every driver ends in (what connect_over_cdp gets)."""
        port = self.port_of(profile)
        if port is None:
            assert profile.cdp_url is not None
            return profile.cdp_url.rstrip("/")
        return f"http://127.0.0.1:{port}"

    def port_of(self, profile: ProfileConfig) -> int | None:
        """The local port the profile's driver listens on (None: it uses a cdpUrl)."""
        kind = drivers.spec_of(profile.driver).port
        if kind == "relay":
            return self.relay_port_of(profile)
        return profile.cdp_port if kind == "cdp" else None

    def origin_rules(self, name: str | None) -> origins.OriginRules:
        """Where agents may go in profile ``name``: its own lists, else the global ones."""
        profile = self.profiles.get(name or self.default_profile)
        allowed, blocked = self.allowed_origins, self.blocked_origins
        if profile is not None:
            if profile.allowed_origins is not None:
                allowed = profile.allowed_origins
            if profile.blocked_origins is not None:
                blocked = profile.blocked_origins
        return origins.rules_of(tuple(allowed), tuple(blocked))

    def is_headless(self, profile: ProfileConfig) -> bool:
        return self.headless if profile.headless is None else profile.headless

    def may_launch(self, profile: ProfileConfig) -> bool:
        """A remote endpoint, or anything attach-only, is never launched locally."""
        if not drivers.spec_of(profile.driver).launches:
            return False
        attach_only = self.attach_only if profile.attach_only is None else profile.attach_only
        return not attach_only

    def user_data_dir_of(self, profile: ProfileConfig) -> Path:
        if profile.user_data_dir:
            return Path(profile.user_data_dir).expanduser()
        return paths.profile_user_data_dir(profile.name)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for setting in SETTINGS:
            out[setting.key] = getattr(self, _attr(setting.key))
        out["profiles"] = {name: p.to_json() for name, p in sorted(self.profiles.items())}
        return out


def _attr(key: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", key).lower()


def default_config() -> Config:
    return Config(
        profiles={
            "agent": ProfileConfig("agent", "managed", "#FF4500", cdp_port=18800),
            "chrome": ProfileConfig("chrome", "extension", "#00AA00"),
        }
    )


# --- validation ---------------------------------------------------------------


def validate_profile_name(name: object) -> str:
    if not isinstance(name, str) or not name:
        raise InvalidInput(
            "profile name is missing",
            hint="use lowercase letters, digits and '-', e.g. 'work' or 'my-project-1'",
            code="invalid_profile_name",
        )
    if not PROFILE_NAME_RE.match(name):
        # Every problem at once: fixing one only to be told of the next is tedious.
        whys = []
        if len(name) > 64:
            whys.append(f"it is {len(name)} characters long (at most 64)")
        if name[0] == "-":
            whys.append("it starts with '-' (start with a letter or digit)")
        if any("A" <= c <= "Z" for c in name):
            whys.append("it has uppercase letters (use lowercase)")
        bad = sorted({c for c in name if c not in _NAME_CHARS and not "A" <= c <= "Z"})
        if bad:
            said = ["a space" if c == " " else repr(c) for c in bad]  # ' ' reads as nothing
            listed = said[0] if len(said) == 1 else ", ".join(said[:-1]) + " and " + said[-1]
            whys.append(f"it contains {listed} (only a-z, 0-9 and '-' are allowed)")
        why = "; ".join(whys)
        raise InvalidInput(
            f"invalid profile name {name!r}: {why}",
            hint="use lowercase letters, digits and '-', starting with a letter or digit, "
            "at most 64 characters, e.g. 'work'",
            code="invalid_profile_name",
        )
    return name


def _nonblank(value: str) -> str:
    if not value.strip():
        raise ValueError("empty")
    return value


def _upper(value: str) -> str:
    # Not str.upper itself: pydantic reads a validator's signature, and a builtin's is
    # parsed from its text with tokenize's regexes (~3 ms of a service's start).
    return value.upper()


def _cdp_url_shape(value: str) -> str:
    from browserdeck.policy.urls import CDP_URL  # the one URL policy: what clients can connect to

    if not CDP_URL.fullmatch(value):
        raise ValueError("not a CDP URL")
    return value


def _split_paths(value: Any) -> Any:
    # A list on disk; one string with os.pathsep between paths from a text field.
    if value is None:
        return []
    if isinstance(value, str):
        return [v for v in value.split(os.pathsep) if v.strip()]
    return value


def _origin_rules(value: list[str]) -> list[str]:
    return origins.check_rules(value)


def split_rules(value: Any) -> Any:
    """Origin rules as a list: a list on disk; one line of text from a form (commas or
    spaces between rules); nothing is none."""
    if value is None:
        return []
    if isinstance(value, str):
        return [v for v in re.split(r"[\s,]+", value) if v]
    return value


def _path_item(value: str) -> str:
    if not value.strip() or "\0" in value:
        raise ValueError("not a path")
    return value.strip()


def _split_words(value: Any) -> Any:
    # A list on disk; one string with commas between words from a text field.
    if value is None:
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    return value


def _word_item(value: str) -> str:
    # Letters, digits, spaces, '-' and apostrophes: a word or phrase as a person writes it,
    # matched as whole words (it becomes part of a pattern, so no pattern syntax).
    word = " ".join(value.split())
    if not word or len(word) > 60 or not all(c.isalnum() or c in " -'’" for c in word):
        raise ValueError("not a word")
    return word


def _annotation(setting: Setting) -> Any:
    """The pydantic type of one declared setting (constraints from the declaration)."""
    # pydantic is imported when a value is first checked, not with this module: the lean
    # CLI imports config for paths and ports and must not pay for it.
    from pydantic import AfterValidator, BeforeValidator, StrictBool, StrictInt, StrictStr
    from pydantic import Field as PydanticField

    kind = setting.type
    t: Any
    if kind == "bool":
        t = StrictBool
    elif kind == "port":
        t = Annotated[StrictInt, PydanticField(ge=1024, le=65535)]
    elif kind == "int":
        t = Annotated[StrictInt, PydanticField(ge=setting.minimum, le=setting.maximum)]
    elif kind == "choice":
        t = Literal[setting.choices]
    elif kind == "color":
        t = Annotated[StrictStr, PydanticField(pattern=COLOR_RE.pattern), AfterValidator(_upper)]
    elif kind == "url":
        t = Annotated[StrictStr, AfterValidator(_cdp_url_shape)]
    elif kind == "paths":
        t = Annotated[
            list[Annotated[StrictStr, AfterValidator(_path_item)]], BeforeValidator(_split_paths)
        ]
    elif kind == "words":
        t = Annotated[
            list[Annotated[StrictStr, AfterValidator(_word_item)]], BeforeValidator(_split_words)
        ]
    elif kind == "origins":
        t = Annotated[
            list[StrictStr], BeforeValidator(split_rules), AfterValidator(_origin_rules)
        ]
    elif kind in ("path", "profile-ref", "string"):
        t = Annotated[StrictStr, AfterValidator(_nonblank)]
    else:
        raise AssertionError(f"unknown setting type {kind}")
    return t | None if setting.default is None and kind not in ("paths", "words") else t


_ADAPTERS: dict[tuple[Any, ...], TypeAdapter[Any]] = {}


def _adapter(setting: Setting) -> TypeAdapter[Any]:
    from pydantic import TypeAdapter

    # Built once per declaration (a TypeAdapter compiles a validator); Setting itself is
    # not hashable (a list default), so its type-relevant parts are the key.
    key = (
        setting.type, setting.choices, setting.minimum, setting.maximum, setting.default is None
    )
    adapter = _ADAPTERS.get(key)
    if adapter is None:
        adapter = _ADAPTERS[key] = TypeAdapter(_annotation(setting))
    return adapter


def _refusal(setting: Setting, value: Any, where: str) -> InvalidInput:
    """The plain-words error for a value the setting's type refused (what, and what to do)."""
    kind = setting.type
    if kind == "port":
        return InvalidInput(
            f"invalid {where} {value!r}: ports must be integers from 1024 to 65535",
            hint="pick a free port above 1024",
            code="invalid_port",
        )
    if kind == "color":
        return InvalidInput(
            f"invalid {where} {value!r}: expected #RRGGBB",
            hint="write a hex colour like '#FF4500'",
            code="invalid_color",
        )
    if kind == "url":
        if not isinstance(value, str):
            return InvalidInput(
                f"invalid {where} {value!r}: expected a URL",
                hint="e.g. http://127.0.0.1:9222 or ws://host:9222/devtools/browser/…",
                code="invalid_url",
            )
        return InvalidInput(
            f"invalid {where} {value!r}: expected http(s):// or ws(s):// with a host",
            hint="e.g. http://127.0.0.1:9222",
            code="invalid_url",
        )
    if kind == "bool":
        why = "expected true or false"
    elif kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            why = "expected an integer"
        else:
            lo = setting.minimum if setting.minimum is not None else value
            hi = setting.maximum if setting.maximum is not None else value
            return InvalidInput(
                f"invalid {where} {value}: expected a whole number from {lo} to {hi}",
                code="invalid_setting",
            )
    elif kind == "choice":
        why = f"expected one of {', '.join(setting.choices)}"
    elif kind == "paths":
        why = "expected a list of paths"
    elif kind == "words":
        why = (
            "expected words or phrases separated by commas (letters, digits, spaces, '-' "
            "and apostrophes; at most 60 characters each)"
        )
    elif kind == "origins":
        try:
            origins.check_rules(value)
            why = "expected a list of origins"
        except origins.RuleError as exc:
            why = str(exc)
    else:
        why = "expected a non-empty string"
    return InvalidInput(f"invalid {where} {value!r}: {why}", code="invalid_setting")


def check_setting(setting: Setting, value: Any, where: str | None = None) -> Any:
    """``value`` validated (and normalised) as ``setting`` declares it; raises InvalidInput.

    The one check of a setting's value: the config loader, profile creation (API, CLI)
    and the settings dialog all call it, so they cannot disagree. pydantic does the
    checking from the declaration; the error is written for a person (``_refusal``).
    """
    from pydantic import ValidationError

    try:
        return _adapter(setting).validate_python(value)
    except ValidationError:
        raise _refusal(setting, value, where or setting.key) from None


def setting_schema(setting: Setting) -> dict[str, Any]:
    """The JSON schema of one declared setting (for OpenAPI), from the same pydantic type
    ``check_setting`` validates with, plus its description and default."""
    out = dict(_adapter(setting).json_schema())
    out["description"] = setting.description
    if setting.default is not None:
        out["default"] = setting.default
    return out


def validate_port(value: object, where: str) -> int:
    port: int = check_setting(_PORT_SETTING, value, where)
    return port


def validate_color(value: object, where: str = "color") -> str:
    color: str = check_setting(PROFILE_KEYS["color"], value, where)
    return color


def validate_cdp_url(value: object, where: str = "cdpUrl") -> str:
    if value is None:  # cdpUrl is optional as a field, but here a URL is asked for
        raise _refusal(PROFILE_KEYS["cdpUrl"], value, where)
    url: str = check_setting(PROFILE_KEYS["cdpUrl"], value, where)
    return url


_QUERY_NAME_RE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
_HEADER_NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def parse_profile(name: str, raw: Any, where: str) -> ProfileConfig:
    validate_profile_name(name)
    if not isinstance(raw, dict):
        raise InvalidInput(f"{where} must be an object", code="invalid_setting")
    unknown = set(raw) - set(PROFILE_KEYS) - {"name"}
    if unknown:
        raise InvalidInput(
            f"{where} has unknown field(s) {', '.join(sorted(unknown))}",
            hint=f"known fields: {', '.join(PROFILE_KEYS)}",
            code="invalid_setting",
        )
    values: dict[str, Any] = {}
    for setting in PROFILE_FIELDS:
        if setting.key in raw:
            values[setting.key] = check_setting(setting, raw[setting.key], f"{where}.{setting.key}")
    profile = ProfileConfig(
        name=name,
        driver=values.get("driver", "managed"),
        color=values.get("color", "#FF4500"),
        cdp_port=values.get("cdpPort"),
        cdp_url=values.get("cdpUrl"),
        headless=values.get("headless"),
        attach_only=values.get("attachOnly"),
        user_data_dir=values.get("userDataDir"),
        token_param=values.get("tokenParam"),
        token_header=values.get("tokenHeader"),
        pool=values.get("pool"),
        pool_idle_seconds=values.get("poolIdleSeconds"),
        approval=values.get("approval"),
        allowed_origins=values.get("allowedOrigins"),
        blocked_origins=values.get("blockedOrigins"),
    )
    if not profile.is_service and any(
        v is not None for v in (profile.token_param, profile.token_header, profile.pool)
    ):
        raise InvalidInput(
            f"{where}: tokenParam, tokenHeader and pool are for remote profiles with a "
            "ws(s):// cdpUrl (a browser service)",
            hint="remove them, or set driver 'remote' and a ws:// or wss:// cdpUrl",
            code="invalid_setting",
        )
    for key, value, pattern in (
        ("tokenParam", profile.token_param, _QUERY_NAME_RE),
        ("tokenHeader", profile.token_header, _HEADER_NAME_RE),
    ):
        if value is not None and not pattern.match(value):
            raise InvalidInput(
                f"{where}.{key} {value!r} is not a valid name",
                hint="letters, digits, '-' and '_' (a query parameter may also have '.'), "
                "at most 64",
                code="invalid_setting",
            )
    spec = drivers.spec_of(profile.driver)
    url_drivers = " or ".join(n for n, s in drivers.SPECS.items() if s.needs_url)
    if spec.port == "cdp" and profile.cdp_port is None:
        raise InvalidInput(
            f"{where}: a {profile.driver} profile needs a cdpPort",
            hint=Hint(
                "create profiles with {create} so a port is allocated, or set cdpPort",
                create=CREATE_PROFILE,
            ),
            code="invalid_setting",
        )
    if spec.needs_url and not profile.cdp_url:
        raise InvalidInput(
            f"{where}: a {profile.driver} profile needs a cdpUrl",
            hint="set cdpUrl, e.g. http://10.0.0.42:9222",
            code="invalid_setting",
        )
    if not spec.needs_url and profile.cdp_url:
        raise InvalidInput(
            f"{where}: cdpUrl is only for {url_drivers} profiles",
            hint=f"set driver to {url_drivers!r} or remove cdpUrl",
            code="invalid_setting",
        )
    return profile


def from_json(raw: Any) -> Config:
    """Validate a whole config document; raises InvalidInput naming the bad field."""
    if not isinstance(raw, dict):
        raise InvalidInput("the config must be a JSON object", code="invalid_setting")
    known = set(SETTING_KEYS) | {"profiles"}
    unknown = set(raw) - known
    if unknown:
        raise InvalidInput(
            f"unknown setting(s) {', '.join(sorted(unknown))}",
            hint=f"known settings: {', '.join(sorted(known))}",
            code="invalid_setting",
        )
    config = Config(profiles={})
    for setting in SETTINGS:
        if setting.key in raw:
            setattr(config, _attr(setting.key), check_setting(setting, raw[setting.key], setting.key))
    profiles_raw = raw.get("profiles", None)
    if profiles_raw is None:
        config.profiles = default_config().profiles
    elif not isinstance(profiles_raw, dict):
        raise InvalidInput(
            "profiles must be an object keyed by profile name", code="invalid_setting"
        )
    else:
        for name, value in profiles_raw.items():
            config.profiles[name] = parse_profile(name, value, f"profiles.{name}")
    check_consistency(config)
    return config


def check_consistency(config: Config) -> None:
    """Cross-field rules: default profile exists, no two listeners share a port."""
    if config.profiles and config.default_profile not in config.profiles:
        raise InvalidInput(
            f"defaultProfile {config.default_profile!r} is not one of the profiles "
            f"({', '.join(sorted(config.profiles))})",
            hint="set defaultProfile to an existing profile",
            code="invalid_setting",
        )
    owners: dict[int, str] = {config.control_port: "controlPort"}
    for name, profile in sorted(config.profiles.items()):
        port = config.port_of(profile)
        if port is None:
            continue
        kind = drivers.spec_of(profile.driver).port
        label = f"profile {name!r} ({'relay' if kind == 'relay' else 'CDP'} port)"
        if port in owners:
            raise InvalidInput(
                f"port {port} is used twice: by {owners[port]} and by {label}",
                hint="give each profile its own port",
                code="port_collision",
            )
        owners[port] = label


def _listened_on(port: int) -> bool:
    """Something (maybe another user's Chrome) already accepts connections on the port."""
    from browserdeck.chrome.procs import port_in_use  # psutil: only when allocating

    return port_in_use(port)


def allocate_cdp_port(config: Config, reserved: Iterable[int] = ()) -> int:
    """The lowest free port of 18800-18899, taking every configured listener into account.

    A port something already listens on is skipped: it may be another user's Chrome,
    and a profile given that port would drive it (docs/security.md).
    """
    used = set(reserved) | {config.control_port, config.relay_port}
    for profile in config.profiles.values():
        if profile.cdp_port is not None:
            used.add(profile.cdp_port)
    for port in MANAGED_PORT_RANGE:
        if port not in used and not _listened_on(port):
            return port
    raise Conflict(
        "no free CDP port left in 18800-18899: all 100 are allocated to profiles",
        hint=Hint("delete a profile you no longer need ({delete})", delete=DELETE_PROFILE),
        code="ports_exhausted",
    )


def next_color(config: Config) -> str:
    used = {p.color.upper() for p in config.profiles.values()}
    for color in PROFILE_PALETTE:
        if color not in used:
            return color
    return PROFILE_PALETTE[len(config.profiles) % len(PROFILE_PALETTE)]


# --- load and save ------------------------------------------------------------


@dataclass
class LoadResult:
    config: Config
    path: Path
    # Set when the file on disk could not be used; says what happened and where it went.
    problem: str | None = None


def load(path: Path | None = None) -> LoadResult:
    """Read the config; create it with defaults when missing.

    A file that is not valid JSON, or has an invalid value, is moved aside to
    ``config.json.bad-<time>`` (never overwritten in place) and defaults are used
    for this run; ``problem`` says so, and the service reports it on ``GET /``.
    """
    path = path or paths.config_file()
    if not path.exists():
        config = default_config()
        save(config, path)
        return LoadResult(config, path)
    try:
        text = path.read_text(encoding="utf-8")
        raw = json.loads(text)
        config = from_json(raw)
        return LoadResult(config, path)
    except (json.JSONDecodeError, UnicodeDecodeError, InvalidInput) as exc:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        aside = path.with_name(f"{path.name}.bad-{stamp}")
        n = 1
        while aside.exists():
            aside = path.with_name(f"{path.name}.bad-{stamp}-{n}")
            n += 1
        os.replace(path, aside)
        reason = exc.message if isinstance(exc, InvalidInput) else f"not valid JSON ({exc})"
        problem = (
            f"config file {path} could not be used: {reason}. It was kept as {aside}; "
            "browserdeck is running with default settings. Fix that file and move it back, "
            "or re-apply your settings."
        )
        config = default_config()
        save(config, path)
        return LoadResult(config, path, problem)


def read(path: Path | None = None) -> Config:
    """The config as saved, for a program that only looks (CLI helpers, the tray's peek).

    Unlike ``load`` it never writes: a missing file gives the defaults, and a broken
    one raises ConfigError saying what is wrong, without moving it aside (that is the
    service's job, at its start, where the problem is reported).
    """
    path = path or paths.config_file()
    try:
        return from_json(json.loads(path.read_text(encoding="utf-8")))
    except FileNotFoundError:
        return default_config()
    except OSError as exc:
        raise ConfigError(
            f"cannot read {path}: {exc.strerror or exc}", hint="check the file's permissions"
        ) from None
    except (json.JSONDecodeError, UnicodeDecodeError, InvalidInput) as exc:
        reason = exc.message if isinstance(exc, InvalidInput) else f"not valid JSON ({exc})"
        raise ConfigError(
            f"config file {path} cannot be used: {reason}",
            hint="fix that file; or start browserdeck, which keeps it aside as "
            "config.json.bad-<time>, runs on defaults and says so",
        ) from None


# read_cached's last read of each config file: (its mtime, what it held).
_read_cache: dict[str, tuple[int, Config]] = {}


def read_cached(path: Path | None = None) -> Config:
    """The config as saved, for a caller that consults it on every call (MCP tools).

    Re-read only when the file changed (its mtime). Never raises: a missing or broken
    file gives the defaults, since reporting a broken file is the service's job
    (``load``), not every reader's.
    """
    path = path or paths.config_file()
    try:
        stamp = path.stat().st_mtime_ns
    except OSError:
        return default_config()
    cached = _read_cache.get(str(path))
    if cached is not None and cached[0] == stamp:
        return cached[1]
    try:
        loaded = read(path)
    except (BrowserdeckError, ValueError):
        loaded = default_config()
    _read_cache[str(path)] = (stamp, loaded)
    return loaded


def save(config: Config, path: Path | None = None) -> None:
    """Write atomically (``files.write_atomic``: unique temp, fsync, replace, fsync dir)."""
    path = path or paths.config_file()
    check_consistency(config)
    write_atomic(path, json.dumps(config.to_json(), indent=2, sort_keys=False) + "\n")


# A temp file younger than this may belong to a save in flight in another process.
TEMP_FILE_GRACE = 5.0


def remove_stale_temp_files(path: Path | None = None) -> list[Path]:
    """Delete the temp files that a save killed half-way left behind.

    Called at start-up and once more a few seconds later (8 were left
    in 20 SIGKILLs of ``serve``).
    Those are ``write_atomic``'s ``.config.json.<random>.tmp``, and the
    ``.config-<random>.tmp`` that versions before it wrote. Files younger than a few
    seconds are kept: another browserdeck process (the tray beside ``serve``) may be
    saving right now, and its ``os.replace`` must still find its file.
    """
    path = path or paths.config_file()
    cutoff = time.time() - TEMP_FILE_GRACE
    legacy = [
        tmp
        for tmp in path.parent.glob(".config-*.tmp")
        if tmp.is_file() and tmp.stat().st_mtime < cutoff
    ]
    removed: list[Path] = []
    for tmp in [*stale_temp_files(path, older_than=TEMP_FILE_GRACE), *legacy]:
        with contextlib.suppress(OSError):
            tmp.unlink()
            removed.append(tmp)
    return removed


def updated(config: Config, change: Callable[[Config], None]) -> Config:
    """Apply ``change`` to a copy, validate the result, and return it (the original is untouched)."""
    candidate = copy.deepcopy(config)
    change(candidate)
    check_consistency(candidate)
    return candidate


def settings_markdown() -> str:
    """docs/configuration.md, generated from the schema (a test keeps the file in step)."""

    def table(settings: tuple[Setting, ...], first: str) -> list[str]:
        rows = [f"| {first} | type | default | meaning |", "|---|---|---|---|"]
        for s in settings:
            kind = s.type + (f" ({' / '.join(s.choices)})" if s.choices else "")
            default = "—" if s.default is None else f"`{json.dumps(s.default)}`"
            rows.append(f"| `{s.key}` | {kind} | {default} | {s.description} |")
        return rows

    out = [
        "# Settings",
        "",
        "Generated from `app/browserdeck/config.py` (`SETTINGS`, `PROFILE_FIELDS`) by",
        "`python -m browserdeck.config > docs/configuration.md`; do not edit by hand.",
        "",
        f"File: `{'<config dir>'}/config.json` (`browserdeck paths` shows where). Written",
        "atomically; a file that fails to parse is kept as `config.json.bad-<time>` and reported.",
        "",
        *table(SETTINGS, "setting"),
    ]
    out += [
        "",
        "## Profiles",
        "",
        "`profiles` is an object keyed by profile name (lowercase letters, digits and `-`,",
        "starting with a letter or digit, at most 64 characters). Each profile:",
        "",
        *table(PROFILE_FIELDS, "field"),
    ]
    defaults = json.dumps(default_config().to_json()["profiles"], indent=2)
    out += [
        "",
        "Managed profiles get a CDP port from 18800–18899 once, at creation, and keep it.",
        "Ports must be 1024–65535 and no two listeners (control API, relays, managed",
        "profiles) may share one. Default profiles:",
        "",
        "```json",
        defaults,
        "```",
        "",
    ]
    return "\n".join(out)


__all__ = [
    "COLOR_RE",
    "DRIVERS",
    "PROFILE_FIELDS",
    "SETTINGS",
    "Config",
    "ConfigError",
    "Driver",
    "LoadResult",
    "ProfileConfig",
    "Setting",
    "allocate_cdp_port",
    "default_config",
    "from_json",
    "is_loopback_url",
    "load",
    "next_color",
    "parse_profile",
    "read",
    "read_cached",
    "save",
    "updated",
    "validate_color",
    "validate_port",
    "validate_profile_name",
]


if __name__ == "__main__":
    print(settings_markdown(), end="")
