"""Saved auth states: a profile's cookies and site storage, under a name, 0600.

Each is ``<data>/auth-states/NAME.json`` (mode 0600 in a 0700 folder): in browserdeck's
data folder, which no agent's file tool may read (policy/confine.py refuses it as a root and
as a path), and never in an output folder. What one holds (engine/authstate.py): the
profile's cookies, and per origin open in it when it was saved, its localStorage,
sessionStorage and IndexedDB. Its summary (``AuthState``) names what it holds, never
a value.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

from browserdeck import results as r
from browserdeck.errors import InvalidInput, NotFound
from browserdeck.secrets import vault
from browserdeck.util import paths
from browserdeck.util.files import write_atomic

if TYPE_CHECKING:
    from pathlib import Path

VERSION = 1


def check_name(name: str) -> str:
    return vault.check_name(name, "an auth state name", "github-login")


def _path(name: str) -> Path:
    return paths.auth_states_dir() / f"{check_name(name)}.json"


def summary(data: dict[str, Any]) -> r.AuthState:
    origins = data.get("origins") or []
    return r.AuthState(
        name=str(data.get("name", "")),
        profile=str(data.get("profile", "")),
        saved_at=float(data.get("savedAt", 0)),
        cookies=len(data.get("cookies") or []),
        origins=[o["origin"] for o in origins],
        session_storage=[o["origin"] for o in origins if o.get("sessionStorage")],
        indexed_db=[o["origin"] for o in origins if o.get("indexedDB")],
    )


def save(name: str, profile: str, state: dict[str, Any]) -> r.AuthState:
    """Keep ``state`` (cookies, origins) as ``name``, replacing one of that name."""
    data = {"version": VERSION, "name": name, "profile": profile, "savedAt": time.time(), **state}
    write_atomic(_path(name), json.dumps(data, ensure_ascii=False), mode=0o600)
    return summary(data)


def load(name: str) -> dict[str, Any]:
    try:
        data: dict[str, Any] = json.loads(_path(name).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise NotFound(
            f"there is no saved auth state named {name!r} (saved: {', '.join(names()) or 'none'})",
            hint="save one first (browser_storage_state, `browserdeck state save NAME`)",
            code="unknown_auth_state",
        ) from None
    except ValueError:
        raise InvalidInput(
            f"the saved auth state {name!r} is damaged (not JSON)",
            hint="delete it (`browserdeck state rm NAME`) and save it again",
            code="bad_auth_state",
        ) from None
    return data


def names() -> list[str]:
    return sorted(p.stem for p in paths.auth_states_dir().glob("*.json"))


def listed() -> list[r.AuthState]:
    out = []
    for name in names():
        try:
            out.append(summary(load(name)))
        except (InvalidInput, NotFound):
            continue
    return out


def delete(name: str) -> bool:
    path = _path(name)
    existed = path.exists()
    path.unlink(missing_ok=True)
    return existed
