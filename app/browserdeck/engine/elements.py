"""What a ref points at, for the front door's addons: role and name, box, form fields.

Role and name come from the tab's latest snapshot (no round trip). With ``detail`` the
element is found on the page (as an action would find it) for its box and the fields of
its form; a field's value is never read, only whether it holds one (it may be a
password or a secret).
"""

from __future__ import annotations

from browserdeck.door.call import Element, FormField
from browserdeck.engine.refs import normalize, resolve
from browserdeck.engine.state import PageState
from browserdeck.errors import BrowserdeckError
from browserdeck.util.labels import Rect

# The fields of the element's form (or of the form around it): at most 100.
_FORM_JS = """(el) => {
  const form = el.form || el.closest('form');
  if (!form) return null;
  const label = (f) => (f.labels && f.labels[0] ? f.labels[0].textContent.trim() : '')
    || f.getAttribute('aria-label') || f.name || '';
  return Array.from(form.elements).slice(0, 100).map((f) => ({
    tag: f.localName,
    type: f.localName === 'input' || f.localName === 'button' ? (f.type || '') : '',
    name: label(f).slice(0, 200),
    filled: f.type === 'checkbox' || f.type === 'radio' ? f.checked
      : f.localName === 'button' ? false : !!f.value,
  }));
}"""


async def describe(state: PageState, raw: str, *, detail: bool = False) -> Element | None:
    """``raw`` (a ref) on this tab; None when the latest snapshot has no such ref."""
    table = state.table
    try:
        ref = normalize(raw)
    except BrowserdeckError:
        return None
    info = table.refs.get(ref) if table is not None else None
    if info is None:
        return None
    if not detail:
        return Element(ref, info.role, info.name)
    try:
        found = await resolve(state, ref, "describe")
        box = await found.locator.bounding_box(timeout=2000)
        fields = await found.locator.evaluate(_FORM_JS, timeout=2000)
    except Exception:  # gone or stale since the snapshot: what the snapshot said
        return Element(ref, info.role, info.name)
    return Element(
        ref,
        info.role,
        info.name,
        Rect(box["x"], box["y"], box["width"], box["height"]) if box else None,
        tuple(
            FormField(str(f["tag"]), str(f["type"]), str(f["name"]), bool(f["filled"]))
            for f in fields
        )
        if isinstance(fields, list)
        else None,
    )
