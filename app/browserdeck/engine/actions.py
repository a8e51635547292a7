"""Acting on a tab: the /act kinds, navigation, console and PDF (arming: arming.py).

Why one module: each section is the engine's side of one request model (act kinds,
navigate, console, PDF), each a few functions on a ``PageState``; they share the
timeout clamps, ``write_artifact`` and the Playwright error translation, and
``engine.py`` is the one caller.
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from browserdeck import artifacts
from browserdeck.engine import consequences, editing, isolated, placeholders
from browserdeck.engine import options as o
from browserdeck.engine.acts import ScrollAct
from browserdeck.engine.errors import playwright_errors
from browserdeck.engine.refs import resolve
from browserdeck.engine.state import PageState
from browserdeck.errors import (
    FULL_PAGE,
    ActionTimeout,
    BrowserdeckError,
    Conflict,
    Hint,
    InvalidInput,
    Unavailable,
)
from browserdeck.policy import urls
from browserdeck.results import ConsoleCounts, FilledField, SavedDownload, Size
from browserdeck.util import files, paths

if TYPE_CHECKING:
    from playwright.async_api import Download, Response

EVALUATE_MAX_CHARS = 100_000
CHECK_ROLES = frozenset({"checkbox", "radio", "switch", "menuitemcheckbox", "menuitemradio"})
SELECT_ROLES = frozenset({"combobox", "listbox"})


# --- /act ------------------------------------------------------------------------


async def act(
    state: PageState,
    action: o.AnyAct,
) -> dict[str, Any]:
    page = state.page
    timeout = o.action_timeout(action.timeout_ms)
    before = (state.main_epoch, page.url)
    out: dict[str, Any] = {"ok": True, "kind": action.kind, "targetId": state.target_id}
    watch = None
    if isinstance(action, WAITED_ACTS):
        bound = consequences.DEFAULT_WAIT_MS if action.wait_ms is None else action.wait_ms
        scrolls = isinstance(action, ScrollAct) or (
            isinstance(action, o.PressAct)
            and action.key.rsplit("+", 1)[-1] in consequences.SCROLL_KEYS
        )
        watch = await consequences.watch(state, bound, scrolls=scrolls)
    try:
        await _dispatch(state, action, timeout, out)
        if watch is not None and not page.is_closed():
            out.update(await watch.settle())
    finally:
        if watch is not None:
            watch.stop()
    if out.get("closed"):
        return out

    if not page.is_closed():
        out["url"] = page.url
        if (state.main_epoch, page.url) != before:
            out["navigated"] = True
            if state.main_epoch != before[0]:
                out["note"] = (
                    "the page loaded a new document: refs from earlier snapshots "
                    "are stale; take a new snapshot"
                )
    return out


# Actions whose consequences (navigation, requests) are awaited (engine/consequences.py).
WAITED_ACTS = (o.ClickAct, o.TypeAct, o.PressAct, o.DragAct, o.SelectAct, o.FillAct, ScrollAct)


async def _dispatch(
    state: PageState, action: o.AnyAct, timeout: int, out: dict[str, Any]
) -> None:
    page = state.page
    if isinstance(action, o.ClickAct):
        r = await resolve(state, action.ref, "click")
        verb = "double-click" if action.double_click else "click"
        with playwright_errors(r.what(verb), timeout):
            if action.double_click:
                await r.locator.dblclick(
                    button=action.button, modifiers=action.modifiers or None, timeout=timeout
                )
            else:
                await r.locator.click(
                    button=action.button, modifiers=action.modifiers or None, timeout=timeout
                )
        out["ref"] = r.ref
    elif isinstance(action, o.TypeAct):
        out["ref"] = await editing.type_text(state, action, timeout)
    elif isinstance(action, o.PressAct):
        await _press(state, action, timeout)
    elif isinstance(action, o.HoverAct):
        r = await resolve(state, action.ref, "hover")
        with playwright_errors(r.what("hover"), timeout):
            await r.locator.hover(timeout=timeout)
        out["ref"] = r.ref
    elif isinstance(action, o.DragAct):
        start = await resolve(state, action.start_ref, "drag")
        end = await resolve(state, action.end_ref, "drop on")
        with playwright_errors(f"drag {start.ref} to {end.ref}", timeout):
            await start.locator.drag_to(end.locator, timeout=timeout)
    elif isinstance(action, o.SelectAct):
        r = await resolve(state, action.ref, "select in")
        with playwright_errors(r.what("select in"), timeout):
            out["selected"] = await r.locator.select_option(action.values, timeout=timeout)
        out["ref"] = r.ref
    elif isinstance(action, o.FillAct):
        out["filled"] = [await _fill_field(state, f, timeout) for f in action.fields]
    elif isinstance(action, o.ResizeAct):
        with playwright_errors("resize"):
            await page.set_viewport_size({"width": action.width, "height": action.height})
        out["viewport"] = Size(width=action.width, height=action.height)
    elif isinstance(action, o.WaitAct):
        out["waited"] = await _wait(state, action, timeout)
    elif isinstance(action, o.EvaluateAct):
        out.update(await _evaluate(state, action, timeout))
    elif isinstance(action, o.CloseAct):
        state.cancel_arms()
        with playwright_errors("close the tab"):
            await page.close()
        out["closed"] = True
    elif isinstance(action, o.ScrollIntoViewAct):
        r = await resolve(state, action.ref, "scroll to")
        with playwright_errors(r.what("scroll to"), timeout):
            await r.locator.scroll_into_view_if_needed(timeout=timeout)
        out["ref"] = r.ref
    elif isinstance(action, ScrollAct):
        await _scroll(state, action, timeout, out)
    else:  # pragma: no cover - the model's discriminator rules this out
        raise InvalidInput(f"unknown act kind {action!r}")


async def _scroll(state: PageState, action: ScrollAct, timeout: int, out: dict[str, Any]) -> None:
    """The wheel over the element's middle (brought into view), else the viewport's: it
    scrolls what a person's wheel would, the element's scroll box or the page, and the
    page hears it as they would (wheel, then scroll events)."""
    page = state.page
    if action.ref:
        r = await resolve(state, action.ref, "scroll")
        with playwright_errors(r.what("scroll"), timeout):
            await r.locator.scroll_into_view_if_needed(timeout=timeout)
            box = await r.locator.bounding_box(timeout=timeout)
        if box is None:
            raise Conflict(
                f"cannot scroll {r.ref} ({r.info.describe()}): it takes no room on the page",
                hint="scroll the page (no ref), or an element that is shown",
                code="not_visible",
            )
        x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        out["ref"] = r.ref
    else:
        with playwright_errors("scroll the page", timeout):
            x, y = await page.evaluate("[innerWidth / 2, innerHeight / 2]")
    with playwright_errors("scroll", timeout):
        await page.mouse.move(x, y)
        await page.mouse.wheel(action.delta_x, action.delta_y)


async def _press(state: PageState, action: o.PressAct, timeout: int) -> None:
    try:
        if action.ref:
            r = await resolve(state, action.ref, "press a key in")
            with playwright_errors(r.what(f"press {action.key} in"), timeout):
                if placeholders.present(action.key):  # a secret, typed key by key
                    async with placeholders.typed(state, action.key, r, timeout) as keys:
                        await r.input.press_sequentially(keys, timeout=timeout)
                else:
                    await r.input.press(action.key, timeout=timeout)
        else:
            placeholders.needs_ref(action.key)
            with playwright_errors(f"press {action.key}", timeout):
                await state.page.keyboard.press(action.key)
    except BrowserdeckError as exc:
        if "unknown key" in exc.message.lower():
            raise InvalidInput(
                f"unknown key {action.key!r}",
                hint="use names like Enter, Tab, Escape, ArrowDown, Backspace, a, "
                "Control+A, Shift+Tab",
            ) from None
        raise


def _truthy(value: str | bool | int | float, ref: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return bool(value)
    low = value.strip().lower()
    if low in ("true", "on", "yes", "1", "checked", "x"):
        return True
    if low in ("false", "off", "no", "0", "", "unchecked"):
        return False
    raise InvalidInput(
        f"field {ref}: {value!r} is not a checkbox/radio value", hint="use true or false"
    )


async def _fill_field(state: PageState, field: o.FillField, timeout: int) -> FilledField:
    r = await resolve(state, field.ref, "fill")
    kind = field.type or (
        "checkbox"
        if r.info.role in CHECK_ROLES
        else "select"
        if r.info.role in SELECT_ROLES
        else "text"
    )
    with playwright_errors(r.what("fill"), timeout):
        if kind in ("checkbox", "radio"):
            checked = _truthy(field.value, r.ref)
            await r.locator.set_checked(checked, timeout=timeout)
            return FilledField(ref=r.ref, checked=checked)
        if kind == "select":
            try:
                chosen = await r.locator.select_option(str(field.value), timeout=timeout)
                return FilledField(ref=r.ref, selected=chosen)
            except PlaywrightError as exc:
                if field.type == "select" or "not a <select>" not in str(exc):
                    raise
                # An ARIA combobox that is really a text input (autocomplete): type instead.
        async with placeholders.typed(state, str(field.value), r, timeout) as text:
            await editing.fill(r, text, timeout)
        return FilledField(ref=r.ref, value=str(field.value))  # a placeholder stays one


async def _wait(state: PageState, action: o.WaitAct, timeout: int) -> list[str]:
    page = state.page
    done: list[str] = []
    if action.time_ms is not None:
        await asyncio.sleep(action.time_ms / 1000)
        done.append(f"timeMs={action.time_ms}")
    if action.text is not None:
        with playwright_errors(f"wait for text {action.text!r}", timeout):
            await page.get_by_text(action.text).first.wait_for(state="visible", timeout=timeout)
        done.append("text")
    if action.text_gone is not None:
        with playwright_errors(f"wait for text {action.text_gone!r} to go", timeout):
            await (
                page.get_by_text(action.text_gone)
                .filter(visible=True)
                .first.wait_for(state="hidden", timeout=timeout)
            )
        done.append("textGone")
    if action.selector is not None:
        with playwright_errors(f"wait for {action.selector!r}", timeout):
            await page.locator(action.selector).first.wait_for(state="visible", timeout=timeout)
        done.append("selector")
    if action.url is not None:
        with playwright_errors(f"wait for URL {action.url!r}", timeout):
            await page.wait_for_url(action.url, timeout=timeout)
        done.append("url")
    if action.load_state is not None:
        with playwright_errors(f"wait for {action.load_state}", timeout):
            await page.wait_for_load_state(action.load_state, timeout=timeout)
        done.append("loadState")
    if action.fn is not None:
        with playwright_errors("wait for the function", timeout):
            await page.wait_for_function(action.fn, timeout=timeout)
        done.append("fn")
    if action.network_quiet:
        await consequences.network_quiet(state, action.quiet_ms, timeout)
        done.append("networkQuiet")
    if not done:
        raise InvalidInput(
            "wait needs one of timeMs, text, textGone, selector, url, loadState, fn, "
            "networkQuiet",
            hint='e.g. {"kind": "wait", "text": "Saved"}',
        )
    return done


def _jsonable(value: Any) -> tuple[Any, bool]:
    try:
        text = json.dumps(value, default=str, ensure_ascii=False)
    except ValueError:  # Playwright hands a self-referencing object back as a cyclic dict
        raise InvalidInput(
            "evaluate: the result refers to itself (a circular structure), so it cannot be "
            "returned as JSON",
            hint="return plain data: pick the fields you need, e.g. "
            "'() => ({title: document.title})'",
            code="script_error",
        ) from None
    if len(text) <= EVALUATE_MAX_CHARS:
        return json.loads(text), False
    return text[:EVALUATE_MAX_CHARS], True


async def _evaluate(state: PageState, action: o.EvaluateAct, timeout: int) -> dict[str, Any]:
    what = "evaluate" + (f" on {action.ref}" if action.ref else "")
    try:
        done, value = False, None
        if action.world == "isolated":  # engine/isolated.py: done False means "not there"
            done, value = await asyncio.wait_for(
                isolated.evaluate(state, action, timeout), timeout / 1000
            )
        if not done and action.ref:
            r = await resolve(state, action.ref, "evaluate on")
            value = await asyncio.wait_for(
                r.locator.evaluate(action.fn, timeout=timeout), timeout / 1000
            )
        elif not done:
            value = await asyncio.wait_for(state.page.evaluate(action.fn), timeout / 1000)
    except TimeoutError:
        raise ActionTimeout(
            f"{what} did not finish within {timeout} ms",
            hint="return sooner (no endless awaits), or raise timeoutMs",
        ) from None
    except PlaywrightTimeoutError as exc:
        with playwright_errors(what, timeout):
            raise exc from None
    except PlaywrightError as exc:
        message = str(exc.message if hasattr(exc, "message") else exc)
        low = message.lower()
        if "closed" in low or "execution context was destroyed" in low:
            with playwright_errors(what, timeout):
                raise exc from None
        first = re.sub(r"^[A-Za-z]+\.evaluate: ", "", message.strip().splitlines()[0])
        raise InvalidInput(
            f"{what}: the script threw {first}",
            hint="fix the script; it runs in the page, e.g. "
            "'() => document.title', or '(el) => el.textContent' with a ref",
            code="script_error",
        ) from None
    result, cut = _jsonable(value)
    out: dict[str, Any] = {"result": result}
    if cut:
        out["truncated"] = True
    return out


# --- navigation ------------------------------------------------------------------

def normalize_url(url: str | None) -> str:
    # The API applies the file:// policy before the engine sees the URL (urls.prepare with
    # the setting); here only the completion and syntax rules matter.
    return urls.prepare(url, allow_file_urls=True)


async def navigate(
    state: PageState, opts: o.NavigateOptions, *, title: bool = True
) -> dict[str, Any]:
    """Go; ``title=False`` leaves the title to the caller (a snapshot that reads it anyway)."""
    page = state.page
    timeout = o.navigate_timeout(opts.timeout_ms)
    response: Response | None = None
    if opts.action == "goto":
        url = normalize_url(opts.url)
        downloads_before = len(state.downloads)
        state.download_seen.clear()
        try:
            with playwright_errors(f"navigate to {url}", timeout):
                response = await page.goto(url, timeout=timeout, wait_until=opts.wait_until)
        except BrowserdeckError as exc:
            low = exc.message.lower()
            if "download" in low or "err_aborted" in low:
                download = await _new_download(state, downloads_before)
                if download is not None:
                    return {
                        "ok": True,
                        "targetId": state.target_id,
                        "url": page.url,
                        "title": await _title(state),
                        "status": None,
                        "download": await save_download(download),
                    }
            raise (urls.refused_by_browser(url, exc.message) or exc) from None  # 4xx: bad URL
    else:
        before = page.url
        with playwright_errors(f"go {opts.action}", timeout):
            if opts.action == "reload":
                response = await page.reload(timeout=timeout, wait_until=opts.wait_until)
            else:
                # A page restored from the back/forward cache fires no "load", and
                # Playwright would wait for one until the timeout. Wait for the commit; a
                # real load (it has a response) is then awaited like any navigation.
                go = page.go_back if opts.action == "back" else page.go_forward
                response = await go(timeout=timeout, wait_until="commit")
                if response is not None and opts.wait_until != "commit":
                    await page.wait_for_load_state(opts.wait_until, timeout=timeout)
        if response is None and page.url == before and opts.action != "reload":
            raise Conflict(
                f"cannot go {opts.action}: there is no page {opts.action} in this tab's history",
                hint="navigate to a URL instead",
                code="no_history",
            )
    return {
        "ok": True,
        "targetId": state.target_id,
        "url": page.url,
        "title": await _title(state) if title else "",
        "status": response.status if response else None,
    }


async def _new_download(state: PageState, before: int) -> Download | None:
    if len(state.downloads) <= before:
        try:
            await asyncio.wait_for(state.download_seen.wait(), 2.0)
        except TimeoutError:
            return None
    return state.downloads[-1] if len(state.downloads) > before else None


async def save_download(download: Download) -> SavedDownload:
    name = _safe_name(download.suggested_filename or "download")
    target = _unique(paths.artifacts_dir("downloads") / name)
    info = SavedDownload(url=download.url, suggested_filename=download.suggested_filename)
    try:
        await asyncio.wait_for(download.save_as(target), 60)
        target.chmod(0o600)  # page content, for this user only (as every saved output)
        info.path = str(target)
        artifacts.prune(target.parent, keep=target)
    except (PlaywrightError, TimeoutError) as exc:
        info.error = str(exc).splitlines()[0] if str(exc) else "the download did not finish"
    return info


def _safe_name(name: str) -> str:
    name = re.sub(r"[^\w.\- ]", "_", Path(name).name).strip() or "file"
    return name[:120]


def _unique(path: Path) -> Path:
    if not path.exists():
        return path
    for i in range(1, 10_000):
        candidate = path.with_name(f"{path.stem}-{i}{path.suffix}")
        if not candidate.exists():
            return candidate
    return path.with_name(f"{path.stem}-{time.time_ns()}{path.suffix}")


async def _title(state: PageState) -> str:
    return await state.title()


# --- console ---------------------------------------------------------------------

_LEVELS = {"debug": 0, "info": 1, "warning": 2, "error": 3}
_TYPE_LEVEL = {
    "error": 3,
    "assert": 3,
    "warning": 2,
    "log": 1,
    "info": 1,
    "table": 1,
    "dir": 1,
    "dirxml": 1,
    "count": 1,
    "timeEnd": 1,
}


def console(state: PageState, opts: o.ConsoleOptions) -> dict[str, Any]:
    floor = _LEVELS[opts.level] if opts.level else 0
    messages = [m for m in state.console if _TYPE_LEVEL.get(m.type, 0) >= floor]
    requests = [q for q in state.requests if floor < 3 or q.failure or (q.status or 0) >= 400]
    out: dict[str, Any] = {
        "targetId": state.target_id,
        "url": state.page.url,
        "messages": messages[-opts.limit :],
        "errors": list(state.errors)[-opts.limit :],
        "requests": requests[-opts.limit :],
        "counts": ConsoleCounts(
            messages=len(messages), errors=len(state.errors), requests=len(requests)
        ),
    }
    if opts.clear:
        state.console.clear()
        state.errors.clear()
        state.requests.clear()
    return out


# --- files: PDF and artifacts ------------------------------------------------------


def write_artifact(kind: str, target_id: str, ext: str, data: bytes) -> Path:
    folder = paths.artifacts_dir(kind)
    stamp = time.strftime("%Y%m%d-%H%M%S") + f"-{time.time_ns() % 1_000_000:06d}"
    path = folder / f"{stamp}-{target_id[:8].lower()}.{ext}"
    files.write_private(path, data)
    artifacts.prune(folder, keep=path)
    return path


async def pdf(state: PageState, opts: o.PdfOptions) -> dict[str, Any]:
    timeout = o.navigate_timeout(opts.timeout_ms)
    try:
        data = await asyncio.wait_for(
            state.page.pdf(print_background=opts.print_background, landscape=opts.landscape),
            timeout / 1000,
        )
    except TimeoutError:
        raise ActionTimeout(
            f"PDF did not finish within {timeout} ms", hint="raise timeoutMs for long pages"
        ) from None
    except PlaywrightError as exc:
        text = str(exc).lower()
        if (
            "printtopdf" in text
            or "printing" in text
            or "not implemented" in text
            or "headless" in text
        ):
            raise Unavailable(
                "PDF export works only in headless Chromium, and this browser runs headed",
                hint=Hint(
                    "use a headless profile for PDFs, or take a full-page screenshot "
                    "({screenshot})",
                    screenshot=FULL_PAGE,
                ),
                code="pdf_unavailable",
            ) from None
        with playwright_errors("PDF"):
            raise exc from None
    out: dict[str, Any] = {
        "ok": True,
        "targetId": state.target_id,
        "url": state.page.url,
        "bytes": len(data),
    }
    if opts.inline:
        out["base64"] = base64.b64encode(data).decode("ascii")
    else:
        out["path"] = str(write_artifact("pdf", state.target_id, "pdf", data))
    return out
