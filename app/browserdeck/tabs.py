"""A tab as every layer sees it, and which tab a call that names none acts on.

The service lists tabs and drivers (remote.py) build them; its own module so a driver
below the service can build one without importing the service (tests/test_layers.py
forbids the cycle). ``TabHistory`` is the default-tab rule of docs/api.md "Which tab".
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict
from pydantic.alias_generators import to_camel
from pydantic.dataclasses import dataclass

# The built-in front-ends' X-Browserdeck-Client labels name a tool, not a caller: their
# calls count as unnamed ones (one shared history per profile), as do calls with none.
TOOL_CLIENTS = frozenset({"browserdeck-cli", "browserdeck-mcp", "browserdeck-gui", ""})
# The panel's own calls (its live screenshots) are not an agent acting.
QUIET_CLIENTS = frozenset({"browserdeck-gui"})
RECENT_TABS_MAX = 50
# Pages the engine cannot (or must not) drive: DevTools and extensions' own pages.
_UNATTACHABLE = ("devtools://", "chrome-extension://", "chrome-untrusted://")


# A pydantic dataclass: built positionally like any dataclass, and the schema of a tab in
# the API's answers (camelCase: targetId), so a tab is declared once. Its validator is
# built on first use, not at import.
@dataclass(config=ConfigDict(alias_generator=to_camel, populate_by_name=True, defer_build=True))
class Tab:
    target_id: str
    title: str
    url: str
    type: str = "page"
    status: int | None = None  # the HTTP status of the page it was opened on, when known

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "targetId": self.target_id,
            "title": self.title,
            "url": self.url,
            "type": self.type,
        }
        if self.status is not None:
            out["status"] = self.status
        return out


def client_key(client: str | None) -> str:
    name = (client or "").strip()
    return "" if name in TOOL_CLIENTS else name[:200]


def match(tabs: list[Tab], target: str, *, where: str = "", why: str | None = None) -> Tab:
    """The tab ``target`` names among ``tabs``: its full targetId or a unique prefix
    (any case). ``where`` says whose tabs ("in profile 'work'"); ``why`` why one may be
    missing (default: it may have been closed)."""
    from browserdeck.errors import TABS, Conflict, Hint, NotFound

    for tab in tabs:
        if tab.target_id == target:
            return tab
    matches = [t for t in tabs if t.target_id.lower().startswith(target.lower())]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise NotFound(
            f"no tab {target!r}{' ' + where if where else ''} ({why or 'it may have been closed'})",
            hint=Hint("list tabs with {tabs} and use a targetId from there", tabs=TABS),
            code="tab_not_found",
        )
    raise Conflict(
        f"tab prefix {target!r} is ambiguous: it matches {len(matches)} tabs "
        f"({', '.join(t.target_id[:12] for t in matches)})",
        hint="use more characters of the targetId",
        code="ambiguous_tab",
    )


def attachable(tab: Tab) -> bool:
    return tab.type == "page" and not tab.url.startswith(_UNATTACHABLE)


class TabHistory:
    """One profile's memory for the default tab (docs/api.md "Which tab"): per client, the
    tab it last used and the one it last opened; and the profile's tabs by last use
    through browserdeck."""

    def __init__(self) -> None:
        self._used: dict[str, str] = {}
        self._opened: dict[str, str] = {}
        self._recent: list[str] = []

    def used(self, client: str | None, target_id: str) -> None:
        key = client_key(client)
        self._used[key] = target_id
        if target_id in self._recent:
            self._recent.remove(target_id)
        self._recent.append(target_id)
        del self._recent[:-RECENT_TABS_MAX]

    def opened(self, client: str | None, target_id: str) -> None:
        self._opened[client_key(client)] = target_id

    def latest(self, client: str | None, among: set[str]) -> str | None:
        """The client's latest tab still in ``among``, else the profile's; None: none yet."""
        key = client_key(client)
        for candidate in (self._used.get(key), self._opened.get(key), *reversed(self._recent)):
            if candidate in among:
                return candidate
        return None
