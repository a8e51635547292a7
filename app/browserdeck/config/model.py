"""The settings of the whole app: ``Config``, each field declared once, and its rules.

A field's default is its declaration (``schema.declare``): key, type, default, bounds,
what it restarts, the dialog's words and the reference's description. ``SETTINGS`` is
read off the class, so adding a setting is adding one field here (or to
``ProfileConfig``), then regenerating docs/configuration.md (docs/architecture.md,
"How to add a setting").
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from browserdeck import driverspecs as drivers
from browserdeck.config.check import check_setting
from browserdeck.config.profile import (
    APPROVAL_MODES,
    APPROVAL_WORDS,
    PROFILE_NAME_RE,
    ProfileConfig,
    parse_profile,
    validate_profile_name,
)
from browserdeck.config.schema import declare, declared
from browserdeck.errors import (
    CREATE_PROFILE,
    DELETE_PROFILE,
    PROFILES,
    Conflict,
    Hint,
    InvalidInput,
)
from browserdeck.policy import origins
from browserdeck.util import paths

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


@dataclass
class Config:
    enabled: bool = declare(
        "bool",
        True,
        "Browser control on/off. When off nothing is launched and every browser "
        "route answers 'browser control is disabled in settings'.",
        label="Browser control",
        checkbox="Let agents use browsers",
        help="When this is off, agents cannot open or drive any browser; browserdeck "
        "keeps running and tells them browser control is switched off.",
    )
    control_port: int = declare(
        "port",
        18791,
        "Port of the local control API (HTTP, MCP at /mcp), always on 127.0.0.1.",
        label="Control API port",
        help="Agents, the command line and MCP clients connect to browserdeck on "
        "this port. Only programs on this computer can reach it.",
        group="ports",
    )
    relay_port: int = declare(
        "port",
        18792,
        "Port of the extension relay for extension profiles without their own port.",
        label="Extension relay port",
        help="The browserdeck extension in your Chrome connects on this port (unless "
        "a Chrome profile below sets its own).",
        group="ports",
        restarts="relay",
    )
    default_profile: str = declare(
        "profile-ref",
        "agent",
        "Profile used when a request names none (?profile=).",
        label="Default profile",
        help="The browser agents get when they do not ask for a particular one.",
    )
    headless: bool = declare(
        "bool",
        False,
        "Run managed browsers headless. On Linux with no display they always are.",
        label="Run browsers headless",
        checkbox="No visible windows",
        help="Agents still get screenshots. On Linux without a desktop, browsers always "
        "run this way.",
        restarts="launched",
    )
    executable_path: str | None = declare(
        "path",
        None,
        "Chrome/Chromium binary to launch instead of the auto-detected one (a headless "
        "profile runs Debian's `chromium-headless-shell` where the search picks Debian's "
        "`chromium` and the shell is installed beside it, the same version; set this to "
        "run another binary).",
        label="Browser executable",
        help="The Chrome or Chromium program to start. Leave empty to use the one "
        "browserdeck finds.",
        group="browsers",
        restarts="launched",
    )
    no_sandbox: bool = declare(
        "bool",
        False,
        "Launch managed browsers with --no-sandbox (needed when running as root).",
        label="No sandbox",
        checkbox="Run browsers without the sandbox",
        help="Only for machines where Chromium's sandbox cannot start, such as "
        "containers or running as root; it makes the browser less safe.",
        group="browsers",
        restarts="launched",
    )
    attach_only: bool = declare(
        "bool",
        False,
        "Never launch a browser; only attach to one already listening on the "
        "profile's CDP port or URL.",
        label="Attach only",
        checkbox="Never launch a browser",
        help="browserdeck then only connects to a browser you started yourself with "
        "remote debugging on.",
        group="advanced",
    )
    relay_client_mode: str = declare(
        "choice",
        "single-active",
        "Extension relay arbitration: one CDP client at a time (second gets 409) or many at once.",
        label="Relay clients",
        help="Whether several agents may use your Chrome at the same time, or "
        "one at a time (the next one waits until the first is done).",
        choices=("single-active", "multi-client"),
        choice_labels={
            "single-active": "One agent at a time",
            "multi-client": "Several agents at once",
        },
        group="advanced",
        restarts="relay",
    )
    start_default_profile: bool = declare(
        "bool",
        False,
        "Start the default profile's browser when browserdeck starts.",
        label="Start the default profile at launch",
        checkbox="Start it when browserdeck starts",
        help="Its browser is ready before the first agent asks for it.",
    )
    start_at_login: bool = declare(
        "bool",
        False,
        "Start browserdeck when you log in.",
        label="Start browserdeck at login",
        checkbox="Start when I log in",
        help="It waits in the tray, so agents can connect as soon as you are logged in.",
    )
    mcp_idle_minutes: int = declare(
        "int",
        30,
        "A service that `browserdeck mcp` started stops (closing its browsers cleanly) "
        "after this many minutes with no MCP client alive and no API call (0 = never).",
        label="Close idle MCP browser after (minutes)",
        help="A browser started for an MCP client closes after this long without use (0: never).",
        minimum=0,
        maximum=24 * 60,
        group="advanced",
    )
    agent_idle_minutes: int = declare(
        "int",
        30,
        "A named API or CLI client (X-Browserdeck-Session, BROWSERDECK_CLIENT) that makes "
        "no call for this many minutes is ended like an MCP session that closes: the tabs "
        "it opened close (unless kept), tabs it used are given back, and its next call is "
        "told why (0 = never).",
        label="End idle agent clients after (minutes)",
        help="A script or command line agent that names itself and goes quiet this "
        "long is ended: the tabs it opened close unless you marked them Keep (0: never).",
        minimum=0,
        maximum=7 * 24 * 60,
        group="advanced",
    )
    mcp_run_code: bool = declare(
        "bool",
        False,
        "Expose browser_run_code/browser_reset over MCP (runs Python Playwright code "
        "you send; off by default).",
        label="Allow MCP to run Python code",
        checkbox="Let MCP clients run Python code",
        help="The code they send runs with full control of the browser. Only turn "
        "this on for agents you trust.",
        group="advanced",
    )
    screenshot_max_dimension: int = declare(
        "int",
        1568,
        "Largest width/height of screenshots handed to LLMs over MCP (downscaled).",
        label="Largest MCP screenshot side (px)",
        help="Screenshots sent to AI models are scaled down to at most "
        "this many pixels wide or high.",
        minimum=256,
        maximum=8192,
        group="advanced",
    )
    action_wait_ms: int = declare(
        "int",
        5000,
        "Longest an action (click, type, press, select, drag, upload) waits for what it "
        "caused: a navigation it started, the requests it started. 0: do not wait.",
        label="Longest wait for an action's effects (ms)",
        help="After a click or a key press, agents wait at most this long for what it "
        "set off (a page loading, data arriving) before they look again (0: no wait).",
        minimum=0,
        maximum=60000,
        group="advanced",
    )
    allow_file_urls: bool = declare(
        "bool",
        False,
        "Let agents open file:// URLs (they could then read any file this user can). "
        "Off by default, as in Playwright MCP.",
        label="Files on this computer",
        checkbox="Let agents open files on this computer",
        help="With file:// links an agent could read any file you can read. Off "
        "unless you need it.",
        group="advanced",
    )
    max_tabs: int = declare(
        "int",
        40,
        "Most tabs an agent may open in one profile (each costs ~25 MB); opening one more "
        "is refused until one is closed.",
        label="Most tabs per agent and profile",
        help="Each open tab takes about 25 MB; past this many, an agent must close one "
        "before it opens another.",
        minimum=1,
        maximum=500,
        group="advanced",
    )
    artifacts_max_mb: int = declare(
        "int",
        500,
        "Most disk space (MB) each folder of saved files may use: screenshots, PDFs, "
        "downloads, MCP output, session recordings. The oldest files are removed first.",
        label="Space for saved files (MB)",
        help="Screenshots, PDFs and downloads agents saved; the oldest go first when "
        "there is more than this.",
        minimum=10,
        maximum=1_000_000,
        group="advanced",
    )
    take_over_wait_seconds: int = declare(
        "int",
        30,
        "While you have taken over a profile's browser (the panel's Take over), an agent's "
        "call on it waits this long for you to hand it back, then is refused (0: refused "
        "at once).",
        label="Agents wait while you have taken over (s)",
        help="Agents wait this long while you have taken a browser over, then retry.",
        minimum=0,
        maximum=600,
        group="advanced",
    )
    artifacts_max_age_days: int = declare(
        "int",
        7,
        "Saved screenshots, PDFs, downloads and MCP output older than this many days are removed.",
        label="Keep saved files for (days)",
        help="Saved screenshots, PDFs and downloads older than this are removed.",
        minimum=1,
        maximum=3650,
        group="advanced",
    )
    log_max_mb: int = declare(
        "int",
        20,
        "Most disk space (MB) the log files may use (rotated in four files).",
        label="Space for log files (MB)",
        help="browserdeck's own log files never take more than this.",
        minimum=1,
        maximum=10_000,
        group="advanced",
    )
    approval: str | None = declare(
        "choice",
        None,
        "Ask you before an agent acts: off; risky (paying, deleting, sending, uploading, "
        "submitting a password, card or one-time code: docs/approval.md); all (every action "
        "that changes a page). A profile's own value wins; unset here and there: the "
        "driver's default (risky for extension profiles, your own Chrome; off for the others).",
        label="Ask before agents act",
        help="browserdeck asks you in a small window before an agent pays, deletes, sends, "
        "uploads or submits a password, card or one-time code. A profile's own choice wins "
        "over this one.",
        choices=APPROVAL_MODES,
        choice_labels=APPROVAL_WORDS,
        placeholder="As the driver says (risky for your own Chrome, never for the others)",
    )
    approval_timeout_seconds: int = declare(
        "int",
        60,
        "How long an action waits for your answer; no answer in time is a denial.",
        label="Wait for your answer (seconds)",
        help="With no answer in this time the action is refused.",
        minimum=5,
        maximum=300,
    )
    approval_channel: str = declare(
        "choice",
        "tray",
        "Where you are asked first: tray (the tray app's window; else the agent's MCP client, "
        "when it can ask you) or mcp-client (the MCP client first, when it can; else the tray).",
        label="Ask me first in",
        help="Where you are asked when both can: the tray app's window, or the chat app the "
        "agent runs in (if it can show a question).",
        choices=("tray", "mcp-client"),
        choice_labels={"tray": "The tray app", "mcp-client": "The agent's chat app (MCP)"},
        group="advanced",
    )
    approval_words: list[str] = declare(
        "words",
        [],
        "More words or phrases that make a click risky, besides the built-in English ones "
        "(buy, pay, order, delete, send …; docs/approval.md). Several: separate with commas.",
        label="More risky words",
        help="Besides buy, pay, order, checkout, subscribe, donate, transfer, delete, remove, "
        "close account, send, post, publish, share, invite and confirm. Separate them with "
        "commas; any language.",
        group="advanced",
    )
    allowed_origins: list[str] = declare(
        "origins",
        [],
        "Sites agents may reach: origins or globs (https://example.com, *.example.com, "
        "http://localhost:*). Empty: any site not blocked. Enforced for navigations, "
        "popups, subresources, WebSocket and EventSource; not a security boundary (a "
        "page's service worker and DNS tricks are not stopped: docs/security.md). A "
        "profile may override it.",
        label="Allowed sites",
        help="Only these sites, e.g. https://example.com, *.example.com, "
        "http://localhost:* (commas or spaces between them). Empty: every site not blocked "
        "below. A convenience that keeps agents on track, not a security boundary.",
    )
    blocked_origins: list[str] = declare(
        "origins",
        [],
        "Sites agents may never reach, in the same form as allowedOrigins; a block wins "
        "over an allow. A profile may override it.",
        label="Blocked sites",
        help="Agents are refused these sites, in the same form; a block wins over "
        "an allowed site. Each refusal names the rule.",
    )
    redact_network_secrets: bool = declare(
        "bool",
        True,
        "Replace the values of Authorization, Proxy-Authorization, Cookie, Set-Cookie and "
        "X-Api-Key headers (and stored secrets) with [redacted] in HAR recordings and in the "
        "request details agents read. Turn off only to debug a login.",
        label="Credentials in recordings",
        checkbox="Hide passwords, cookies and tokens in HAR files",
        help="Authorization headers, cookies and stored secrets show as "
        "[redacted] in the network recordings agents make. Turn off only to debug a login.",
        group="advanced",
    )
    upload_roots: list[str] = declare(
        "paths",
        [],
        "Folders agents may upload files from, besides the MCP client's own roots (or its "
        "working directory). Your home folder itself, dot-folders and browserdeck's own "
        "folders are never allowed. Several: separate with " + repr(os.pathsep) + ".",
        label="Folders agents may upload from",
        help="Besides the folders an agent's app shares, agents may upload files from "
        "these. Your home folder itself and hidden folders are never allowed. Several: "
        "separate them with ':'.",
        group="advanced",
    )
    # Not a setting: the profiles, each a ProfileConfig (profile.py).
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
            out[setting.key] = getattr(self, setting.attr)
        out["profiles"] = {name: p.to_json() for name, p in sorted(self.profiles.items())}
        return out


SETTINGS = declared(Config, "global")
SETTING_KEYS = {s.key: s for s in SETTINGS}


def default_config() -> Config:
    return Config(
        profiles={
            "agent": ProfileConfig("agent", "managed", "#FF4500", cdp_port=18800),
            "chrome": ProfileConfig("chrome", "extension", "#00AA00"),
        }
    )


def validate_port(value: object, where: str) -> int:
    port: int = check_setting(SETTING_KEYS["controlPort"], value, where)
    return port


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
            setattr(config, setting.attr, check_setting(setting, raw[setting.key], setting.key))
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
