"""Differential CDP conformance: the same scenario against a plain Chromium and through
the relay + real extension, compared after normalising ids and timestamps.

A scenario is an async function ``(c: Recorder, site: Site) -> None`` that drives a raw
CDP connection; the Recorder keeps every reply and every event per session. ``transcript``
turns that into something comparable:

* ids (targets, sessions, frames, loaders, contexts, requests...) become ``<id1>``,
  ``<id2>``... in order of first appearance, so "the same id twice" is still visible;
* timestamps become ``<t>``; volatile network details are dropped;
* each session's events are kept in order for the methods a scenario names ("detail"),
  and counted for every other method;
* events about targets the scenario did not create (the plain Chromium's first tab, the
  extension's service worker) are left out on both sides.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import re
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import websockets
from websockets.asyncio.client import ClientConnection

ID_KEYS = frozenset(
    {
        "sessionId", "targetId", "openerId", "openerFrameId", "frameId", "parentFrameId",
        "parentId", "loaderId", "browserContextId", "requestId", "executionContextId",
        "uniqueId", "scriptId", "objectId", "backendNodeId", "nodeId", "networkId",
        "executionContextUniqueId", "id",
    }
)  # fmt: skip
TIME_KEYS = frozenset({"timestamp", "wallTime", "time", "requestTime"})
DROP_KEYS = frozenset(
    {
        "headers", "requestHeaders", "responseHeaders", "headersText", "initiator", "timing",
        "stackTrace", "remoteIPAddress", "remotePort", "connectionId", "encodedDataLength",
        "securityDetails", "associatedCookies", "cookiePartitionKey", "cookiePartitionKeyOpaque",
        "blockedCookies", "exemptedCookies", "clientSecurityState", "siteHasCookieInOtherPartition",
        "connectTiming", "responseTime", "cacheStorageCacheName", "fromPrefetchCache",
        "alternateProtocolUsage", "protocol", "securityState", "charset", "redirectHasExtraInfo",
        "hasExtraInfo", "hasUserGesture", "documentURL", "isSameSite", "adFrameStatus",
        "secureContextType", "crossOriginIsolatedContextType", "gatedAPIFeatures",
        "domainAndRegistry", "secure", "mimeType", "dataLength", "resourceIPAddressSpace",
        "auxData", "data",
    }
)  # fmt: skip
BLOB_ID = re.compile(r"/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
# Chrome drops these through the relay on purpose (core.DROPPED_EVENTS).
IGNORED_EVENTS = frozenset({"Network.dataReceived", "Network.resourceChangedPriority"})
# Not counted: whether the initial about:blank's stop arrives after Page.enable is racy in
# Chrome alone; so is whether a worker's script has loaded by the time its session attaches
# (Inspector.workerScriptLoaded arrived in one of four full runs, through the relay).
UNCOUNTED_EVENTS = frozenset({"Page.frameStoppedLoading", "Inspector.workerScriptLoaded"})


@dataclass
class Recorder:
    ws: ClientConnection
    replies: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    events: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    # Arrival order: ("reply", label) or ("event", index into events).
    order: list[tuple[str, Any]] = field(default_factory=list)
    own: set[str] = field(default_factory=set)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _pending: dict[int, asyncio.Future[dict[str, Any]]] = field(default_factory=dict)
    _labels: dict[int, str] = field(default_factory=dict)
    _changed: asyncio.Event = field(default_factory=asyncio.Event)
    _reader: asyncio.Task[None] | None = None

    @classmethod
    async def connect(cls, url: str, headers: dict[str, str] | None = None) -> Recorder:
        ws = await websockets.connect(url, additional_headers=headers, max_size=None)
        rec = cls(ws)
        rec._reader = asyncio.get_running_loop().create_task(rec._read())
        return rec

    async def close(self) -> None:
        await self.ws.close()
        if self._reader is not None:
            self._reader.cancel()

    async def _read(self) -> None:
        async for raw in self.ws:
            msg = json.loads(raw)
            if "id" in msg:
                # Recorded here, in arrival order (the awaiting coroutine resumes later).
                label = self._labels.pop(msg["id"], None)
                if label is not None:
                    self.replies.append(
                        (label, {k: v for k, v in msg.items() if k in ("result", "error")})
                    )
                    self.order.append(("reply", label))
                fut = self._pending.pop(msg["id"], None)
                if fut is not None and not fut.done():
                    fut.set_result(msg)
                continue
            sid = msg.get("sessionId", "")
            params = msg.get("params", {})
            self._learn(msg["method"], params)
            self.order.append(("event", len(self.events)))
            self.events.append((sid, msg["method"], params))
            self._changed.set()

    def _learn(self, method: str, params: dict[str, Any]) -> None:
        info = params.get("targetInfo") or {}
        if method == "Target.attachedToTarget" and info.get("type") in ("iframe", "worker"):
            self.own.add(info["targetId"])
        if info.get("openerId") in self.own:
            self.own.add(info["targetId"])

    async def send(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        session: str | None = None,
        *,
        label: str | None = None,
        timeout: float = 15.0,
        record: bool = True,
    ) -> dict[str, Any]:
        """Send a command; ``record=False`` keeps its reply out of the transcript (polls
        whose count depends on timing)."""
        msg_id = next(self._ids)
        msg: dict[str, Any] = {"id": msg_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = fut
        if record:
            self._labels[msg_id] = label or method
        await self.ws.send(json.dumps(msg))
        reply = await asyncio.wait_for(fut, timeout)
        if method == "Target.createTarget" and "result" in reply:
            self.own.add(reply["result"]["targetId"])
        return reply

    async def result(self, method: str, params: dict[str, Any] | None = None,
                     session: str | None = None, *, label: str | None = None) -> Any:  # fmt: skip
        reply = await self.send(method, params, session, label=label)
        assert "result" in reply, (method, reply)
        return reply["result"]

    async def wait_event(
        self,
        method: str,
        where: Callable[[str, dict[str, Any]], bool] = lambda sid, p: True,
        *,
        timeout: float = 10.0,
        count: int = 1,
    ) -> tuple[str, dict[str, Any]]:
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            found = [(s, p) for s, m, p in self.events if m == method and where(s, p)]
            if len(found) >= count:
                return found[count - 1]
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                raise AssertionError(f"no {method} within {timeout:g} s")
            self._changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), left)

    async def settle(self, quiet: float = 0.3, limit: float = 5.0) -> None:
        """Wait until no event arrived for ``quiet`` s (bounded): trailing events land."""
        deadline = asyncio.get_running_loop().time() + limit
        while asyncio.get_running_loop().time() < deadline:
            seen = len(self.events)
            await asyncio.sleep(quiet)
            if len(self.events) == seen:
                return


class Normaliser:
    def __init__(self) -> None:
        self.names: dict[Any, str] = {}

    def ident(self, value: Any) -> Any:
        if value in (None, "", 0):
            return value
        if value not in self.names:
            self.names[value] = f"<id{len(self.names) + 1}>"
        return self.names[value]

    def __call__(self, value: Any, key: str = "") -> Any:
        if isinstance(value, dict):
            out = {k: self(v, k) for k, v in sorted(value.items()) if k not in DROP_KEYS}
            if "targetId" in out and out.get("url") in ("", "about:blank"):
                # A new tab's first document: url "" or about:blank and title "" or
                # "about:blank" depending on whether it committed yet (racy in Chrome alone).
                out["url"] = "about:blank"
                if out.get("title") in ("", "about:blank"):
                    out["title"] = "<untitled>"
            return out
        if isinstance(value, list):
            return [self(v, key) for v in value]
        if key in ID_KEYS and isinstance(value, (str, int)):
            return self.ident(value)
        if key in TIME_KEYS:
            return "<t>"
        if isinstance(value, str) and value.startswith("blob:"):
            return BLOB_ID.sub("/<uuid>", value)  # a fresh UUID per blob
        return value


def _about_others(rec: Recorder, method: str, params: dict[str, Any]) -> bool:
    info = params.get("targetInfo")
    target = info.get("targetId") if isinstance(info, dict) else params.get("targetId")
    return (
        method.startswith("Target.")
        and method != "Target.receivedMessageFromTarget"
        and isinstance(target, str)
        and target not in rec.own
    )


def transcript(
    rec: Recorder, detail: frozenset[str], loose: frozenset[str] = frozenset()
) -> dict[str, Any]:
    """``loose``: events left out entirely (each scenario says why)."""
    norm = Normaliser()
    sessions: dict[str, dict[str, Any]] = {}
    order: list[str] = []
    replies = []
    last_info: dict[tuple[str, Any], Any] = {}
    for kind, what in rec.order:
        if kind == "reply":
            label, body = rec.replies[len(replies)]
            replies.append((label, norm(body)))
            order.append(f"reply {what}")
            continue
        sid, method, params = rec.events[what]
        if method in IGNORED_EVENTS or method in loose or _about_others(rec, method, params):
            continue
        session = norm.ident(sid) or "<root>"
        params = norm(params)
        if method in ("Target.targetCreated", "Target.targetInfoChanged"):
            info = params["targetInfo"]
            if method.endswith("Changed") and last_info.get((session, info["targetId"])) == info:
                continue  # no change left after normalisation
            last_info[(session, info["targetId"])] = info
        entry = sessions.setdefault(session, {"detail": [], "counts": Counter()})
        if method in detail:
            entry["detail"].append((method, params))
            order.append(f"{method} on {session}")
        elif method not in UNCOUNTED_EVENTS:
            entry["counts"][method] += 1
    for entry in sessions.values():
        entry["counts"] = dict(sorted(entry["counts"].items()))
    return {"replies": replies, "sessions": sessions, "order": order}


Scenario = Callable[[Recorder, Any], Awaitable[None]]


def diff(direct: dict[str, Any], relay: dict[str, Any]) -> list[str]:
    """Human-readable differences (empty when they match)."""
    out: list[str] = []
    for i, (d, r) in enumerate(itertools.zip_longest(direct["replies"], relay["replies"])):
        if d != r:
            out.append(
                f"reply {i}: direct {json.dumps(d)[:600]}\n        relay  {json.dumps(r)[:600]}"
            )
    if direct["order"] != relay["order"]:
        out.append(
            f"order of replies and events:\n  direct {direct['order']}\n  relay  {relay['order']}"
        )
    keys = sorted(set(direct["sessions"]) | set(relay["sessions"]))
    for key in keys:
        d, r = direct["sessions"].get(key), relay["sessions"].get(key)
        if d == r:
            continue
        if d is None or r is None:
            out.append(
                f"session {key}: only {'relay' if d is None else 'direct'}: {json.dumps(d or r)[:600]}"
            )
            continue
        for part in ("detail", "counts"):
            if d[part] != r[part]:
                out.append(
                    f"session {key} {part}:\n  direct {json.dumps(d[part])[:1500]}\n"
                    f"  relay  {json.dumps(r[part])[:1500]}"
                )
    return out
