"""Drivers as classes (drivers/): the profile delegates to its driver, and the driver
that started a browser or relay stops it, also after the settings switched driver."""

from __future__ import annotations

from browserdeck import config, drivers, driverspecs
from browserdeck.chrome import procs
from browserdeck.drivers.base import ProfileDriver
from tests.support.service import running_service, service_config


def test_every_registered_driver_has_its_class() -> None:
    for name, spec in driverspecs.SPECS.items():
        cls = drivers.driver_class(name)
        assert issubclass(cls, ProfileDriver) and cls.name == name
        assert spec.module == cls.__module__
    # The config's driver choices are exactly the registered drivers.
    assert config.PROFILE_KEYS["driver"].choices == tuple(driverspecs.SPECS)


async def test_switching_an_extension_profile_to_remote_stops_its_relay() -> None:
    cfg = service_config()
    cfg.profiles["chrome"].cdp_port = None  # the relay listens on relayPort
    async with running_service(cfg) as (service, client):
        ctx = service.contexts["chrome"]
        assert ctx.impl.name == "extension"
        port = service.config.relay_port
        extension = ctx.impl
        assert extension.relay is not None and procs.port_in_use(port)

        def to_remote(c: config.Config) -> None:
            p = c.profiles["chrome"]
            p.driver, p.cdp_url = "remote", "http://127.0.0.1:9"

        await service.apply_config(config.updated(service.config, to_remote))
        assert ctx.impl.name == "remote"
        assert extension.relay is None
        assert not procs.port_in_use(port), "the extension driver's relay outlived the switch"
        status = (await client.get("/", params={"profile": "chrome"})).json()
        assert status["driver"] == "remote" and status["cdpPort"] is None
