"""Page-side JavaScript for the DOM exploration tools (unibrowse's set) and the Phoenix extras.

Each tool runs through ``POST /act {kind: "evaluate", fn, ref?, world: "isolated"}``:
in a world of browserdeck's own (engine/isolated.py), so a page that replaces
``String.prototype.trim`` or adds ``Object.prototype.toJSON`` changes nothing these
functions report. With a ``ref`` the function gets that element, otherwise it finds its
own by CSS selector. The
arguments are embedded as JSON, never spliced in as code. Every function returns
plain JSON and bounds what it collects, so a huge page cannot flood the agent.
"""

from __future__ import annotations

import json
from typing import Any

# Shared helpers, prepended to every snippet.
_PRELUDE = r"""
const __clip = (s, n) => { s = (s || '').replace(/\s+/g, ' ').trim(); return s.length > n ? s.slice(0, n) + '…' : s; };
const __visible = (el) => {
  if (!el || !el.isConnected) return false;
  if (el.checkVisibility) return el.checkVisibility({checkOpacity: true, checkVisibilityCSS: true});
  const r = el.getBoundingClientRect(); const st = getComputedStyle(el);
  return r.width > 0 && r.height > 0 && st.visibility !== 'hidden' && st.display !== 'none';
};
const __path = (el) => {
  if (!(el instanceof Element)) return '';
  if (el.id) return '#' + CSS.escape(el.id);
  const parts = [];
  while (el && el.nodeType === 1 && parts.length < 5) {
    let part = el.localName;
    if (el.id) { parts.unshift('#' + CSS.escape(el.id)); break; }
    const parent = el.parentElement;
    if (parent) {
      const same = Array.from(parent.children).filter(c => c.localName === el.localName);
      if (same.length > 1) part += ':nth-of-type(' + (same.indexOf(el) + 1) + ')';
    }
    parts.unshift(part); el = parent;
  }
  return parts.join(' > ');
};
const __pick = (el, a) => {
  if (el) return el;
  if (!a.selector) throw new Error('give a ref or a CSS selector');
  const found = document.querySelector(a.selector);
  if (!found) throw new Error('no element matches ' + JSON.stringify(a.selector));
  return found;
};
const __all = (a) => { try { return Array.from(document.querySelectorAll(a.selector)); }
  catch (e) { throw new Error('invalid CSS selector ' + JSON.stringify(a.selector)); } };
"""

QUERY_DOM = r"""(el, a) => {
  const els = el ? [el] : __all(a);
  return {total: els.length, elements: els.slice(0, a.limit).map((e, i) => ({
    i, tag: e.localName, id: e.id || undefined,
    class: (typeof e.className === 'string' && e.className) ? __clip(e.className, 80) : undefined,
    text: __clip(e.innerText ?? e.textContent, 100) || undefined,
    visible: __visible(e), path: __path(e),
    href: e.getAttribute('href') || undefined, name: e.getAttribute('name') || undefined,
    type: e.getAttribute('type') || undefined,
  }))};
}"""

VISIBLE_TEXT = r"""(el, a) => {
  const root = el || (a.selector ? __pick(null, a) : document.body);
  const out = []; let size = 0;
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  let last = null;
  while (walker.nextNode()) {
    const node = walker.currentNode; const parent = node.parentElement;
    if (!parent || ['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE'].includes(parent.tagName)) continue;
    const text = node.textContent.replace(/\s+/g, ' ').trim();
    if (!text || !__visible(parent)) continue;
    const block = parent.closest('p,li,h1,h2,h3,h4,h5,h6,td,th,div,section,article,label,button,a') || parent;
    if (block === last) out[out.length - 1] += ' ' + text; else out.push(text);
    last = block; size += text.length + 1;
    if (size > a.maxChars) break;
  }
  const text = out.join('\n');
  return {chars: text.length, truncated: size > a.maxChars, text: text.slice(0, a.maxChars)};
}"""

