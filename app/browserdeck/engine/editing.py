"""Typing into what a ref names: fields, ``contenteditable`` editors, box-less inputs.

``type`` replaces the element's text (``fill``), or with ``slowly`` clicks it and types
key by key, for pages that listen to keys. Playwright's ``fill`` covers inputs,
textareas and ``contenteditable`` elements (a rich-text editor's iframe body, a code
editor's content). Two kinds of editors are not among them:

* an editor whose real input has no box (a code editor's zero-width input, an
  ``EditContext`` element): its ref was given by the engine (engine/actionable.py,
  ``with_input_refs``) and names the visible element around it; the text is typed into
  the input itself, focused without a click (there is nothing to click);
* a text box that is neither an input nor ``contenteditable`` (``role="textbox"`` on a
  div that reads keys, an ``EditContext`` element with a box): ``fill`` refuses it at
  once, and the text is typed into it after its content is selected.

Either way the content is replaced as ``fill`` would (select all, then the text as one
insertion); ``slowly`` sends each key.
"""

from __future__ import annotations

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Locator

from browserdeck.engine import options as o
from browserdeck.engine import placeholders
from browserdeck.engine.errors import playwright_errors
from browserdeck.engine.refs import Resolved, resolve
from browserdeck.engine.state import PageState

SLOW_TYPE_DELAY_MS = o.SLOW_TYPE_DELAY_MS
# What the element must be for its text to be typed when fill refuses it.
_KEY_EDITOR_JS = """(el) => !!el.editContext || ['textbox', 'searchbox', 'combobox']
  .includes((el.getAttribute('role') || '').trim())"""


async def type_text(state: PageState, action: o.TypeAct, timeout: int) -> str:
    """The ``type`` act; returns the ref it typed into."""
    r = await resolve(state, action.ref, "type into")
    with playwright_errors(r.what("type into"), timeout):
        # A placeholder becomes its secret here, at the last moment (placeholders.py).
        async with placeholders.typed(state, action.text, r, timeout) as text:
            if action.slowly:
                # Focused by a click (a box-less input: by focus, there is nothing to
                # click), then keys on the keyboard: Playwright's press_sequentially
                # focuses the element again first, which loses the caret in an editable
                # region whose element cannot take focus itself (a design-mode iframe).
                if r.field is None:
                    await r.locator.click(timeout=timeout)
                else:
                    await r.field.focus(timeout=timeout)
                await r.locator.page.keyboard.type(text, delay=SLOW_TYPE_DELAY_MS)
            else:
                await fill(r, text, timeout)
        if action.submit:
            # Playwright's press waits for a navigation it started to commit (a form).
            await r.input.press("Enter", timeout=timeout)
    return r.ref


async def fill(r: Resolved, text: str, timeout: int) -> None:
    """Replace the text of what ``r`` names (inside the caller's ``playwright_errors``)."""
    if r.field is not None:
        # Playwright's fill would wait for the input to get a box, until the timeout.
        await _replace_by_keys(r.field, text, timeout)
        return
    try:
        await r.locator.fill(text, timeout=timeout)
    except PlaywrightError as exc:
        if "not an <input>" not in str(exc) or not await r.locator.evaluate(_KEY_EDITOR_JS):
            raise
        await _replace_by_keys(r.locator, text, timeout)


async def _replace_by_keys(field: Locator, text: str, timeout: int) -> None:
    await field.focus(timeout=timeout)
    keyboard = field.page.keyboard
    await keyboard.press("ControlOrMeta+a")
    if text:
        await keyboard.insert_text(text)
    else:
        await keyboard.press("Delete")
