"""Refs -> Playwright locators, failing closed.

A ref resolves only if it is in the tab's latest snapshot, the document it was
taken on is still there, and the element it named is still on the page:

* aria refs resolve with ``aria-ref=<Playwright ref>``, which Playwright maps to
  the very element of its latest AI snapshot (never a look-alike);
* role refs resolve with ``get_by_role(role, name, exact)`` *and* that same
  element while Playwright's map is intact; after a reconnect (a new Page for
  the tab) only by role+name, and then only if the page still has exactly as
  many such elements as the snapshot saw (so ``.nth(n)`` cannot shift).

Every failure says which ref, why, and to take a new snapshot.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from browserdeck.engine.errors import NEW_SNAPSHOT, playwright_errors
from browserdeck.engine.fields import REF_PATTERN
from browserdeck.engine.state import PageState, RefInfo, RefTable
from browserdeck.errors import SNAPSHOT, Conflict, Hint, InvalidInput, NotFound

if TYPE_CHECKING:
    from playwright.async_api import FrameLocator, Locator, Page


_REF_INPUT = re.compile(REF_PATTERN)


@dataclass
class Resolved:
    ref: str
    info: RefInfo
    locator: Locator  # the element: what a click, hover or drag acts on
    # The box-less input of the editor the ref was given to (RefTable.inputs), inside the
    # element: typed text goes there, as it has no box to click.
    field: Locator | None = None

    @property
    def input(self) -> Locator:
        """Where typed text goes."""
        return self.field if self.field is not None else self.locator

    def what(self, verb: str) -> str:
        return f"{verb} {self.ref} ({self.info.describe()})"


def normalize(raw: str) -> str:
    """``e12``, ``@e12``, ``ref=e12`` (and a bare ``12``) -> ``e12``; the shapes
    ``fields.REF_PATTERN`` publishes, and nothing else."""
    m = _REF_INPUT.fullmatch(raw)
    if m is not None:
        frame, element, bare = m.groups()
        return f"e{bare}" if bare is not None else f"{'f' + frame if frame else ''}e{element}"
    text = raw.strip()
    if re.fullmatch(r"ax\d+", text):
        raise InvalidInput(
            f"{raw!r} is a read-only ref from format=aria",
            hint="take a snapshot with format=ai (or role) and use its e-refs to act",
            code="invalid_ref",
        )
    raise InvalidInput(
        f"{raw!r} is not a ref",
        hint=Hint(
            "refs look like e12 (f1e3 inside an iframe) and come from {snapshot}",
            snapshot=SNAPSHOT,
        ),
        code="invalid_ref",
    )


def lookup(state: PageState, raw: str) -> tuple[str, RefInfo, RefTable]:
    ref = normalize(raw)
    table = state.table
    if table is None:
        raise NotFound(
            f"ref {ref}: this tab has no snapshot yet", hint=NEW_SNAPSHOT, code="unknown_ref"
        )
    info = table.refs.get(ref)
    if info is None:
        scope = table.scope_text()
        why = f" (the latest snapshot was limited to {scope})" if scope else ""
        raise NotFound(
            f"ref {ref} is not in the latest snapshot of this tab{why}",
            hint=NEW_SNAPSHOT,
            code="unknown_ref",
        )
    restored = table.page_token != state.token
    if not restored:
        if table.main_epoch != state.main_epoch:
            raise Conflict(
                f"ref {ref} is stale: the page navigated since the snapshot",
                hint=NEW_SNAPSHOT,
                code="stale_ref",
            )
        if info.frame_chain and table.child_epoch != state.child_epoch:
            raise Conflict(
                f"ref {ref} is stale: the iframe it is in navigated since the snapshot",
                hint=NEW_SNAPSHOT,
                code="stale_ref",
            )
    return ref, info, table


def _role_locator(root: Page | FrameLocator | Locator, info: RefInfo) -> Locator:
    return root.get_by_role(cast(Any, info.role), name=info.name, exact=True)


def _restored_root(page: Page, table: RefTable) -> Page | FrameLocator | Locator:
    root: Page | FrameLocator | Locator = page
    if table.frame:
        root = page.locator(table.frame).content_frame
    if table.selector:
        root = root.locator(table.selector)
    return root


async def resolve(state: PageState, raw: str, verb: str = "act on") -> Resolved:
    """The locator of a ref, checked to name exactly the element the snapshot showed."""
    ref, info, table = lookup(state, raw)
    page = state.page
    restored = table.page_token != state.token
    if restored:
        return await _resolve_restored(state, ref, info, table, verb)
    aria = page.locator(f"aria-ref={info.pw_ref}")
    inner = table.inputs.get(ref)
    # An editor's box-less input: the ref names the element around it (whose role is not
    # the input's), and typing goes to the input inside it.
    plain = table.mode == "aria" or inner is not None
    locator = aria if plain else aria.and_(_role_locator(page, info))
    with playwright_errors(f"{verb} {ref}"):
        found = await locator.count()
        if found == 1:
            if inner is None:
                return Resolved(ref, info, locator)
            role, name = inner
            field = aria.get_by_role(cast(Any, role), name=name or None, exact=bool(name))
            return Resolved(ref, info, locator, field.first)
        still_there = table.mode == "role" and await aria.count() == 1
    if still_there:
        raise Conflict(
            f"ref {ref} is stale: the element is no longer {info.describe()} "
            "(its role or name changed)",
            hint=NEW_SNAPSHOT,
            code="stale_ref",
        )
    raise Conflict(
        f"ref {ref} ({info.describe()}) is no longer on the page: it was removed, replaced "
        "or hidden since the snapshot",
        hint=NEW_SNAPSHOT,
        code="stale_ref",
    )


async def _resolve_restored(
    state: PageState, ref: str, info: RefInfo, table: RefTable, verb: str
) -> Resolved:
    # A new Page object for this tab (the browser connection was rebuilt): Playwright's
    # element map is gone, only role+name can find the element again.
    reason = None
    if table.mode == "aria":
        reason = "the connection to the browser was re-established since the snapshot"
    elif info.frame_chain:
        reason = "refs inside iframes cannot be re-resolved after a reconnect"
    elif info.count is None:
        reason = "refs of a depth-limited snapshot cannot be re-resolved after a reconnect"
    elif state.page.url != table_url(table, state):
        reason = "the page navigated since the snapshot"
    if reason:
        raise Conflict(f"ref {ref} is stale: {reason}", hint=NEW_SNAPSHOT, code="stale_ref")
    every = _role_locator(_restored_root(state.page, table), info)
    with playwright_errors(f"{verb} {ref}"):
        count = await every.count()
    if count != info.count:
        raise Conflict(
            f"ref {ref} is ambiguous now: the page has {count} {info.describe()} where the "
            f"snapshot had {info.count}",
            hint=NEW_SNAPSHOT,
            code="stale_ref",
        )
    locator = every.nth(info.nth) if count > 1 else every
    return Resolved(ref, info, locator)


def table_url(table: RefTable, state: PageState) -> str:
    return table.url if table.url is not None else state.page.url