COMPUTED_STYLES = r"""(el, a) => {
  el = __pick(el, a);
  const st = getComputedStyle(el);
  const props = a.properties && a.properties.length ? a.properties : [
    'display', 'visibility', 'opacity', 'position', 'z-index', 'width', 'height', 'margin',
    'padding', 'color', 'background-color', 'font-family', 'font-size', 'font-weight',
    'line-height', 'border', 'overflow', 'cursor', 'pointer-events'];
  const out = {};
  for (const p of props) out[p] = st.getPropertyValue(p);
  return {element: __path(el), styles: out};
}"""

CHECK_VISIBILITY = r"""(el, a) => {
  el = __pick(el, a);
  const r = el.getBoundingClientRect(); const st = getComputedStyle(el);
  const inViewport = r.bottom > 0 && r.right > 0 && r.top < innerHeight && r.left < innerWidth;
  let coveredBy = null;
  if (inViewport && r.width > 0 && r.height > 0) {
    const x = Math.min(Math.max(r.left + r.width / 2, 0), innerWidth - 1);
    const y = Math.min(Math.max(r.top + r.height / 2, 0), innerHeight - 1);
    const top = document.elementFromPoint(x, y);
    if (top && top !== el && !el.contains(top) && !top.contains(el)) coveredBy = __path(top);
  }
  return {element: __path(el), visible: __visible(el), inViewport,
          box: {x: Math.round(r.x), y: Math.round(r.y), width: Math.round(r.width), height: Math.round(r.height)},
          display: st.display, visibility: st.visibility, opacity: st.opacity, coveredBy};
}"""

ATTRIBUTES = r"""(el, a) => {
  el = __pick(el, a);
  const attrs = {};
  for (const at of el.attributes) attrs[at.name] = __clip(at.value, 300);
  return {element: __path(el), tag: el.localName, attributes: attrs};
}"""

COUNT_ELEMENTS = r"""(el, a) => {
  const out = {};
  for (const sel of a.selectors) {
    try { out[sel] = document.querySelectorAll(sel).length; }
    catch (e) { out[sel] = 'invalid selector'; }
  }
  return out;
}"""

PAGE_METADATA = r"""(el, a) => {
  const meta = {};
  for (const m of document.querySelectorAll('meta[name], meta[property]')) {
    const key = m.getAttribute('name') || m.getAttribute('property');
    if (Object.keys(meta).length < 40) meta[key] = __clip(m.getAttribute('content'), 300);
  }
  const link = (rel) => document.querySelector(`link[rel="${rel}"]`)?.href;
  return {url: location.href, title: document.title, lang: document.documentElement.lang || undefined,
          charset: document.characterSet, readyState: document.readyState,
          canonical: link('canonical'), icon: link('icon'), meta,
          headings: Array.from(document.querySelectorAll('h1, h2')).slice(0, 20).map(h => h.localName + ': ' + __clip(h.innerText, 100)),
          counts: {links: document.links.length, forms: document.forms.length, images: document.images.length,
                   scripts: document.scripts.length, iframes: document.querySelectorAll('iframe').length}};
}"""

FIND_BY_TEXT = r"""(el, a) => {
  const needle = a.exact ? a.text : a.text.toLowerCase();
  const hits = [];
  const walker = document.createTreeWalker(el || document.body, NodeFilter.SHOW_ELEMENT);
  let total = 0;
  while (walker.nextNode()) {
    const e = walker.currentNode;
    if (['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE'].includes(e.tagName)) continue;
    const own = Array.from(e.childNodes).filter(n => n.nodeType === 3).map(n => n.textContent).join(' ').replace(/\s+/g, ' ').trim();
    const label = own || e.getAttribute('aria-label') || e.getAttribute('placeholder') || e.getAttribute('value') || '';
    if (!label) continue;
    const hay = a.exact ? label : label.toLowerCase();
    if (a.exact ? hay !== needle : !hay.includes(needle)) continue;
    total++;
    if (hits.length < a.limit) hits.push({tag: e.localName, text: __clip(label, 120), visible: __visible(e), path: __path(e)});
  }
  return {total, elements: hits};
}"""

