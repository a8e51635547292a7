"""Scripts' risky clicks and submits, caught in the page before they take effect.

``evaluate`` and ``browser_run_code`` run the agent's own code, which may click a "Pay"
button itself (``document.querySelector('#pay').click()``, or Playwright's ``page.click``
from run-code). Reading is free; a click, a form submission or a file set on an input
that the rules call risky (engine/risk.py judges it, as for the engine's own actions) is
held in the page and asked like any other action:

* a guard runs in an isolated world of its own (``WORLD``): the page's and the agent's
  scripts share the DOM with it but none of its objects, so they can neither see nor
  remove it. Its listeners on ``window`` (capture phase, added before the script runs)
  stop a risky ``click`` and ``submit`` (``preventDefault``, nothing else hears it), a
  form submitted by ``form.submit()`` (no submit event: the Navigation API's ``navigate``
  event, which carries the form data) and files set on a file input (``input``);
* it reports each to us through a binding only that world has
  (``Runtime.addBinding`` with ``executionContextName``); the person is asked (the
  approval addon's ``ask``), then the guard lets the very action go on (the element
  clicked, the form submitted, the files set again) or drops it;
* it is armed for the tab's document while the script call runs (and the tabs a script
  reaches from it: engine/approving.py) and for new documents the call navigates to (``Page.addScriptToEvaluateOnNewDocument``), and stays armed in
  those documents after the call (a script's delayed click is caught too). The engine's
  own actions on such a document pass it (they were asked before they ran).

What it does not see is said in docs/approval.md: a script that calls the site's API
itself (``fetch``), or code in a cross-origin iframe's process.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

from browserdeck.engine.risk import FACTS_JS, rules_json
from browserdeck.util import aio

if TYPE_CHECKING:
    from browserdeck.engine.state import PageState

log = logging.getLogger(__name__)

WORLD = "browserdeck-approval"
BINDING = "__browserdeckApproval"
# What the engine asks about one caught action: the page's report, the tab; True: let it go.
Ask = Callable[[dict[str, Any], "PageState"], Awaitable[bool]]

GUARD_JS = """(() => {
  const FACTS = %(facts)s;
  const report = globalThis[%(binding)s];
  const g = globalThis.__bdCatch || (globalThis.__bdCatch = {
    armed: false, passing: 0, seq: 0, held: new Map(), rules: null, allowed: new WeakSet() });
  g.rules = %(rules)s;
  g.armed = true;
  if (g.installed) return;
  g.installed = true;
  const risky = (f) => g.rules.all ? (f.activates || f.submits || f.file)
    : ((f.activates && (!!f.word || f.download)) || (f.submits && (f.sensitive.length > 0 || !!f.defaultWord)) || f.file);
  const hold = (kind, el, f, extra) => {
    const id = ++g.seq;
    g.held.set(id, Object.assign({ kind, el }, extra || {}));
    try { report(JSON.stringify({ id, kind, facts: f, files: (extra && extra.names) || [] })); }
    catch (e) { g.held.delete(id); }
  };
  const target = (e) => { const p = e.composedPath ? e.composedPath() : []; return p.length ? p[0] : e.target; };
  window.addEventListener('click', (e) => {
    if (!g.armed || g.passing) return;
    const el = target(e);
    if (!el || el.nodeType !== 1) return;
    const f = FACTS(el, g.rules, null);
    if (f.file || !risky(f)) return;  // a file input only opens a chooser; setting files is caught
    e.preventDefault(); e.stopImmediatePropagation();
    hold('click', el, f);
  }, true);
  window.addEventListener('submit', (e) => {
    if (!g.armed || g.passing) return;
    const form = e.target, by = e.submitter || null;
    const f = FACTS(by || form, g.rules, null);
    f.submits = true;
    if (!by) f.word = null;
    if (!risky(f)) return;
    e.preventDefault(); e.stopImmediatePropagation();
    hold('submit', form, f, { by });
  }, true);
  if (globalThis.navigation) navigation.addEventListener('navigate', (e) => {
    if (!g.armed || g.passing || !e.formData || !e.cancelable) return;
    const src = e.sourceElement || null;
    const form = src && src.localName === 'form' ? src : (src && src.form) || null;
    if (!form) return;
    // A submission allowed a moment ago navigates now (a task later): it goes on.
    if (g.allowed.has(form)) { g.allowed.delete(form); return; }
    const f = FACTS(form, g.rules, null);
    f.submits = true; f.word = null;
    if (!risky(f)) return;
    e.preventDefault();
    // Playwright waits for a navigation it saw requested; a same-document one ends that wait.
    history.replaceState(history.state, '');
    hold('formsubmit', form, f);
  });
  const files = (e) => {
    if (!g.armed || g.passing) return;
    const el = target(e);
    if (!el || el.localName !== 'input' || String(el.type).toLowerCase() !== 'file') return;
    if (!el.files || !el.files.length) { if (g.emptied === el) e.stopImmediatePropagation(); return; }
    const kept = el.files, names = Array.from(kept).slice(0, 20).map((x) => x.name);
    e.stopImmediatePropagation();
    g.emptied = el;
    el.value = '';
    hold('upload', el, FACTS(el, g.rules, null), { kept, names });
  };
  window.addEventListener('input', files, true);
  window.addEventListener('change', files, true);
  g.release = (id, allow) => {
    const h = g.held.get(id);
    if (!h) return false;
    g.held.delete(id);
    if (!allow) return true;
    const form = h.kind === 'click' ? (h.el.form || (h.el.closest && h.el.closest('form'))) : h.el;
    if (form && h.kind !== 'upload') g.allowed.add(form);
    g.passing++;
    try {
      if (h.kind === 'click') h.el.click();
      else if (h.kind === 'submit') {
        if (h.by && h.by.form === h.el) h.el.requestSubmit(h.by); else h.el.requestSubmit();
      } else if (h.kind === 'formsubmit') HTMLFormElement.prototype.submit.call(h.el);
      else if (h.kind === 'upload') {
        h.el.files = h.kept;
        h.el.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
        h.el.dispatchEvent(new Event('change', { bubbles: true }));
      }
    } finally { g.passing--; }
    return true;
  };
})()"""


def guard_source(rules: dict[str, Any]) -> str:
    return GUARD_JS % {
        "facts": FACTS_JS,
        "binding": json.dumps(BINDING),
        "rules": rules_json(rules),
    }


class TabCatch:
    """The guard of one tab: its binding, the script call it now serves, what it holds."""

    def __init__(self, state: PageState) -> None:
        self.state = weakref.ref(state)
        self.bound = False
        self.ask: Ask | None = None
        self.epoch: int | None = None  # the document (main_epoch) the guard is armed in
        self.script: str | None = None  # our script for new documents, while a call runs
        self.tasks: set[asyncio.Task[None]] = set()
        self.seen = 0  # reports received

    def live(self, state: PageState) -> bool:
        return self.epoch is not None and self.epoch == state.main_epoch

    def on_binding(self, event: dict[str, Any]) -> None:
        if event.get("name") != BINDING:
            return
        state = self.state()
        try:
            report = json.loads(event.get("payload") or "{}")
        except ValueError:
            return
        if state is None or not isinstance(report, dict):
            return
        self.seen += 1
        context = event.get("executionContextId")
        task = aio.create_task(self._decide(state, report, context), name="approval-caught")
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _decide(self, state: PageState, report: dict[str, Any], context: Any) -> None:
        allow = False
        ask = self.ask
        try:
            allow = await ask(report, state) if ask is not None else False
        except Exception:
            log.exception("asking about a script's action")
        finally:
            cdp = state.cdp
            if cdp is not None and isinstance(context, int):
                expression = f"globalThis.__bdCatch && __bdCatch.release({int(report.get('id', 0))}, {json.dumps(allow)})"
                with contextlib.suppress(Exception):  # the document may have gone meanwhile
                    await cdp.send(
                        "Runtime.evaluate", {"expression": expression, "contextId": context}
                    )


_TABS: weakref.WeakKeyDictionary[PageState, TabCatch] = weakref.WeakKeyDictionary()


def of(state: PageState) -> TabCatch | None:
    return _TABS.get(state)


async def arm(state: PageState, rules: dict[str, Any], ask: Ask) -> TabCatch:
    """Arm the guard in the tab's document and the documents it loads until ``disarm``."""
    cdp = state.cdp
    if cdp is None:
        raise RuntimeError("no CDP session of the tab")
    tab = _TABS.get(state)
    if tab is None:
        tab = _TABS[state] = TabCatch(state)
    tab.ask = ask
    if not state.runtime_enabled:
        await cdp.send("Runtime.enable")
        state.runtime_enabled = True
    if not tab.bound:
        cdp.on("Runtime.bindingCalled", tab.on_binding)
        await cdp.send("Runtime.addBinding", {"name": BINDING, "executionContextName": WORLD})
        tab.bound = True
    if tab.script is not None:  # a call still running on this tab armed it: renewed
        await _remove(state, tab.script)
    added = await cdp.send(
        "Page.addScriptToEvaluateOnNewDocument",
        {"source": guard_source(rules), "worldName": WORLD, "runImmediately": True},
    )
    tab.script = str(added.get("identifier"))
    tab.epoch = state.main_epoch
    return tab


