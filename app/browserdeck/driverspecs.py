"""The profile drivers' static facts, registered once (the core's view of drivers).

A driver is two things:

* a ``DriverSpec`` registered here: the static facts that the config, the settings
  dialog, the tray, the state words and the CLI need without starting anything (which
  port it listens on, whether it needs a ``cdpUrl``, whether browserdeck may launch a
  browser for it, whether it waits for the extension, which profile fields apply, its
  Start/Stop words). They ask these facts, never the driver's name. This module is
  core (layer 0): no driver code loads.
* a ``ProfileDriver`` class in its own module (``drivers/managed.py``,
  ``drivers/extension.py``, ``drivers/remote.py``, service layer): start, stop,
  status, tabs and the CDP endpoint of one profile, behind the interface in
  ``drivers/base.py``. The service loads it on first use (``drivers.driver_class``).

Adding a driver: write ``drivers/<name>.py`` with a ``ProfileDriver`` subclass named
``Driver``, and add one ``register(DriverSpec(...))`` below
(docs/architecture.md, "How to add a driver").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# Profile fields that only some drivers use; the settings dialog shows a driver's own.
DRIVER_FIELDS = (
    "cdpPort",
    "cdpUrl",
    "headless",
    "attachOnly",
    "userDataDir",
    "tokenParam",
    "tokenHeader",
    "pool",
    "poolIdleSeconds",
)


@dataclass(frozen=True)
class DriverSpec:
    """What the rest of browserdeck may know about a driver without loading it."""

    name: str
    label: str  # for people: the settings dialog's choice and the profile list's tooltip
    summary: str  # for people: what the profile's browser is, in the tray's profile menu
    # The local port its browser endpoint is on: its own CDP port ("cdp", cdpPort is
    # required), the extension relay's ("relay", cdpPort optional, else relayPort), or
    # none (the endpoint is the profile's cdpUrl, which it then requires).
    port: Literal["cdp", "relay"] | None
    launches: bool  # browserdeck may launch a browser for it (attachOnly applies)
    fields: frozenset[str]  # which of DRIVER_FIELDS apply to it
    module: str  # where its ``Driver`` class lives
    verbs: tuple[str, str]  # the Start and Stop buttons' words
    # The user's own browser (their logins): loading an auth state into it asks them first.
    users_own: bool = False
    # Whether agents' actions are asked when neither the profile nor the global
    # ``approval`` setting says (docs/approval.md): "risky" where the browser holds the
    # user's own logins.
    approval: Literal["off", "risky", "all"] = "off"
    # Its browser is the user's own Chrome, reached once the browserdeck extension
    # connects: "waiting for Chrome" until then, pairing and relay-url apply to it.
    via_extension: bool = False
    # A ws:// or wss:// cdpUrl is a browser service (a browser per connection, leases:
    # drivers/browser_service.py); tokenParam, tokenHeader and pool apply then.
    services: bool = False

    @property
    def needs_url(self) -> bool:
        return self.port is None


SPECS: dict[str, DriverSpec] = {}
DEFAULT = "managed"  # a profile that names no driver (and no cdpUrl)


def register(spec: DriverSpec) -> DriverSpec:
    assert set(spec.fields) <= set(DRIVER_FIELDS), spec.fields
    SPECS[spec.name] = spec
    return spec


def spec_of(name: str) -> DriverSpec:
    """The spec of driver ``name`` (validated config only names registered drivers)."""
    return SPECS[name]


def spec_or_default(name: str | None) -> DriverSpec:
    """The spec of driver ``name``, or the default driver's for a name not known (a
    front-end reading a status from a newer or older service)."""
    return SPECS.get(name or "") or SPECS[DEFAULT]


register(
    DriverSpec(
        "managed",
        "Managed: browserdeck launches it",
        "browserdeck's own browser",
        port="cdp",
        launches=True,
        fields=frozenset({"cdpPort", "headless", "attachOnly", "userDataDir"}),
        module="browserdeck.drivers.managed",
        verbs=("Start browser", "Stop browser"),
    )
)
register(
    DriverSpec(
        "extension",
        "Extension: your own Chrome",
        "your Chrome, through the extension",
        port="relay",
        launches=False,
        fields=frozenset({"cdpPort"}),
        module="browserdeck.drivers.extension",
        users_own=True,
        approval="risky",  # the user's own Chrome, with their logins and cards
        verbs=("Start relay", "Stop relay"),
        via_extension=True,
    )
)
register(
    DriverSpec(
        "remote",
        "Remote: a CDP URL",
        "a remote browser",
        port=None,
        launches=False,
        fields=frozenset({"cdpUrl", "tokenParam", "tokenHeader", "pool", "poolIdleSeconds"}),
        module="browserdeck.drivers.remote",
        verbs=("Connect", "Disconnect"),
        services=True,
    )
)
