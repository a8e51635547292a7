"""Secrets typed by name: ``<secret>NAME</secret>`` and ``<totp>NAME</totp>`` in what an
agent types (``type``, ``fill``, ``press``) become the value at the last moment.

The value goes only into a document of an origin the secret allows: the origin of the
frame that holds the element (an ``about:blank`` or ``srcdoc`` frame has its parent's),
else a ``Forbidden`` naming that origin. The request, every addon, the activity log and
the answer keep the placeholder; the element is remembered so screenshots cover it
(masking.py), and the document is marked so no script reads the value back and no PDF
prints it (``refuse_on_secret_page``) until the tab loads another document.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from playwright.async_api import Error as PlaywrightError

from browserdeck.errors import Forbidden, InvalidInput
from browserdeck.secrets import vault as vaults
from browserdeck.util import aio

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from playwright.async_api import ElementHandle, Frame, Locator

    from browserdeck.engine.refs import Resolved
    from browserdeck.engine.state import PageState

PLACEHOLDER = re.compile(r"<(secret|totp)>([^<>]{1,64})</\1>")
# Remembered per tab for screenshots (the latest ones; they die with their document).
MAX_COVERED = 20


def present(text: str) -> bool:
    """Whether ``text`` names a secret (cheap: most typed text does not)."""
    return "<secret>" in text or "<totp>" in text


@contextlib.asynccontextmanager
async def typed(
    state: PageState, text: str, found: Resolved, timeout: int, vault: vaults.Vault | None = None
) -> AsyncIterator[str]:
    """``text`` with each placeholder replaced by its value, for the element ``found``;
    the element is remembered once the block that types it ends."""
    if not present(text):
        yield text
        return
    v = vault if vault is not None else vaults.shared()
    table = state.table
    held: asyncio.Future[ElementHandle | None] | None = None
    if found.info.frame_chain or (table is not None and table.frame):
        # In an iframe: the origin of the document that holds the element.
        handle = await found.locator.element_handle(timeout=timeout)
        origin = await frame_origin(await handle.owner_frame())
        held = asyncio.get_running_loop().create_future()
        held.set_result(handle)
    else:
        # The snapshot's page itself, whose origin is known here. A navigation from now
        # on leaves the ref unresolvable: nothing is typed into another document.
        origin = await frame_origin(state.page.main_frame)
    value = PLACEHOLDER.sub(lambda m: v.use(m.group(1), m.group(2).strip(), origin), text)
    try:
        yield value
    finally:
        # The element's handle, for screenshots, is fetched after the typing (while the
        # answer waits for what it caused), not on its way.
        if held is None:
            held = aio.create_task(_handle(found.locator, timeout), name="secret-input-handle")
        holds(state, found.ref, held)


async def _handle(locator: Locator, timeout: int) -> ElementHandle | None:
    with contextlib.suppress(PlaywrightError):
        return await locator.element_handle(timeout=timeout)
    return None


@dataclass
class Held:
    """The inputs of one document (``main_epoch``) holding a secret the engine typed."""

    epoch: int
    inputs: dict[str, asyncio.Future[ElementHandle | None]] = field(default_factory=dict)


_held: weakref.WeakKeyDictionary[PageState, Held] = weakref.WeakKeyDictionary()


def held_inputs(state: PageState) -> list[asyncio.Future[ElementHandle | None]]:
    """The handles of this document's inputs that hold a secret (for screenshots)."""
    held = _held.get(state)
    return list(held.inputs.values()) if held and held.epoch == state.main_epoch else []


def holds(state: PageState, ref: str, handle: asyncio.Future[ElementHandle | None]) -> None:
    """The element ``ref`` now holds a secret: covered in screenshots; scripts refused."""
    held = _held.get(state)
    if held is None or held.epoch != state.main_epoch:  # the inputs of a document gone
        if held is not None:
            _let_go(list(held.inputs.values()))
        held = _held[state] = Held(state.main_epoch)
    inputs = held.inputs
    _let_go([h for h in [inputs.pop(ref, None)] if h is not None])  # typed into again
    inputs[ref] = handle
    while len(inputs) > MAX_COVERED:
        _let_go([inputs.pop(next(iter(inputs)))])


def _let_go(handles: list[asyncio.Future[ElementHandle | None]]) -> None:
    """The page may free these elements (a handle keeps its element alive)."""
    for held in handles:
        aio.create_task(_dispose(held), name="secret-input-dispose")


async def _dispose(held: asyncio.Future[ElementHandle | None]) -> None:
    with contextlib.suppress(PlaywrightError, asyncio.CancelledError):
        handle = await held
        if handle is not None:
            await handle.dispose()


async def frame_origin(frame: Frame | None) -> str:
    """The origin of ``frame``'s document, as the vault writes origins."""
    while frame is not None:
        url = frame.url
        if url and not url.startswith(("about:", "javascript:")):
            return vaults.origin_of(url)
        frame = frame.parent_frame  # about:blank and srcdoc frames have their parent's
    return ""


def needs_ref(key: str) -> None:
    """A key press that types a secret must name the element it types into."""
    if present(key):
        raise InvalidInput(
            "a key sequence with a secret needs ref: the element it is typed into",
            hint="pass the ref of the field (from the latest snapshot)",
            code="secret_needs_ref",
        )


def refuse_on_secret_page(state: PageState, what: str, why: str) -> None:
    """Refuse ``what`` on a document that holds a secret the engine typed (``why``: what
    it would do with the value): an agent's script could read it back, a PDF prints it."""
    held = _held.get(state)
    if held is not None and held.epoch == state.main_epoch:
        raise Forbidden(
            f"{what} is refused on this page: a secret was typed into it, and {why}",
            hint="use a snapshot to see the page, or a screenshot (it covers the secret); "
            f"{what} works again once the tab loads another document (a navigation or reload)",
            code="secret_on_page",
        )
