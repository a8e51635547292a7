"""The engine's side of the cookie and web-storage requests (storage.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from browserdeck.engine import storage as s
from browserdeck.engine.errors import playwright_errors
from browserdeck.engine.state import origin_of
from browserdeck.errors import Conflict
from browserdeck.results import Cookie, StorageItem

if TYPE_CHECKING:
    from playwright._impl._api_structures import SetCookieParam

    from browserdeck.engine.state import PageState

STORAGE_TIMEOUT_MS = 5_000

# One function for every web-storage call, in the page's main frame.
_WEB_STORAGE_JS = """([area, op, key, value]) => {
  const store = area === 'local' ? localStorage : sessionStorage;
  if (op === 'list') {
    const out = [];
    for (let i = 0; i < store.length; i++) { const k = store.key(i); out.push([k, store.getItem(k)]); }
    return out;
  }
  if (op === 'get') { const v = store.getItem(key); return v === null ? [] : [[key, v]]; }
  if (op === 'set') { store.setItem(key, value); return []; }
  if (op === 'delete') { const had = store.getItem(key) !== null; store.removeItem(key); return had ? 1 : 0; }
  const n = store.length; store.clear(); return n;
}"""


def _web_page(url: str) -> bool:
    return urlsplit(url).scheme in ("http", "https")


async def run(state: PageState, request: s.AnyStorage) -> dict[str, Any]:
    page = state.page
    out: dict[str, Any] = {
        "ok": True,
        "kind": request.kind,
        "targetId": state.target_id,
        "url": page.url,
    }
    with playwright_errors(request.kind.replace("_", " "), STORAGE_TIMEOUT_MS):
        if isinstance(request, s.StorageList | s.StorageGet | s.StorageSet | s.StorageDelete | s.StorageClear):
            await _web_storage(state, request, out)
        else:
            await _cookies(state, request, out)
    return out


async def _page_cookies(state: PageState, every: bool) -> list[dict[str, Any]]:
    context, url = state.page.context, state.page.url
    if every:
        return [dict(c) for c in await context.cookies()]
    # cookies([]) would be every cookie: a page with no web address gets none.
    return [dict(c) for c in await context.cookies([url])] if _web_page(url) else []


def _cookie(c: dict[str, Any]) -> Cookie:
    return Cookie(
        name=c["name"],
        value=c["value"],
        domain=c["domain"],
        path=c["path"],
        expires=c.get("expires", -1),
        http_only=c.get("httpOnly", False),
        secure=c.get("secure", False),
        same_site=c.get("sameSite"),
    )


async def _cookies(state: PageState, request: s.AnyStorage, out: dict[str, Any]) -> None:
    context = state.page.context
    if isinstance(request, s.CookieList):
        found = await _page_cookies(state, request.all)
        if request.domain:
            found = [c for c in found if request.domain in c["domain"]]
        if request.path:
            found = [c for c in found if c["path"].startswith(request.path)]
        out["cookies"] = [_cookie(c) for c in found]
    elif isinstance(request, s.CookieGet):
        # The page's own first (a name may be set by several domains), then the profile's.
        mine = [c for c in await _page_cookies(state, False) if c["name"] == request.name]
        found = mine or [c for c in await _page_cookies(state, True) if c["name"] == request.name]
        out["cookies"] = [_cookie(c) for c in found]
        out["found"] = bool(found)
    elif isinstance(request, s.CookieSet):
        host = urlsplit(state.page.url).hostname
        domain = request.domain or host
        if not domain:
            raise Conflict(
                "this page has no host to set a cookie for",
                hint="navigate to a site first, or give domain",
                code="no_origin",
            )
        cookie: SetCookieParam = {
            "name": request.name,
            "value": request.value,
            "domain": domain,
            "path": request.path,
            "httpOnly": request.http_only,
            "secure": request.secure,
        }
        if request.expires is not None:
            cookie["expires"] = request.expires
        if request.same_site is not None:
            cookie["sameSite"] = request.same_site
        await context.add_cookies([cookie])
    elif isinstance(request, s.CookieDelete):
        before = [c for c in await _page_cookies(state, True) if c["name"] == request.name]
        if request.domain:
            before = [c for c in before if c["domain"].lstrip(".") == request.domain.lstrip(".")]
        for c in before:
            await context.clear_cookies(name=c["name"], domain=c["domain"], path=c["path"])
        out["removed"] = len(before)
    elif isinstance(request, s.CookieClear):
        if request.all:
            out["removed"] = len(await context.cookies())
            await context.clear_cookies()
        else:
            mine = await _page_cookies(state, False)
            for c in mine:
                await context.clear_cookies(name=c["name"], domain=c["domain"], path=c["path"])
            out["removed"] = len(mine)


async def _web_storage(state: PageState, request: s.AnyStorage, out: dict[str, Any]) -> None:
    page = state.page
    origin = origin_of(page.url)
    if not _web_page(page.url) or not origin:
        raise Conflict(
            f"this page ({page.url or 'about:blank'}) has no web origin of its own, so it has no "
            "localStorage or sessionStorage",
            hint="navigate to the site first",
            code="no_origin",
        )
    area = getattr(request, "area", "local")
    op = request.kind.removeprefix("storage_")
    key = getattr(request, "key", None)
    value = getattr(request, "value", None)
    found = await page.evaluate(_WEB_STORAGE_JS, [area, op, key, value])
    out["origin"] = origin
    if op in ("list", "get"):
        out["items"] = [StorageItem(key=k, value=v) for k, v in found]
        if op == "get":
            out["found"] = bool(found)
    elif op in ("delete", "clear"):
        out["removed"] = int(found)
