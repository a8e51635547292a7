"""Profile drivers: how a profile reaches its browser, one module per driver.

``base.ProfileDriver`` is the interface; ``managed``, ``extension`` and ``remote``
implement it. What the rest of browserdeck knows about a driver without loading it
(its port, whether it needs a cdpUrl or launches a browser, its profile fields) is
its ``DriverSpec`` in ``driverspecs.py``, where each driver is registered.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from browserdeck.driverspecs import SPECS, DriverSpec, spec_of

if TYPE_CHECKING:
    from browserdeck.drivers.base import ProfileDriver

__all__ = ["SPECS", "DriverSpec", "driver_class", "spec_of"]


def driver_class(name: str) -> type[ProfileDriver]:
    """The runtime class of driver ``name`` (``<spec.module>.Driver``), imported on first use."""
    cls: type[ProfileDriver] = importlib.import_module(SPECS[name].module).Driver
    return cls
