"""Playwright failures turned into errors an agent can act on.

Playwright's messages are long (a call log, a selector dump) and name internals
(``aria-ref=f2e7``) the agent never saw. Every engine call runs its Playwright
work inside :func:`playwright_errors`, which keeps the one useful line and says
what to do next.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

# The classes playwright.async_api exports, from where they are defined: the public
# module imports the whole client (~55 ms), which `serve` answers MCP's `initialize`
# without; tests/core/test_serve_path_imports.py checks they are the same.
from playwright._impl._errors import Error as PlaywrightError
from playwright._impl._errors import TimeoutError as PlaywrightTimeoutError

from browserdeck.errors import (
    OFFLINE,
    OPEN_TAB,
    RELOAD,
    SNAPSHOT,
    START,
    STATUS,
    TABS,
    ActionTimeout,
    BrowserdeckError,
    Conflict,
    Hint,
    InvalidInput,
    NotFound,
    Unavailable,
)

NEW_SNAPSHOT = Hint("take a new snapshot ({snapshot}) and use its refs", snapshot=SNAPSHOT)

BROWSER_GONE = Hint(
    "check the profile ({status}); start it again with {start} if it stopped",
    status=STATUS,
    start=START,
)


class NavigationFailed(BrowserdeckError):
    """The page could not be loaded (DNS, connection refused, TLS, aborted)."""

    code = "navigation_failed"


# Call-log lines that explain why an action is still waiting, most specific first.
_WAIT_REASONS = (
    (re.compile(r"(<[^>]+>.*?) intercepts pointer events"), "another element covers it: {0}"),
    (re.compile(r"element is not visible"), "the element is not visible"),
    (re.compile(r"element is not enabled"), "the element is disabled"),
    (re.compile(r"element is not editable"), "the element is not editable"),
    (re.compile(r"element is not stable"), "the element keeps moving (animation)"),
    (re.compile(r"element is outside of the viewport"), "the element is outside the viewport"),
)


def _first_line(exc: BaseException) -> str:
    text = str(getattr(exc, "message", "") or exc)
    line = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    # "Locator.click: Timeout 8000ms exceeded." -> "Timeout 8000ms exceeded."
    return re.sub(r"^[A-Za-z]+\.[A-Za-z_]+: ", "", line)


def _wait_reason(text: str) -> str | None:
    # The last matching call-log line is the state Playwright was stuck in.
    best: tuple[int, str] | None = None
    for pattern, template in _WAIT_REASONS:
        for match in pattern.finditer(text):
            reason = template.format(*match.groups())
            if best is None or match.start() > best[0]:
                best = (match.start(), reason)
    if (
        best is None
        and re.search(r"waiting for (locator|get_by|selector)", text)
        and ("resolved to" not in text)
    ):
        return "no element matched"
    return best[1] if best else None


def translate(exc: PlaywrightError, what: str, timeout_ms: int | None = None) -> BrowserdeckError:
    """One BrowserdeckError for a Playwright error raised while doing ``what``."""
    text = str(exc.message if hasattr(exc, "message") else exc)
    low = text.lower()
    if "did not find some options" in low:
        return InvalidInput(
            f"{what}: some of the values are not options of this <select>",
            hint="use option values or labels exactly as in the snapshot",
        )
    if isinstance(exc, PlaywrightTimeoutError) or ("timeout" in low and "exceeded" in low):
        reason = _wait_reason(text)
        after = f" after {timeout_ms} ms" if timeout_ms else ""
        return ActionTimeout(
            f"{what} timed out{after}" + (f": {reason}" if reason else ""),
            hint="if something covers the element (a cookie banner, a dialog), close it first; "
            "if the page changed, " + NEW_SNAPSHOT + "; or raise timeoutMs",
        )
    if "strict mode violation" in low:
        count = re.search(r"resolved to (\d+) elements", text)
        n = f" {count.group(1)}" if count else " several"
        return Conflict(
            f"{what}: the target matches{n} elements, so it is ambiguous",
            hint=NEW_SNAPSHOT + ", or use a more specific selector",
            code="ambiguous",
        )
    if (
        "not attached to the dom" in low
        or "element is detached" in low
        or ("detached" in low and "element" in low)
    ):
        return Conflict(
            f"{what}: the element was removed from the page while acting on it",
            hint=NEW_SNAPSHOT,
            code="stale_ref",
        )
    if "target crashed" in low or "page crashed" in low:
        return Conflict(
            f"{what}: the tab's renderer crashed, so the page is gone",
            hint=Hint(
                "reload it ({reload}) or navigate it to a URL; or close the tab", reload=RELOAD
            ),
            code="tab_crashed",
        )
    if "target page, context or browser has been closed" in low or "target closed" in low:
        return NotFound(
            f"{what}: the tab was closed",
            hint=Hint(
                "list tabs ({tabs}) and use another targetId, or open one ({open})",
                tabs=TABS,
                open=OPEN_TAB,
            ),
            code="tab_closed",
        )
    if "browser has been closed" in low or "connection closed" in low or "browser closed" in low:
        return Unavailable(
            f"{what}: the connection to the browser was lost",
            hint=BROWSER_GONE,
            code="browser_gone",
        )
    if "execution context was destroyed" in low or "frame was detached" in low:
        return Conflict(
            f"{what}: the page navigated while this was running",
            hint=NEW_SNAPSHOT,
            code="navigated",
        )
    if "net::err_" in low or "ns_error" in low:
        err = re.search(r"net::ERR_[A-Z_]+", text)
        if err and err.group(0) == "net::ERR_INTERNET_DISCONNECTED":
            hint: str | Hint = Hint(
                "the tab is offline ({offline}); set it back online first", offline=OFFLINE
            )
        else:
            hint = "check the URL; the site may be down or unreachable from this machine"
        return NavigationFailed(
            f"{what} failed: {err.group(0) if err else _first_line(exc)}", hint=hint
        )
    if "invalid frame in aria-ref" in low or ("unknown engine" in low and "aria-ref" in low):
        return Conflict(f"{what}: the ref's frame is gone", hint=NEW_SNAPSHOT, code="stale_ref")
    if "not a checkbox or radio" in low:
        return InvalidInput(
            f"{what}: the element is not a checkbox or radio button",
            hint="use a text value, or a ref of a checkbox/radio",
        )
    if "not an <input>, <textarea>" in low or "not an <input>" in low:
        return InvalidInput(
            f"{what}: the element is not a text field",
            hint="type/fill need a textbox ref; use click for buttons and links",
        )
    if "element is not a <select>" in low:
        return InvalidInput(
            f"{what}: the element is not a <select>",
            hint="select needs a combobox/listbox ref of a <select>; for custom "
            "dropdowns click the control, then click the option",
        )
    if (
        "while parsing css selector" in low
        or "is not a valid selector" in low
        or "selector cannot start with" in low
    ):
        return InvalidInput(
            f"{what}: invalid CSS selector ({_first_line(exc)})",
            hint="fix the selector, e.g. '#id', '.class' or 'button[name=go]'",
            code="invalid_selector",
        )
    if "evaluationfailed" in low or "is not a function" in low or "syntaxerror" in low:
        return InvalidInput(
            f"{what}: the script failed: {_first_line(exc)}",
            hint="fix the function; it runs in the page, e.g. "
            "'() => document.title' or '(el) => el.textContent' with a ref",
        )
    return BrowserdeckError(
        f"{what} failed: {_first_line(exc)}",
        hint="if the page changed, " + NEW_SNAPSHOT,
        code="browser_error",  # nothing we recognise: the API answers it as a 500
    )


@contextmanager
def playwright_errors(what: str, timeout_ms: int | None = None) -> Iterator[None]:
    """Run Playwright calls; any Playwright error leaves as a BrowserdeckError."""
    try:
        yield
    except PlaywrightError as exc:
        raise translate(exc, what, timeout_ms) from None
