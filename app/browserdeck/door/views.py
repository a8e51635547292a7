"""What the front door tells a view (the tray, the panel) without a call: plain data."""

from __future__ import annotations

from dataclasses import dataclass

from browserdeck.results import ShotLabel


@dataclass(frozen=True)
class Screenshot:
    """A PNG of a tab's viewport, the image agents get, with the labels drawn into it."""

    png: bytes
    target_id: str
    url: str
    width: int  # CSS pixels the image covers (the labels' boxes are in these)
    labels: list[ShotLabel]  # each with its role and name
    unplaced: list[str]  # refs in view whose badge found no room on the image


@dataclass(frozen=True)
class ProfileEntry:
    """A configured profile as a view lists it (from the settings; no browser asked)."""

    name: str
    driver: str
    color: str


@dataclass(frozen=True)
class Overview:
    """The service as a view shows it without asking any browser: whether it runs, where
    its API listens, the profiles it is configured with and a problem with its config."""

    started: bool
    api_url: str  # the control API (MCP is at api_url + "/mcp")
    control_port: int
    default_profile: str
    profiles: dict[str, ProfileEntry]  # by name, in name order
    config_problem: str | None  # the config file was kept aside: why (the service runs on defaults)


@dataclass(frozen=True)
class Pairing:
    """What the extension's pairing page needs: the relay of the first profile that uses
    one (or the default relay port), its token, and a colour for the page."""

    relay_port: int
    token: str
    color: str
    profile: str | None  # the profile paired; None when no profile uses the relay yet
