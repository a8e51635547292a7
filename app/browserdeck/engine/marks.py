"""What the page says is actionable beyond its roles, read from the DOM after a snapshot.

Playwright's AI snapshot gives a ref to every visible element that receives pointer
events and tags the element with it (the ``_ariaRef`` expando, in its utility world),
but its text says only the role, the name and a pointer cursor. Whether an element is
``contenteditable``, ``draggable``, shows a move/grab cursor or takes focus
(``tabindex >= 0``) is not in it, nor the input of an editor that has no box of its own.
One ``Runtime.evaluate`` per frame, in the utility world where the snapshot tagged the
elements (over the tab's own CDP session, as the labelled screenshot measures boxes:
engine/screenshot.py), reads them all: a walk over the elements (open shadow roots
included) that looks only at the tagged ones. engine/actionable.py writes what it found
into the text.

The walk costs about 1.5 ms on a 2,000-element page and 10 ms on a 10,000-element one,
beside the 100-600 ms of the snapshot itself (docs/performance.md). A frame in another
process (a cross-origin iframe under site isolation) is not seen by the tab's session:
its elements keep what the roles and the pointer say.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from browserdeck.engine.actionable import ACTIONABLE_ROLES
from browserdeck.engine.state import PageState

log = logging.getLogger(__name__)

# In the utility world of one frame. For each element the snapshot tagged: the first
# reason that holds (actionable.MARKS, in that order); for each text input that has no box
# (zero width or height, or no pointer events) while it is rendered and not hidden from
# assistive technology: the nearest tagged ancestor with a box, the input's role and the
# name the page gives it. One JSON string back (a by-value object is converted object by
# object).
_MARK_JS = r"""(() => {
  const marks = [], inputs = [];
  const design = document.designMode === 'on';  // the whole document is editable
  // Elements whose role says they are actionable already: no mark is written on them
  // (actionable.with_marks), so they are not looked at (two thirds of a page of buttons).
  const SAID = new Set(['BUTTON', 'INPUT', 'SELECT', 'TEXTAREA', 'OPTION']);
  const ROLES = new Set(__ROLES__);
  const INPUT_TYPES = new Set(['', 'text', 'search', 'email', 'url', 'tel', 'password', 'number']);
  const inputRole = (el) => {
    const role = (el.getAttribute('role') || '').trim();
    if (role) return role === 'textbox' || role === 'searchbox' || role === 'combobox' ? role : '';
    if (el.tagName === 'TEXTAREA') return 'textbox';
    if (el.tagName !== 'INPUT' || !INPUT_TYPES.has((el.getAttribute('type') || '').toLowerCase())) return '';
    if (el.hasAttribute('list')) return 'combobox';
    return el.type === 'search' ? 'searchbox' : 'textbox';
  };
  const boxless = (el) => {
    const r = el.getBoundingClientRect();
    if (r.width > 0 && r.height > 0 && getComputedStyle(el).pointerEvents !== 'none') return false;
    if (!el.getClientRects().length || getComputedStyle(el).visibility !== 'visible') return false;
    return !el.closest('[aria-hidden="true"]') && !el.disabled;
  };
  const host = (el) => el.parentElement || (el.parentNode && el.parentNode.host) || null;
  const nameOf = (el) => {
    const label = el.getAttribute('aria-label');
    if (label) return label.trim();
    const by = el.getAttribute('aria-labelledby');
    if (by) {
      const text = by.split(/\s+/).map((id) => el.ownerDocument.getElementById(id))
        .filter(Boolean).map((e) => e.textContent).join(' ');
      if (text.trim()) return text.replace(/\s+/g, ' ').trim();
    }
    if (el.labels && el.labels.length) return el.labels[0].textContent.replace(/\s+/g, ' ').trim();
    return (el.getAttribute('title') || el.getAttribute('placeholder') || '').trim();
  };
  // With the first tagged element inside: the snapshot leaves out an unnamed element that
  // holds one tagged element and no text (an editable div around one paragraph, an
  // iframe's body), and then the mark goes on that one.
  const mark = (el, why) => {
    const it = document.createTreeWalker(el, NodeFilter.SHOW_ELEMENT);
    let inner = it.nextNode();
    while (inner && !inner._ariaRef) inner = it.nextNode();
    marks.push(el._ariaRef.ref, why, inner ? inner._ariaRef.ref : '');
  };
  const walk = (root) => {
    const it = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT);
    for (let el = it.nextNode(); el; el = it.nextNode()) {
      if (el.shadowRoot) walk(el.shadowRoot);
      const tag = el._ariaRef;
      const role = inputRole(el);
      if (role && boxless(el)) {
        let up = host(el);
        while (up && !(up._ariaRef && up.getBoundingClientRect().width > 0)) up = host(up);
        if (up) inputs.push([up._ariaRef.ref, role, nameOf(el)]);
        continue;
      }
      if (!tag || SAID.has(el.tagName) || ROLES.has(el.getAttribute('role')) ||
          (el.tagName === 'A' && el.hasAttribute('href'))) continue;
      const parent = host(el);
      if (!design && el.isContentEditable && !(parent && parent.isContentEditable)) {
        mark(el, 'editable');
      } else if (el.getAttribute('draggable') === 'true') {
        mark(el, 'draggable');
      } else {
        const cursor = getComputedStyle(el).cursor;
        if ((cursor === 'move' || cursor === 'grab') &&
            !(parent && getComputedStyle(parent).cursor === cursor)) {
          mark(el, 'cursor=' + cursor);
        } else if (el.hasAttribute('tabindex') && el.tabIndex >= 0) {
          mark(el, 'focusable');
        }
      }
    }
  };
  if (document.documentElement) walk(document.documentElement);
  if (design && document.body && document.body._ariaRef) mark(document.body, 'editable');
  return JSON.stringify([marks, inputs]);
})()""".replace("__ROLES__", json.dumps(sorted(ACTIONABLE_ROLES)))

# (Playwright ref -> (mark, the ref of the first tagged element inside it or "")), and the
# box-less inputs: (the Playwright ref of the element around, the input's role, its name).
Found = tuple[dict[str, tuple[str, str]], list[tuple[str, str, str]]]


async def read(state: PageState) -> Found:
    """Every frame's marks and box-less inputs (``Found``), as the page is now; nothing
    where the utility worlds cannot be reached (the snapshot stands as it is)."""
    cdp = state.cdp
    if cdp is None:
        return {}, []
    try:
        await state.enable_runtime()
        worlds = state.utility_contexts()
        if not worlds:
            return {}, []
        answers = await asyncio.gather(
            *(
                cdp.send(
                    "Runtime.evaluate",
                    {"expression": _MARK_JS, "contextId": ctx, "returnByValue": True},
                )
                for ctx in worlds
            ),
            return_exceptions=True,
        )
    except Exception:  # the tab is navigating or closing: the snapshot stands as it is
        log.debug("reading the page's marks failed", exc_info=True)
        return {}, []
    marks: dict[str, tuple[str, str]] = {}
    inputs: list[tuple[str, str, str]] = []
    for answer in answers:
        value = _value(answer)
        if value is None:
            continue
        flat, boxless = value
        for i in range(0, len(flat) - 2, 3):
            marks.setdefault(str(flat[i]), (str(flat[i + 1]), str(flat[i + 2])))
        inputs.extend((str(a), str(b), str(c)) for a, b, c in boxless)
    return marks, inputs


def _value(answer: object) -> tuple[list[Any], list[list[Any]]] | None:
    if not isinstance(answer, dict) or answer.get("exceptionDetails"):
        if isinstance(answer, BaseException):
            log.debug("reading a frame's marks failed: %s", answer)
        return None
    raw = (answer.get("result") or {}).get("value")
    try:
        flat, boxless = json.loads(raw) if isinstance(raw, str) else (None, None)
    except ValueError:
        return None
    if not isinstance(flat, list) or not isinstance(boxless, list):
        return None
    return flat, [item for item in boxless if isinstance(item, list) and len(item) == 3]