async def settle(state: PageState, tab: TabCatch, within: float) -> None:
    """Wait until what the guard held by now is decided (each ask has its own limit).

    A round trip on our session first: the binding's reports reach us on it in order, so
    every report made before the script's answer is in by then."""
    cdp = state.cdp
    if cdp is not None and not state.page.is_closed():
        with contextlib.suppress(Exception):
            await asyncio.wait_for(
                cdp.send("Runtime.evaluate", {"expression": "0", "returnByValue": True}), 2.0
            )
    if tab.tasks:
        await asyncio.wait(set(tab.tasks), timeout=within)


async def disarm(state: PageState, tab: TabCatch) -> None:
    """The call ended: new documents are no longer armed (this one stays: see above)."""
    script, tab.script = tab.script, None
    tab.epoch = state.main_epoch
    if script is not None:
        await _remove(state, script)


async def _remove(state: PageState, script: str) -> None:
    cdp = state.cdp
    if cdp is None or state.page.is_closed():
        return
    with contextlib.suppress(Exception):
        await cdp.send("Page.removeScriptToEvaluateOnNewDocument", {"identifier": script})


@contextlib.asynccontextmanager
async def passing(state: PageState, engine_action: bool = True) -> AsyncIterator[None]:
    """The engine's own action on a tab whose document holds a guard: it passes (it was
    asked, or judged safe, before it ran). No round trip on any other tab, nor for a
    script (``engine_action=False``): the guard is there for it."""
    tab = _TABS.get(state) if engine_action else None
    cdp = state.cdp
    contexts = (
        [c for c, ctx in state.contexts.items() if ctx.get("name") == WORLD]
        if tab is not None and tab.live(state) and cdp is not None
        else []
    )
    if not contexts or cdp is None:
        yield
        return
    await _each(cdp, contexts, "globalThis.__bdCatch && __bdCatch.passing++")
    try:
        yield
    finally:
        await _each(cdp, contexts, "globalThis.__bdCatch && __bdCatch.passing--")


async def _each(cdp: Any, contexts: list[int], expression: str) -> None:
    for context in contexts:
        with contextlib.suppress(Exception):
            await cdp.send("Runtime.evaluate", {"expression": expression, "contextId": context})
