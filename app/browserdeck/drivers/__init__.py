"""Profile drivers: how a profile reaches its browser, one module per driver.

``base.ProfileDriver`` is the interface; ``managed``, ``extension``, ``remote`` and
``browser_service`` (a remote profile on a ws:// service endpoint) implement it; what a
driver may ask of its profile and the service is ``host``. What the rest of
browserdeck knows about a driver without loading it (its port, whether it needs a
cdpUrl or launches a browser, its profile fields, its words) is its ``DriverSpec`` in
``driverspecs.py``, where each driver is registered.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from browserdeck.driverspecs import SPECS, DriverSpec, spec_of

if TYPE_CHECKING:
    from browserdeck.config import ProfileConfig
    from browserdeck.drivers.base import ProfileDriver

__all__ = ["SPECS", "DriverSpec", "driver_class", "driver_for", "spec_of"]


def driver_class(name: str) -> type[ProfileDriver]:
    """The runtime class of driver ``name`` (``<spec.module>.Driver``), imported on first use."""
    cls: type[ProfileDriver] = importlib.import_module(SPECS[name].module).Driver
    return cls


def driver_for(profile: ProfileConfig) -> type[ProfileDriver]:
    """The class that drives ``profile``: its driver's, or the variant its settings call for."""
    return driver_class(profile.driver).variant_for(profile)
