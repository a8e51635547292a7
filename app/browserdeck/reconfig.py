"""What saving new settings does to running browsers (``Service.apply_config``).

A running browser takes some settings at once (its colour: browserdeck's own tray and
panel use it as soon as it is saved) and others only when it is launched again (its CDP
port, its user-data folder, the browser executable, headless or not…). ``restarts``
says which running profiles a candidate config would restart and because of which
settings, so a front-end can say so *before* saving and let the user choose: restart
them now (their tabs close), or keep them running as they are until their next start
(``apply_profiles(restart=False)``: the new settings wait on the profile as
``ProfileContext.pending``).

A colour is never a reason to restart: the window's tint (a Chrome preference written
before launch, chrome/decorate.py) follows at the browser's next start, and the change
costs no tab. ``Applied.recolored`` names those browsers, so the front-end can say it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import ConfigDict, Field

from browserdeck import config, driverspecs
from browserdeck.config import Config, ProfileConfig
from browserdeck.door.request import Request
from browserdeck.errors import BrowserdeckError
from browserdeck.profiles import ProfileContext

if TYPE_CHECKING:
    from browserdeck.service import Service

# What a change restarts is declared with each setting (``restarts``): the profile
# fields a running browser takes without a restart; the settings of the whole app that
# a browser browserdeck launches reads only at its launch, and those of the relay every
# extension profile listens on (key: Config attribute).
LIVE_PROFILE_KEYS = frozenset(s.key for s in config.PROFILE_FIELDS if not s.restarts)
LAUNCH_KEYS = {s.key: s.attr for s in config.SETTINGS if s.restarts == "launched"}
RELAY_KEYS = {s.key: s.attr for s in config.SETTINGS if s.restarts == "relay"}


@dataclass(frozen=True)
class Restart:
    """A running profile that a new config restarts, and the settings that call for it."""

    profile: str
    keys: tuple[str, ...]
    tabs: int = 0  # its open tabs, which the restart closes (restarts_with_tabs)


@dataclass(frozen=True)
class Applied:
    """What saving did to running browsers."""

    restarted: tuple[str, ...] = ()
    deferred: tuple[str, ...] = ()  # still running as before: the change waits for a start
    recolored: tuple[str, ...] = ()  # running: the window's tint follows at the next start


class ApplyConfig(Request[Applied]):
    """The settings dialog's Save at the front door: the new settings, the profiles it
    deletes, whether running browsers restart now."""

    op = "apply-config"
    model_config = ConfigDict(arbitrary_types_allowed=True, strict=False)

    config: Any
    deleted: list[str] = Field(default_factory=list)
    restart: bool = True


def _changed(before: ProfileConfig, after: ProfileConfig) -> list[str]:
    a, b = before.to_json(), after.to_json()
    return [k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]


async def restarts_with_tabs(service: Service, new: Config) -> list[Restart]:
    """``restarts``, each with the number of tabs the restart would close."""
    found = []
    for need in restarts(service, new):
        tabs = await service.contexts[need.profile].peek_tabs() or []
        found.append(Restart(need.profile, need.keys, len(tabs)))
    return found


def _is_up(ctx: ProfileContext) -> bool:
    return ctx.state in ("running", "starting")


def restarts(service: Service, new: Config, old: Config | None = None) -> list[Restart]:
    """The running profiles that ``new`` would restart (deleted ones aside: they stop);
    ``old``: the config they run with (default: the service's)."""
    old = old or service.config
    found = []
    for name, ctx in service.contexts.items():
        after = new.profiles.get(name)
        if after is None or not _is_up(ctx):
            continue
        keys = [k for k in _changed(ctx.profile, after) if k not in LIVE_PROFILE_KEYS]
        spec = driverspecs.spec_of(ctx.profile.driver)
        globals_ = LAUNCH_KEYS if spec.launches and old.may_launch(ctx.profile) else {}
        if spec.port == "relay":
            globals_ = RELAY_KEYS
        keys += [k for k, a in globals_.items() if getattr(old, a) != getattr(new, a)]
        if keys:
            found.append(Restart(name, tuple(dict.fromkeys(keys))))
    return found


async def apply_profiles(service: Service, old: Config, new: Config, *, restart: bool) -> Applied:
    """Bring the profiles in line with ``new`` (already the service's config): a running
    one that needs a restart restarts now, or keeps running as it is until its next start
    (``restart=False``); the others take the new settings at once."""
    needs = {r.profile for r in restarts(service, new, old)}
    restarted: list[str] = []
    deferred: list[str] = []
    recolored: list[str] = []
    for name in list(service.contexts):
        if name not in new.profiles:
            await service.contexts.pop(name).stop()
    for name, profile in new.profiles.items():
        ctx = service.contexts.get(name)
        if ctx is None:
            service.contexts[name] = ProfileContext(service, profile)
            continue
        running = ctx.profile
        if name in needs and not restart:
            ctx.pending = profile
            deferred.append(name)
            continue
        ctx.profile, ctx.pending = profile, None
        if name in needs:
            was_running = ctx.state == "running"
            await ctx.stop()
            if was_running and new.enabled:
                await service.start_quietly(ctx)
            restarted.append(name)
        elif running.color != profile.color and _is_up(ctx) and ctx.impl.spec.launches:
            recolored.append(name)
    return Applied(tuple(restarted), tuple(deferred), tuple(recolored))


async def save(
    service: Service, new: Config, deleted: Sequence[str] = (), *, restart: bool = True
) -> Applied:
    """``Service.apply_config``, then the profiles in ``deleted`` (left out of ``new``) are
    deleted with their browser data.

    Everything but the deletions is applied first (e.g. a new default profile), so a
    deletion that the rest makes possible succeeds; a deleted profile's browser stops and
    its managed data goes.
    """
    interim: Config | None = None
    if deleted:
        kept = {n: service.config.profiles[n] for n in deleted if n in service.config.profiles}
        interim = config.updated(new, lambda c: c.profiles.update(kept))
        try:
            config.check_consistency(interim)
        except BrowserdeckError:
            interim = None
    if interim is None:
        return await service.apply_config(new, restart=restart)
    applied = await service.apply_config(interim, restart=restart)
    for name in deleted:
        await service.delete_profile(name)
    return applied