FORM_VALUES = r"""(el, a) => {
  const forms = el ? [el] : (a.selector ? __all(a) : Array.from(document.forms));
  const read = (f) => {
    const fields = [];
    const els = f.elements ? Array.from(f.elements) : Array.from(f.querySelectorAll('input,select,textarea,button'));
    for (const e of els.slice(0, 200)) {
      const t = (e.type || e.localName || '').toLowerCase();
      if (['submit', 'button', 'reset', 'fieldset'].includes(t)) continue;
      const field = {name: e.name || e.id || undefined, type: t};
      if (t === 'checkbox' || t === 'radio') field.checked = e.checked, field.value = e.value;
      else if (e.localName === 'select') field.value = Array.from(e.selectedOptions).map(o => o.value || o.text);
      else if (t === 'password') field.value = e.value ? '•'.repeat(Math.min(e.value.length, 12)) : '';
      else if (t === 'file') field.value = Array.from(e.files || []).map(f => f.name);
      else field.value = __clip(e.value, 500);
      if (e.disabled) field.disabled = true;
      if (e.required) field.required = true;
      if (e.validity && !e.validity.valid) field.invalid = e.validationMessage;
      fields.push(field);
    }
    return {form: __path(f), action: f.action || undefined, method: f.method || undefined, fields};
  };
  return forms.slice(0, 20).map(read);
}"""

ELEMENT_STATE = r"""(el, a) => {
  el = __pick(el, a);
  const aria = (n) => el.getAttribute('aria-' + n) ?? undefined;
  return {element: __path(el), tag: el.localName, visible: __visible(el),
          enabled: !(el.disabled || aria('disabled') === 'true'),
          editable: !!(el.isContentEditable || (('value' in el) && !el.readOnly && !el.disabled)),
          focused: document.activeElement === el, checked: ('checked' in el) ? el.checked : aria('checked'),
          selected: ('selected' in el) ? el.selected : aria('selected'), expanded: aria('expanded'),
          required: ('required' in el) ? el.required : undefined, readOnly: ('readOnly' in el) ? el.readOnly : undefined,
          value: ('value' in el) && el.type !== 'password' ? __clip(String(el.value), 300) : undefined,
          text: __clip(el.innerText, 200) || undefined};
}"""

SERVICE_WORKERS = r"""async (el, a) => {
  if (!('serviceWorker' in navigator)) return {supported: false, why: 'no navigator.serviceWorker (needs a secure context: https or localhost)'};
  const regs = await navigator.serviceWorker.getRegistrations();
  const state = (w) => w ? {scriptURL: w.scriptURL, state: w.state} : undefined;
  return {supported: true, controlled: !!navigator.serviceWorker.controller,
          controller: navigator.serviceWorker.controller?.scriptURL,
          registrations: regs.map(r => ({scope: r.scope, active: state(r.active), waiting: state(r.waiting),
                                         installing: state(r.installing), updateViaCache: r.updateViaCache}))};
}"""

NETWORK_SOURCES = r"""(el, a) => {
  const entries = performance.getEntriesByType('navigation').concat(performance.getEntriesByType('resource'));
  const source = (e) => {
    if (e.workerStart > 0 && e.transferSize === 0 && e.deliveryType !== 'cache') return 'service-worker';
    if (e.deliveryType === 'cache' || (e.transferSize === 0 && e.decodedBodySize > 0)) return 'cache';
    if (e.workerStart > 0) return 'service-worker(network)';
    return 'network';
  };
  const rows = entries.map(e => ({url: e.name, type: e.initiatorType || e.entryType, source: source(e),
                                   transferSize: e.transferSize, ms: Math.round(e.duration)}));
  const summary = {};
  for (const r of rows) summary[r.source] = (summary[r.source] || 0) + 1;
  return {total: rows.length, summary, requests: rows.slice(-a.limit)};
}"""

HISTORY_BACK = "() => { history.back(); }"
HISTORY_FORWARD = "() => { history.forward(); }"


def function(body: str, args: dict[str, Any], *, with_element: bool) -> str:
    """A complete page function for ``evaluate``: the prelude, the body, the arguments."""
    payload = json.dumps(args)
    if with_element:
        return f"(el) => {{ {_PRELUDE}\n return ({body})(el, {payload}); }}"
    return f"() => {{ {_PRELUDE}\n return ({body})(null, {payload}); }}"
