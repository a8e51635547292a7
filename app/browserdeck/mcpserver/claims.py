"""Which MCP session owns which tab, shared by every MCP server on this machine.

Two agents on one browser must not trample each other (playwright #41838,
playwright-mcp #893): each session works in its own tab, tabs it opened are its
own, and acting on a tab another live session owns is refused unless asked for
explicitly. Agents arrive through separate ``browserdeck mcp`` processes (stdio)
as well as through ``/mcp`` on the running service, so the claims live in one
small JSON file under the state dir, guarded by a lock file, not in memory.

A claim is live while its owner is: a stdio owner while its process runs, an HTTP
session owner until its ``ttl`` passes without a call (the SDK ends idle HTTP
sessions on the same clock). Dead claims are ignored and pruned on the next write.
The tray can call ``read_claims()`` to show which agent holds which tab.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from browserdeck.chrome.procs import pid_alive
from browserdeck.util import paths
from browserdeck.util.files import write_atomic

if TYPE_CHECKING:
    from filelock import FileLock


@dataclass(frozen=True)
class Owner:
    """An MCP session that can hold tabs."""

    id: str
    label: str
    pid: int
    ttl: float | None = None  # seconds without a call after which the claim lapses


@dataclass(frozen=True)
class Claim:
    profile: str
    target_id: str
    owner: str
    label: str
    pid: int
    seen: float
    ttl: float | None

    def live(self, now: float) -> bool:
        if not pid_alive(self.pid):
            return False
        return self.ttl is None or now - self.seen <= self.ttl

    def to_json(self) -> dict[str, Any]:
        return {
            "owner": self.owner,
            "label": self.label,
            "pid": self.pid,
            "seen": self.seen,
            "ttl": self.ttl,
        }


def claims_file() -> Path:
    return paths.state_dir() / "mcp-tab-claims.json"


def _locked(path: Path) -> FileLock:
    """The inter-process lock every read-modify-write of ``path`` holds (a blocking flock
    on Unix, LockFileEx on Windows, through filelock); private to the user (0600).

    filelock is imported here, on the first claim (a page call): importing it (~8 ms)
    is not on the path of a service answering ``initialize``."""
    from filelock import FileLock

    path.parent.mkdir(parents=True, exist_ok=True)
    return FileLock(path.with_suffix(".lock"), mode=0o600)


def _key(profile: str, target_id: str) -> str:
    return f"{profile}/{target_id}"


def _load(path: Path) -> dict[str, Claim]:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    out: dict[str, Claim] = {}
    if not isinstance(raw, dict):
        return out
    for key, value in raw.items():
        profile, _, target = key.partition("/")
        try:
            out[key] = Claim(
                profile,
                target,
                str(value["owner"]),
                str(value.get("label", "")),
                int(value["pid"]),
                float(value["seen"]),
                None if value.get("ttl") is None else float(value["ttl"]),
            )
        except (KeyError, TypeError, ValueError):
            continue
    return out


def _save(path: Path, claims: dict[str, Claim]) -> None:
    write_atomic(path, json.dumps({k: c.to_json() for k, c in claims.items()}))


def read_claims(profile: str | None = None) -> list[Claim]:
    """Live claims (of one profile, or all): which agent holds which tab."""
    now = time.time()
    return [
        c
        for c in _load(claims_file()).values()
        if c.live(now) and (profile is None or c.profile == profile)
    ]


def release_all() -> list[Claim]:
    """Drop every claim (the tray's Stop all agents); returns the live ones it dropped."""
    path = claims_file()
    now = time.time()
    with _locked(path):
        claims = _load(path)
        if claims:
            _save(path, {})
    return [c for c in claims.values() if c.live(now)]


class TabClaims:
    """The claims file, as one MCP server process uses it."""

    def __init__(self, path: Path | None = None) -> None:
        self._path = path

    @property
    def path(self) -> Path:
        return self._path or claims_file()

    def claim(
        self, profile: str, target_id: str, owner: Owner, *, force: bool = False
    ) -> Claim | None:
        """Take the tab for ``owner``. Returns the other live claim that refused it, else None."""
        now = time.time()
        with _locked(self.path):
            claims = {k: c for k, c in _load(self.path).items() if c.live(now)}
            current = claims.get(_key(profile, target_id))
            if current is not None and current.owner != owner.id and not force:
                return current
            claims[_key(profile, target_id)] = Claim(
                profile, target_id, owner.id, owner.label, owner.pid, now, owner.ttl
            )
            _save(self.path, claims)
        return None

    def owner_of(self, profile: str, target_id: str) -> Claim | None:
        claim = _load(self.path).get(_key(profile, target_id))
        return claim if claim is not None and claim.live(time.time()) else None

    def owners(self, profile: str) -> dict[str, Claim]:
        now = time.time()
        return {
            c.target_id: c
            for c in _load(self.path).values()
            if c.profile == profile and c.live(now)
        }

    def touch(self, owner: Owner) -> None:
        """Renew an expiring owner's claims (HTTP sessions call this as they work)."""
        if owner.ttl is None:
            return
        now = time.time()
        with _locked(self.path):
            claims = _load(self.path)
            changed = False
            for key, c in claims.items():
                if c.owner == owner.id and now - c.seen > owner.ttl / 10:
                    claims[key] = Claim(c.profile, c.target_id, c.owner, c.label, c.pid, now, c.ttl)
                    changed = True
            if changed:
                _save(self.path, claims)

    def release(
        self, owner: Owner, profile: str | None = None, target_id: str | None = None
    ) -> None:
        """Drop ``owner``'s claim on one tab, or on all its tabs."""
        now = time.time()
        with _locked(self.path):
            claims = _load(self.path)
            kept = {
                k: c
                for k, c in claims.items()
                if c.live(now)
                and not (
                    c.owner == owner.id
                    and (profile is None or c.profile == profile)
                    and (target_id is None or c.target_id == target_id)
                )
            }
            if kept != claims:
                _save(self.path, kept)

    def prune(self, profile: str, open_targets: set[str]) -> None:
        """Forget claims on tabs of ``profile`` that are no longer open."""
        with _locked(self.path):
            claims = _load(self.path)
            kept = {
                k: c
                for k, c in claims.items()
                if c.profile != profile or c.target_id in open_targets
            }
            if kept != claims:
                _save(self.path, kept)
