"""A profile's logins, saved and loaded: cookies, and the site storage of its open origins.

``collect`` reads the profile's cookies (all of them: a browser keeps one jar) and, for
each origin a tab shows (main frames, http(s)), its localStorage, sessionStorage and
IndexedDB. Origins no tab shows are not read: Playwright's ``storage_state`` would open
a page for each, which in the user's own Chrome is a tab they see; with no tab open,
only cookies are saved.

``restore`` merges a saved state into a profile: cookies are added (a cookie of the same
name, domain and path is replaced, others stay); per origin, localStorage items are set
and IndexedDB databases filled in a tab of that origin, or in a helper tab whose requests
are answered with an empty page (nothing is fetched from the site), closed at the end.
sessionStorage belongs to a tab: it goes into the tabs that show the origin, and into
every document of that origin that starts with an empty sessionStorage later while the
engine stays connected (an init script), so the next tab the agent opens there has it.

Every wait on IndexedDB is bounded: opening a database whose upgrade another tab blocks
(it holds the database open and ignores ``versionchange``: Playwright's
``set_storage_state`` hangs there, playwright #42258) gives up after
``IDB_WAIT_MS`` and is reported in ``problems``; the rest of the state still loads.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import weakref
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from playwright.async_api import Error as PlaywrightError

from browserdeck.engine.state import origin_of

if TYPE_CHECKING:
    from playwright.async_api import BrowserContext, Page, Route

    from browserdeck.engine.connection import BrowserPool

log = logging.getLogger(__name__)

IDB_WAIT_MS = 2_000  # per database, in the page
PAGE_WAIT = 5.0  # per page read or write, in Python (the page may be stuck)
COOKIE_KEYS = ("name", "value", "domain", "path", "expires", "httpOnly", "secure", "sameSite")

_READ_STORAGE_JS = """() => {
  const dump = (s) => { const o = []; for (let i = 0; i < s.length; i++) { const k = s.key(i); o.push([k, s.getItem(k)]); } return o; };
  let local = [], session = [];
  try { local = dump(localStorage); } catch (e) {}
  try { session = dump(sessionStorage); } catch (e) {}
  return {local, session};
}"""

# IndexedDB values are structured-clone data: encoded as tagged JSON ($d a Date, $ab an
# ArrayBuffer ...), decoded by _WRITE_JS.
_READ_IDB_JS = """async (limit) => {
  const b64 = (buf) => { const a = new Uint8Array(buf); let s = ''; for (let i = 0; i < a.length; i += 32768) s += String.fromCharCode.apply(null, a.subarray(i, i + 32768)); return btoa(s); };
  const enc = async (v) => {
    if (v === null || typeof v === 'boolean' || typeof v === 'string') return v;
    if (v === undefined) return {$u: 1};
    if (typeof v === 'number') return Number.isFinite(v) ? v : {$n: String(v)};
    if (typeof v === 'bigint') return {$bi: String(v)};
    if (Array.isArray(v)) { const o = []; for (const x of v) o.push(await enc(x)); return o; }
    if (v instanceof Date) return {$d: v.getTime()};
    if (v instanceof RegExp) return {$re: [v.source, v.flags]};
    if (v instanceof ArrayBuffer) return {$ab: b64(v)};
    if (ArrayBuffer.isView(v)) return {$ta: [v.constructor.name, b64(v.buffer.slice(v.byteOffset, v.byteOffset + v.byteLength))]};
    if (typeof Blob !== 'undefined' && v instanceof Blob) return {$blob: [v.type, b64(await v.arrayBuffer())]};
    if (v instanceof Map) { const o = []; for (const [k, x] of v) o.push([await enc(k), await enc(x)]); return {$m: o}; }
    if (v instanceof Set) { const o = []; for (const x of v) o.push(await enc(x)); return {$s: o}; }
    const o = {}; for (const k of Object.keys(v)) o[k] = await enc(v[k]); return {$o: o};
  };
  const req = (r) => new Promise((ok, bad) => { r.onsuccess = () => ok(r.result); r.onerror = () => bad(r.error); });
  const dbs = [], problems = [];
  const infos = indexedDB.databases ? await indexedDB.databases() : [];
  for (const info of infos) {
    if (!info.name) continue;
    const db = await new Promise((ok) => {
      const r = indexedDB.open(info.name);
      const timer = setTimeout(() => ok(null), limit);
      r.onsuccess = () => { clearTimeout(timer); ok(r.result); };
      r.onerror = r.onblocked = () => { clearTimeout(timer); ok(null); };
      r.onupgradeneeded = () => r.transaction.abort();
    });
    if (!db) { problems.push(`IndexedDB ${JSON.stringify(info.name)} of ${location.origin} could not be opened within ${limit} ms`); continue; }
    try {
      const stores = [];
      for (const name of Array.from(db.objectStoreNames)) {
        const store = db.transaction(name, 'readonly').objectStore(name);
        const [keys, values] = await Promise.all([req(store.getAllKeys()), req(store.getAll())]);
        const indexes = Array.from(store.indexNames).map((n) => { const x = store.index(n); return {name: n, keyPath: x.keyPath, unique: x.unique, multiEntry: x.multiEntry}; });
        const records = [];
        for (let i = 0; i < keys.length; i++) records.push([await enc(keys[i]), await enc(values[i])]);
        stores.push({name, keyPath: store.keyPath, autoIncrement: store.autoIncrement, indexes, records});
      }
      dbs.push({name: db.name, version: db.version, stores});
    } finally { db.close(); }
  }
  return {dbs, problems};
}"""

_WRITE_JS = """async ([local, session, dbs, limit]) => {
  const problems = [];
  for (const [k, v] of local) localStorage.setItem(k, v);
  for (const [k, v] of session) sessionStorage.setItem(k, v);
  const b64d = (s) => { const b = atob(s), a = new Uint8Array(b.length); for (let i = 0; i < b.length; i++) a[i] = b.charCodeAt(i); return a.buffer; };
  const dec = (v) => {
    if (v === null || typeof v !== 'object') return v;
    if (Array.isArray(v)) return v.map(dec);
    if ('$o' in v) { const o = {}; for (const k of Object.keys(v.$o)) o[k] = dec(v.$o[k]); return o; }
    if ('$u' in v) return undefined;
    if ('$n' in v) return Number(v.$n);
    if ('$bi' in v) return BigInt(v.$bi);
    if ('$d' in v) return new Date(v.$d);
    if ('$re' in v) return new RegExp(v.$re[0], v.$re[1]);
    if ('$ab' in v) return b64d(v.$ab);
    if ('$ta' in v) { const C = globalThis[v.$ta[0]]; return C ? new C(b64d(v.$ta[1])) : b64d(v.$ta[1]); }
    if ('$blob' in v) return new Blob([b64d(v.$blob[1])], {type: v.$blob[0]});
    if ('$m' in v) return new Map(v.$m.map(([k, x]) => [dec(k), dec(x)]));
    if ('$s' in v) return new Set(v.$s.map(dec));
    return v;
  };
  const open = (name, version, saved) => new Promise((ok) => {
    let done = false, gaveUp = false;
    const finish = (x) => { if (!done) { done = true; clearTimeout(timer); ok(x); } };
    const timer = setTimeout(() => { gaveUp = true; finish({error: `timed out after ${limit} ms`}); }, limit);
    const r = version ? indexedDB.open(name, version) : indexedDB.open(name);
    r.onblocked = () => { gaveUp = true; finish({error: 'another tab holds it open and does not let it upgrade'}); };
    r.onerror = () => finish({error: String(r.error)});
    r.onupgradeneeded = () => {
      if (gaveUp) { r.transaction.abort(); return; }
      const db = r.result, tx = r.transaction;
      for (const s of saved.stores) {
        const store = db.objectStoreNames.contains(s.name) ? tx.objectStore(s.name)
          : db.createObjectStore(s.name, {keyPath: s.keyPath, autoIncrement: s.autoIncrement});
        for (const x of s.indexes) if (!store.indexNames.contains(x.name))
          store.createIndex(x.name, x.keyPath, {unique: x.unique, multiEntry: x.multiEntry});
      }
    };
    r.onsuccess = () => { if (gaveUp) r.result.close(); else finish({db: r.result}); };
  });
  for (const saved of dbs) {
    const where = `IndexedDB ${JSON.stringify(saved.name)} of ${location.origin}`;
    const infos = indexedDB.databases ? await indexedDB.databases() : [];
    const now = (infos.find((i) => i.name === saved.name) || {}).version || 0;
    let got = await open(saved.name, now < saved.version ? saved.version : 0, saved);
    if (got.db && saved.stores.some((s) => !got.db.objectStoreNames.contains(s.name))) {
      const next = got.db.version + 1;
      got.db.close();
      got = await open(saved.name, next, saved);
    }
    if (!got.db) { problems.push(`${where} was not restored: ${got.error}`); continue; }
    const db = got.db;
    try {
      for (const s of saved.stores) {
        await new Promise((ok, bad) => {
          const tx = db.transaction(s.name, 'readwrite'), store = tx.objectStore(s.name);
          for (const [k, v] of s.records) {
            if (s.keyPath === null) store.put(dec(v), dec(k)); else store.put(dec(v));
          }
          tx.oncomplete = ok; tx.onerror = () => bad(tx.error); tx.onabort = () => bad(tx.error);
        });
      }
    } catch (e) {
      problems.push(`${where} was restored in part: ${e}`);
    } finally { db.close(); }
  }
  return problems;
}"""

_SESSION_JS = """((origin, items) => {
  if (location.origin !== origin) return;
  try { if (sessionStorage.length) return; for (const [k, v] of items) sessionStorage.setItem(k, v); } catch (e) {}
})(%s, %s)"""

# Per context, per origin: the init script that gives new documents their sessionStorage.
_session_scripts: weakref.WeakKeyDictionary[BrowserContext, dict[str, Any]] = (
    weakref.WeakKeyDictionary()
)


def _pages(contexts: list[BrowserContext]) -> dict[str, list[Page]]:
    """The open tabs by the origin of their main frame (http(s) only)."""
    out: dict[str, list[Page]] = {}
    for context in contexts:
        for page in context.pages:
            if page.is_closed() or urlsplit(page.url).scheme not in ("http", "https"):
                continue
            out.setdefault(origin_of(page.url), []).append(page)
    return out


async def collect(pool: BrowserPool, cdp_url: str, headers: dict[str, str] | None) -> dict[str, Any]:
    """The profile's cookies and its open origins' storage; ``problems`` says what was not read."""
    conn = await pool.connection(cdp_url, headers)
    contexts = list(conn.browser.contexts)
    cookies: dict[tuple[str, str, str], dict[str, Any]] = {}
    for context in contexts:
        for c in await context.cookies():
            cookies[(c["name"], c["domain"], c["path"])] = {k: c[k] for k in COOKIE_KEYS if k in c}  # type: ignore[literal-required]
    problems: list[str] = []

    async def one(origin: str, pages: list[Page]) -> dict[str, Any] | None:
        local: list[list[str]] = []
        session: dict[str, str] = {}
        for page in pages:  # sessionStorage is per tab: every tab's items, the first wins
            try:
                got = await asyncio.wait_for(page.evaluate(_READ_STORAGE_JS), PAGE_WAIT)
            except (PlaywrightError, TimeoutError) as exc:
                problems.append(f"the storage of {origin} could not be read: {_first(exc)}")
                continue
            local = local or got["local"]
            for k, v in got["session"]:
                session.setdefault(k, v)
        dbs: list[Any] = []
        try:
            got = await asyncio.wait_for(pages[0].evaluate(_READ_IDB_JS, IDB_WAIT_MS), PAGE_WAIT)
            dbs = got["dbs"]
            problems.extend(got["problems"])
        except (PlaywrightError, TimeoutError) as exc:
            problems.append(f"the IndexedDB of {origin} could not be read: {_first(exc)}")
        if not (local or session or dbs):
            return None
        return {
            "origin": origin,
            "localStorage": local,
            "sessionStorage": [[k, v] for k, v in session.items()],
            "indexedDB": dbs,
        }

    found = await asyncio.gather(*(one(o, p) for o, p in _pages(contexts).items()))
    return {
        "cookies": list(cookies.values()),
        "origins": [o for o in found if o is not None],
        "problems": problems,
    }


async def restore(
    pool: BrowserPool, cdp_url: str, headers: dict[str, str] | None, state: dict[str, Any]
) -> list[str]:
    """Merge ``state`` into the profile; what could not be restored, and why."""
    conn = await pool.connection(cdp_url, headers)
    if not conn.browser.contexts:
        return ["the browser has no context to load into"]
    context = conn.browser.contexts[0]
    problems: list[str] = []
    cookies = [{k: c[k] for k in COOKIE_KEYS if k in c} for c in state.get("cookies") or []]
    if cookies:
        try:
            await context.add_cookies(cookies)  # type: ignore[arg-type]
        except PlaywrightError as exc:
            problems.append(f"cookies were not restored: {_first(exc)}")
    open_pages = _pages(list(conn.browser.contexts))
    helper: Page | None = None
    try:
        for saved in state.get("origins") or []:
            origin = saved["origin"]
            session = saved.get("sessionStorage") or []
            pages = open_pages.get(origin) or []
            if session:
                await _remember_session(context, origin, session)
            if pages:
                target = pages[0]
                for other in pages[1:]:  # the other tabs get sessionStorage only
                    problems += await _write(other, [], session, [])
            else:
                helper = helper or await _helper(context)
                with contextlib.suppress(PlaywrightError, TimeoutError):
                    await asyncio.wait_for(helper.goto(origin + "/"), PAGE_WAIT)
                if origin_of(helper.url) != origin:
                    problems.append(f"the storage of {origin} was not restored: its page did not open")
                    continue
                target, session = helper, []  # the helper tab closes: no sessionStorage there
            problems += await _write(
                target, saved.get("localStorage") or [], session, saved.get("indexedDB") or []
            )
    finally:
        if helper is not None:
            with contextlib.suppress(PlaywrightError):
                await helper.close()
    return problems


async def _helper(context: BrowserContext) -> Page:
    """A tab whose every request is answered with an empty page: a document of an origin
    without fetching anything from the site."""
    page = await context.new_page()

    async def blank(route: Route) -> None:
        await route.fulfill(status=200, content_type="text/html", body="<!doctype html>")

    await page.route("**/*", blank)
    return page


async def _write(page: Page, local: list[Any], session: list[Any], dbs: list[Any]) -> list[str]:
    origin = origin_of(page.url)
    # The page's bound is the JS one per database, plus the page's own slack.
    seconds = PAGE_WAIT + IDB_WAIT_MS / 1000 * 2 * len(dbs)
    try:
        got = await asyncio.wait_for(
            page.evaluate(_WRITE_JS, [local, session, dbs, IDB_WAIT_MS]), seconds
        )
    except TimeoutError:
        return [f"the storage of {origin} was not restored within {seconds:g} s"]
    except PlaywrightError as exc:
        return [f"the storage of {origin} was not restored: {_first(exc)}"]
    return [str(p) for p in got]


async def _remember_session(context: BrowserContext, origin: str, items: list[Any]) -> None:
    scripts = _session_scripts.setdefault(context, {})
    old = scripts.pop(origin, None)
    if old is not None:  # a later load of the same origin replaces it
        with contextlib.suppress(Exception):
            await old.__aexit__(None, None, None)
    script = _SESSION_JS % (json.dumps(origin), json.dumps(items))
    try:
        scripts[origin] = await context.add_init_script(script)
    except PlaywrightError as exc:
        log.info("sessionStorage of %s: no init script (%s)", origin, _first(exc))


def _first(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
