"""The seam every call at the front door passes: addons, as in mitmproxy.

An addon is an object with ``before(call)`` and ``after(call)`` (either may be left
out). ``Deck`` runs every call through ``Addons.run``:

1. the request's policies are applied and its profile and tab resolved (``call.tab``);
2. each addon's ``before``, in order. It may read the call (``caller``, ``request``,
   ``profile``, ``tab``, ``await call.element()``), refuse it by raising a
   ``BrowserdeckError`` (the caller gets that error; the call does not run), or pause it
   by awaiting (a person deciding: the call waits, up to the addon's own limit);
3. the call itself (the engine, a profile's start …);
4. each addon's ``after``, in reverse order, also when a ``before`` refused or the call
   failed: ``call.answer`` or ``call.error`` is set. It may add ``call.note(...)``.
   An ``after`` that raises is logged and changes nothing for the caller.

An addon with work of its own in the background (the session recorder) may define
``async stop()``: the service awaits it as it stops, once no call comes any more and
before the browsers close.

The activity log is the first addon (door/activity.py); docs/architecture.md shows the
flow of one call and an example.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Protocol, TypeVar

from browserdeck.door.call import Call

log = logging.getLogger(__name__)

A = TypeVar("A")


class Addon(Protocol):
    """What an addon may define; both hooks are optional (define the ones you need)."""

    async def before(self, call: Call[Any]) -> None: ...

    async def after(self, call: Call[Any]) -> None: ...


class Addons:
    """The addons of one service's front door, in the order they see a call."""

    def __init__(self, addons: Iterable[object] = ()) -> None:
        self._addons: list[object] = list(addons)

    def add(self, addon: object) -> None:
        if addon not in self._addons:
            self._addons.append(addon)

    def remove(self, addon: object) -> None:
        if addon in self._addons:
            self._addons.remove(addon)

    def __iter__(self) -> Any:
        return iter(list(self._addons))

    async def stop(self) -> None:
        """Each addon's ``stop()`` (those that define one), the last added first."""
        for addon in reversed(self._addons):
            hook = getattr(addon, "stop", None)
            if hook is None:
                continue
            try:
                await hook()
            except Exception:
                log.exception("addon %r failed to stop", addon)

    async def run(
        self,
        call: Call[A],
        perform: Callable[[], Awaitable[A]],
        prepare: Callable[[], Awaitable[None]] | None = None,
    ) -> A:
        """``perform`` the call between the addons' hooks; ``prepare`` (resolving the
        profile and tab) runs first, so a failure there reaches ``after`` too."""
        addons = list(self._addons)
        try:
            if prepare is not None:
                await prepare()
            for addon in addons:
                hook = getattr(addon, "before", None)
                if hook is not None:
                    await hook(call)
            call.answer = answer = await perform()
            return answer
        except BaseException as exc:
            call.error = exc
            raise
        finally:
            for addon in reversed(addons):
                hook = getattr(addon, "after", None)
                if hook is None:
                    continue
                try:
                    await hook(call)
                except Exception:
                    log.exception("addon %r failed after %r", addon, call)
            _add_notes(call)


def _add_notes(call: Call[Any]) -> None:
    """The addons' notes, appended to the answer's ``note`` (tab answers have one)."""
    answer = call.answer
    if not call.notes or answer is None or not hasattr(answer, "note"):
        return
    said = [answer.note] if answer.note else []
    answer.note = "; ".join([*said, *call.notes])
