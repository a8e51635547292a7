"""The page's side of approval: what the element an action hits is, read in one round trip.

``FACTS_JS`` is one function of the page: given an element (or none: the focused one),
the rules (door/approval/rules.py: the risky words as a pattern, the sensitive
autocomplete tokens) and the key an action presses, it says what the element is (a
control or a field), its accessible name as the page reckons it and a risky word in it,
whether the action submits its form and whether that form holds a password, a payment
card or a one-time code, whether it is a download link or a file input, the money shown
on it or its form, and its box. The in-page catch of scripts (engine/catch.py) runs the
same function on the elements scripts click.

It runs in Playwright's utility world of the main frame, over the engine's own CDP session
of the tab, finding the element by the ref the last snapshot left on it (as
engine/isolated.py does): no page script takes part, and it is one round trip. A ref in
an iframe is read through Playwright's locator instead.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
from typing import TYPE_CHECKING, Any

from browserdeck.engine.isolated import _BY_REF
from browserdeck.engine.refs import lookup, resolve

if TYPE_CHECKING:
    from browserdeck.engine.state import PageState

log = logging.getLogger(__name__)

FACTS_TIMEOUT = 3.0
PICTURE_TIMEOUT = 3.0
# Around the element in the approval picture (CSS pixels), and its largest size.
PICTURE_MARGIN = 120
PICTURE_MAX = (600, 300)

FACTS_JS = r"""(el, rules, key) => {
  const words = new RegExp(rules.words, 'iu');
  const names = new RegExp(rules.names, 'i');
  const text = (s) => (s || '').replace(/\s+/g, ' ').trim();
  if (!el) {
    el = document.activeElement;
    while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
  }
  if (!el || el.nodeType !== 1) el = document.body || document.documentElement;
  const CONTROL = 'button,input,select,textarea,a[href],area[href],summary,[role=button],'
    + '[role=link],[role=menuitem],[role=menuitemcheckbox],[role=menuitemradio],[role=option],'
    + '[role=tab],[role=switch],[role=checkbox],[role=radio],[role=textbox],[role=combobox]';
  const control = (el.closest && el.closest(CONTROL)) || el;
  const tag = control.localName || '';
  const type = (tag === 'input' || tag === 'button') ? String(control.type || '').toLowerCase() : '';
  const role = (control.getAttribute && control.getAttribute('role')) || '';
  const PRESSED = ['submit', 'image', 'button', 'reset'];
  const FIELD_ROLES = ['textbox', 'searchbox', 'combobox', 'spinbutton', 'slider', 'listbox',
    'checkbox', 'radio', 'switch', 'option'];
  const field = (tag === 'input' && !PRESSED.includes(type)) || tag === 'textarea'
    || tag === 'select' || !!control.isContentEditable || FIELD_ROLES.includes(role);
  const whole = tag === 'body' || tag === 'html';
  const doc = control.ownerDocument || document;
  const nameOf = (n) => {
    const ids = n.getAttribute && n.getAttribute('aria-labelledby');
    if (ids) {
      const t = text(ids.split(/\s+/).map((i) => { const x = doc.getElementById(i); return x ? x.textContent : ''; }).join(' '));
      if (t) return t;
    }
    const aria = n.getAttribute && n.getAttribute('aria-label');
    if (aria && text(aria)) return text(aria);
    if (n.localName === 'input') {
      const t = String(n.type || '').toLowerCase();
      if (t === 'submit' || t === 'button' || t === 'reset')
        return text(n.value) || (t === 'submit' ? 'Submit' : t === 'reset' ? 'Reset' : '');
      if (t === 'image') return text(n.alt || n.value || 'Submit');
    }
    if (n.labels && n.labels.length) return text(n.labels[0].textContent);
    if (n.localName === 'input' || n.localName === 'textarea') return text(n.placeholder || n.title);
    const inner = text((n.textContent || '').slice(0, 400));
    if (inner) return inner;
    const img = n.querySelector && n.querySelector('img[alt]');
    return text((img && img.alt) || n.title || '');
  };
  const name = whole ? '' : nameOf(control).slice(0, 200);
  // Invisible format characters (a zero-width space in "P\u200bay") do not hide a word.
  const wordIn = (s) => { const m = s && s.replace(/\p{Cf}/gu, '').match(words); return m ? m[0].toLowerCase().replace(/\s+/g, ' ') : null; };
  const isSubmit = (n) => !n.disabled && ((n.localName === 'button' && String(n.type || 'submit').toLowerCase() === 'submit')
    || (n.localName === 'input' && ['submit', 'image'].includes(String(n.type || '').toLowerCase())));
  const form = control.form || (control.closest && control.closest('form')) || null;
  const out = {
    tag, role, name, word: field ? null : wordIn(name), activates: !field && !whole,
    submits: false, defaultName: '', defaultWord: null, sensitive: [], download: false,
    file: tag === 'input' && type === 'file', amounts: [], url: location.href, sendsTo: '',
    box: null,
  };
  const enter = key === 'Enter' || key === 'NumpadEnter';
  if (form) {
    const fields = Array.from(form.elements || []).slice(0, 500);
    if (isSubmit(control)) out.submits = !key || enter || key === ' ' || key === 'Space';
    else if (enter && tag === 'input' && !PRESSED.includes(type) && !['checkbox', 'radio', 'file', 'range', 'color'].includes(type)) {
      out.submits = true;  // Enter in a field submits its form ("implicit submission")
      const first = fields.find(isSubmit);
      if (first) { out.defaultName = nameOf(first).slice(0, 200); out.defaultWord = wordIn(out.defaultName); }
    }
    const kinds = new Set();
    for (const f of fields) {
      if (f.localName === 'input' && String(f.type || '').toLowerCase() === 'password') kinds.add('password');
      const tokens = String((f.getAttribute && f.getAttribute('autocomplete')) || '').toLowerCase().split(/\s+/);
      for (const t of tokens) if (Object.prototype.hasOwnProperty.call(rules.tokens, t)) kinds.add(rules.tokens[t]);
      const said = String(f.name || '') + ' ' + String(f.id || '');
      if (said.trim() && names.test(said)) kinds.add(/otp|one.?time/i.test(said) ? 'one-time code' : 'payment card');
    }
    out.sensitive = Array.from(kinds);
    try {
      const to = new URL(form.getAttribute('action') || '', location.href);
      if (to.host && to.host !== location.host) out.sendsTo = to.host;
    } catch (e) {}
  }
  const link = control.closest && control.closest('a[href][download],area[href][download]');
  out.download = !!link;
  const money = /(?:[$\u20ac\u00a3\u00a5\u20b9]\s?\d[\d.,]*\d|\d[\d.,]*\s?(?:\u20ac|\u00a3|\$|USD|EUR|GBP|CHF|JPY))/g;
  const found = new Set();
  const scan = (s) => { for (const m of (s || '').match(money) || []) if (found.size < 3) found.add(m.replace(/\s+/g, ' ')); };
  scan(name);
  if (form) scan((form.textContent || '').slice(0, 4000));  // no layout, unlike innerText
  out.amounts = Array.from(found);
  if (!whole && control.getBoundingClientRect) {
    const r = control.getBoundingClientRect();
    out.box = { x: r.x, y: r.y, width: r.width, height: r.height };
  }
  return out;
}"""


def rules_json(rules: dict[str, Any]) -> str:
    return json.dumps(rules, separators=(",", ":"))


async def facts(
    state: PageState, ref: str | None, key: str | None, rules: dict[str, Any]
) -> dict[str, Any] | None:
    """What ``ref`` (None: the focused element) is, for approval; None when the ref is
    not in the latest snapshot (the action itself then fails, saying so)."""
    info = None
    if ref is not None:
        try:
            _, info, _ = lookup(state, ref)
        except Exception:  # unknown or stale: the action reports it
            return None
    args = f"{rules_json(rules)}, {json.dumps(key)}"
    cdp = state.cdp
    if cdp is not None and (info is None or (not info.frame_chain and info.pw_ref)):
        if not state.runtime_enabled:
            await cdp.send("Runtime.enable")
            state.runtime_enabled = True
        context = state.utility_context()
        if context is not None:
            value = await _in_utility_world(cdp, context, info.pw_ref if info else None, args)
            if isinstance(value, dict):
                return value
    # A ref in an iframe, or no utility world of ours yet: through Playwright.
    if info is None:
        found = await state.page.evaluate(f"({FACTS_JS})(null, {args})")
    else:
        locator = (
            state.page.locator(f"aria-ref={info.pw_ref}")
            if info.pw_ref
            else (await resolve(state, ref or "", "check")).locator
        )
        found = await locator.evaluate(f"(el) => ({FACTS_JS})(el, {args})", timeout=2000)
    return found if isinstance(found, dict) else None


# Defined once per document in the utility world (``__bdFacts``): a call then sends a line,
# not the function's 6 KB to parse again. The element by its ref, else null (Playwright
# then looks); no ref: the focused element.
_DEFINE = f"""globalThis.__bdFacts = (ref, rules, key) => {{
  const el = ref === null ? null : ({_BY_REF})(ref);
  return ref !== null && !el ? null : ({FACTS_JS})(el, rules, key);
}}"""


async def _in_utility_world(cdp: Any, context: int, pw_ref: str | None, args: str) -> Any:
    call = f"globalThis.__bdFacts ? __bdFacts({json.dumps(pw_ref)}, {args}) : 'undefined'"
    for expression in (call, f"{_DEFINE}; {call}"):
        answer = await cdp.send(
            "Runtime.evaluate",
            {"expression": expression, "contextId": context, "returnByValue": True},
        )
        if "exceptionDetails" in answer:
            return None
        value = (answer.get("result") or {}).get("value")
        if value != "undefined":
            return value
    return None


async def picture(
    state: PageState, box: tuple[float, float, float, float]
) -> dict[str, Any] | None:
    """The page around ``box`` (viewport CSS pixels) as a PNG, and where the box is in it:
    for the person asked (the tray outlines it). None when the tab cannot be captured now
    (a background tab of the user's own Chrome may not paint)."""
    cdp = state.cdp
    if cdp is None:
        return None
    x, y, w, h = box
    try:
        metrics = await asyncio.wait_for(cdp.send("Page.getLayoutMetrics"), PICTURE_TIMEOUT)
        view = metrics.get("cssLayoutViewport") or metrics.get("layoutViewport") or {}
        page_x, page_y = float(view.get("pageX", 0)), float(view.get("pageY", 0))
        content = metrics.get("cssContentSize") or metrics.get("contentSize") or {}
        width = max(float(content.get("width", 0)), 1.0)
        height = max(float(content.get("height", 0)), 1.0)
        cw, ch = PICTURE_MAX
        left = max(0.0, min(x + page_x + w / 2 - cw / 2, width - cw))
        top = max(0.0, min(y + page_y + h / 2 - ch / 2, height - ch))
        left = min(left, max(0.0, x + page_x - PICTURE_MARGIN))
        top = min(top, max(0.0, y + page_y - PICTURE_MARGIN))
        clip_w, clip_h = min(cw, width - left), min(ch, height - top)
        shot = await asyncio.wait_for(
            cdp.send(
                "Page.captureScreenshot",
                {
                    "format": "png",
                    "captureBeyondViewport": True,
                    "clip": {"x": left, "y": top, "width": clip_w, "height": clip_h, "scale": 1},
                },
            ),
            PICTURE_TIMEOUT,
        )
    except Exception as exc:  # a background tab, a crash, a navigation: no picture
        log.debug("approval picture of %s: %r", state.target_id[:8], exc)
        return None
    return {
        "png": base64.b64decode(shot["data"]),
        "outline": (x + page_x - left, y + page_y - top, w, h),
        "size": (clip_w, clip_h),
    }
