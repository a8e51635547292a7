"""A profile's settings: ``ProfileConfig``, each field declared once, and its checks.

A field's default is its declaration (``schema.declare``); ``PROFILE_FIELDS`` is read
off the class. A profile stores only what is set: a field that is None takes the global
setting of the same name, or its declared default.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from browserdeck import driverspecs as drivers
from browserdeck.config.check import _refusal, check_setting
from browserdeck.config.schema import declare, declared
from browserdeck.errors import CREATE_PROFILE, Hint, InvalidInput

# A profile's driver: one of the names registered in drivers/ (drivers.SPECS).
Driver = str
DRIVERS: tuple[Driver, ...] = tuple(drivers.SPECS)

PROFILE_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")
# The approval setting's values (global and per profile), in a person's words.
APPROVAL_MODES = ("off", "risky", "all")
APPROVAL_WORDS = {
    "off": "Never",
    "risky": "Before risky actions (pay, delete, send, upload …)",
    "all": "Before every action that changes a page",
}


@dataclass
class ProfileConfig:
    name: str
    driver: Driver = declare(
        "choice",
        "managed",
        "managed: an isolated browser browserdeck launches; extension: your own "
        "Chrome through the browserdeck extension; remote: any CDP URL.",
        label="Driver",
        # No help line: the choices explain themselves (each driver's label).
        choices=DRIVERS,
        choice_labels={name: spec.label for name, spec in drivers.SPECS.items()},
        at_create=True,
    )
    color: str = declare(
        "color",
        "#FF4500",
        "Tint of the browser window and the tray icon.",
        label="Colour",
        help="Tints this profile's browser window and its icon, so you can tell them apart.",
        at_create=True,
        # browserdeck's tray and panel use it at once; the window's tint follows at the
        # browser's next start (a preference written before launch): no tab is lost.
        restarts="",
    )
    cdp_port: int | None = declare(
        "port",
        None,
        "managed: the port of browserdeck's CDP endpoint for this profile's browser "
        "(127.0.0.1, API token required; the browser itself listens on no port; "
        "`browserdeck cdp-url` prints how to connect; allocated from 18800-18899 once); "
        "with attachOnly, the port of the browser you started yourself; extension: the "
        "relay port (defaults to relayPort).",
        label="CDP port",
        help="The port browserdeck uses to control this browser (for Chrome profiles: "
        "the port the extension connects to).",
        placeholder="Use the relay port",
        per_driver=True,
    )
    cdp_url: str | None = declare(
        "url",
        None,
        "remote: the CDP endpoint. http(s)://host:9222 for a browser started with "
        "--remote-debugging-port; ws(s)://… for a browser service (Browserless, Browserbase, "
        "Steel, Selenium Grid se:cdp), reached over that WebSocket alone (see docs/remote.md). "
        "A token in its query is moved to the secret store when the profile is created.",
        label="CDP URL",
        help="The address of a browser on another machine or container, with remote debugging on.",
        placeholder="http://127.0.0.1:9222",
        at_create=True,
        per_driver=True,
    )
    token_param: str | None = declare(
        "string",
        None,
        "remote ws(s): the query parameter that carries the service token kept in the secret "
        "store (e.g. token, apiKey); default: token, unless tokenHeader is set.",
        label="Token in the URL as",
        help="The name of the URL parameter the browser service expects its token in "
        "(e.g. token or apiKey).",
        at_create=True,
        per_driver=True,
    )
    token_header: str | None = declare(
        "string",
        None,
        "remote ws(s): send the stored token in this header instead (Authorization is sent "
        "as 'Bearer TOKEN', any other header as the bare token).",
        label="Token in the header",
        help="Or send the token in this HTTP header instead (e.g. Authorization).",
        at_create=True,
        per_driver=True,
    )
    pool: bool | None = declare(
        "bool",
        None,
        "remote ws(s): one browser from the service per agent session (MCP session, "
        "BROWSERDECK_CLIENT, X-Browserdeck-Session), released when the session ends or idles; "
        "off: one browser shared by every caller of the profile.",
        label="One browser per agent",
        help="Each agent gets a browser of its own from the service, given back when it is done.",
        at_create=True,
        per_driver=True,
    )
    pool_idle_seconds: int | None = declare(
        "int",
        300,
        "remote pool: release a session's browser after this long without a call.",
        label="Give an idle agent's browser back after (s)",
        help="An agent's browser goes back to the service after this long unused.",
        minimum=10,
        maximum=86400,
        at_create=True,
        per_driver=True,
        restarts="",  # the pool reads it at each idle check
        unset=True,
    )
    headless: bool | None = declare(
        "bool",
        None,
        "Override the global headless setting for this profile.",
        label="Run browsers headless",
        help="Agents still get screenshots. On Linux without a desktop, browsers always "
        "run this way.",
        at_create=True,
        per_driver=True,
    )
    attach_only: bool | None = declare(
        "bool",
        None,
        "Never launch; only attach (forced for remote).",
        label="Attach only",
        help="browserdeck then only connects to a browser you started yourself with "
        "remote debugging on.",
        per_driver=True,
    )
    approval: str | None = declare(
        "choice",
        None,
        "Ask you before this profile's agents act (off, risky, all); default: the global "
        "approval setting, else the driver's default.",
        label="Ask before agents act",
        help="browserdeck asks you in a small window before an agent acts in this browser "
        "as you choose here; unset, the global choice or the driver's holds.",
        choices=APPROVAL_MODES,
        choice_labels=APPROVAL_WORDS,
        at_create=True,
        restarts="",  # the front door reads it at each action
    )
    allowed_origins: list[str] | None = declare(
        "origins",
        None,
        "This profile's own allowedOrigins (replaces the global list; an empty list "
        "allows every site not blocked).",
        label="Allowed sites",
        help="Only these sites, in this browser (commas or spaces between them); left "
        "empty, the list on the General page holds.",
        placeholder="Use the global list (General)",
        restarts="",  # the engine applies the rules to the open tabs at once
    )
    blocked_origins: list[str] | None = declare(
        "origins",
        None,
        "This profile's own blockedOrigins (replaces the global list).",
        label="Blocked sites",
        help="Agents are refused these sites in this browser; left empty, the list on "
        "the General page holds.",
        placeholder="Use the global list (General)",
        restarts="",  # as allowedOrigins
    )
    user_data_dir: str | None = declare(
        "path",
        None,
        "managed: use this user-data dir instead of <data dir>/browser/<name>/user-data.",
        label="User data directory",
        help="Where this browser keeps its cookies, logins and history. Leave empty "
        "for browserdeck's own folder.",
        placeholder="Not set (browserdeck's own directory)",
        per_driver=True,
    )

    @property
    def is_service(self) -> bool:
        """A remote profile on a ws(s):// endpoint: a browser service, driven over that socket."""
        spec = drivers.SPECS.get(self.driver)
        url = str(self.cdp_url or "").lower()
        return spec is not None and spec.services and url.startswith(("ws://", "wss://"))

    def to_json(self) -> dict[str, Any]:
        """The fields that are set, by key (driver and colour always are)."""
        out: dict[str, Any] = {}
        for setting in PROFILE_FIELDS:
            value = getattr(self, setting.attr)
            if value is not None:
                out[setting.key] = value
        return out


PROFILE_FIELDS = declared(ProfileConfig, "profile")
PROFILE_KEYS = {s.key: s for s in PROFILE_FIELDS}
# What a new profile may be given (POST /profiles/create, `browserdeck create-profile`);
# cdpPort is allocated, and attachOnly and userDataDir are set in the settings by the user.
CREATE_FIELDS = tuple(s for s in PROFILE_FIELDS if s.at_create)


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
        name=name, **{s.attr: values[s.key] for s in PROFILE_FIELDS if s.key in values}
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
