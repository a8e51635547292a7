"""A new profile from the settings a caller gave: each checked as its driver's spec and
its declaration say, before anything is saved (``Service.create_profile`` saves it)."""

from __future__ import annotations

from typing import Any

from browserdeck import config, drivers
from browserdeck.config import Config, ProfileConfig
from browserdeck.drivers import leases as remote
from browserdeck.driverspecs import DRIVER_FIELDS
from browserdeck.errors import Conflict, InvalidInput


def _url_drivers() -> str:
    return ", ".join(n for n, s in drivers.SPECS.items() if s.needs_url)


def new_profile(
    current: Config, name: object, token: str | None, settings: dict[str, Any]
) -> tuple[ProfileConfig, str | None]:
    """Profile ``name`` with ``settings`` (profile settings by their config key, those
    ``config.CREATE_FIELDS`` declares), and the browser service's ``token`` to keep in the
    secret store (one found in a cdpUrl moves there)."""
    name = config.validate_profile_name(name)
    if name in current.profiles:
        raise Conflict(
            f"profile {name!r} already exists",
            hint="pick another name, or delete it first",
            code="profile_exists",
        )
    creatable = [s.key for s in config.CREATE_FIELDS]
    unknown = sorted(set(settings) - set(creatable))
    if unknown:
        raise InvalidInput(
            f"unknown profile setting(s) for a new profile: {', '.join(unknown)}",
            hint=f"a new profile takes name, token and {', '.join(creatable)}",
            code="invalid_setting",
        )
    given = {k: v for k, v in settings.items() if v is not None}
    cdp_url = given.pop("cdpUrl", None)
    kind = given.pop("driver", None) or ("remote" if cdp_url else "managed")
    if kind not in drivers.SPECS:
        raise InvalidInput(
            f"invalid driver {kind!r}: expected {', '.join(drivers.SPECS)}",
            code="invalid_setting",
        )
    spec = drivers.spec_of(kind)
    for key in given:
        if key in DRIVER_FIELDS and key not in spec.fields:
            users = [n for n, d in drivers.SPECS.items() if key in d.fields]
            raise InvalidInput(
                f"{key} is not a setting of {kind} profiles",
                hint=f"it is for {' and '.join(users)} profiles; omit it",
                code="invalid_setting",
            )
    color = given.pop("color", None)
    raw: dict[str, Any] = {
        **given,
        "driver": kind,
        "color": config.validate_color(color) if color else config.next_color(current),
    }
    if spec.needs_url:
        if not cdp_url:
            raise InvalidInput(
                f"a {kind} profile needs cdpUrl", hint="e.g. http://10.0.0.42:9222"
            )
        raw["cdpUrl"] = config.validate_cdp_url(cdp_url)
        # A service token in the URL goes to the secret store, not into config.json.
        clean, in_url, param = remote.split_token(raw["cdpUrl"])
        if in_url is not None:
            if token is not None and token != in_url:
                raise InvalidInput(
                    "two different tokens: one in cdpUrl and one in token",
                    hint="pass the token once",
                )
            raw["cdpUrl"], token = clean, in_url
            if param != "token" and not raw.get("tokenHeader"):
                raw.setdefault("tokenParam", param)
        if token is not None and not remote.split_token(raw["cdpUrl"])[0].lower().startswith(
            ("ws://", "wss://")
        ):
            raise InvalidInput(
                "a token is for a browser service's ws:// or wss:// endpoint",
                hint="use the service's WebSocket URL as cdpUrl (see docs/remote.md)",
            )
    elif cdp_url:
        raise InvalidInput(
            f"cdpUrl is only for {_url_drivers()} profiles, not {kind}",
            hint="omit cdpUrl, or use driver 'remote'",
        )
    else:
        raw["cdpPort"] = config.allocate_cdp_port(current)
    profile = config.parse_profile(name, raw, f"profile {name!r}")
    return profile, token
