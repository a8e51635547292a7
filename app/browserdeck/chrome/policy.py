"""The one policy over every CDP command a client of a managed browser's endpoint sends.

``refusal(message, rules)`` says why a parsed client message may not reach the browser
(or None). It holds for every client (our engine, Playwright, Puppeteer, a script with the
API token) and for commands wrapped in others: a ``Target.sendMessageToTarget`` carries
a whole CDP message as a string for a non-flat session, and that message goes through
this same policy (nested up to ``MAX_NESTING`` deep), so a wrapped ``Page.navigate`` to a
``file:`` URL is refused as the bare one is.

What it refuses:

* a ``file:`` URL (``urls.is_file_url``: wrappers, control characters) while
  ``allowFileUrls`` is off, in ``Page.navigate``, ``Target.createTarget``,
  ``Network.loadNetworkResource`` (reads a URL for a frame) and ``PWA.install``;
* files handed to a page by path (``DOM.setFileInputFiles``, the files of
  ``Input.dispatchDragEvent``) outside the ``uploadRoots`` setting, judged as uploads are
  (policy/confine.py: no dot-files, no second hard link, symlinks resolved);
* downloads written outside a temporary folder or an ``uploadRoots`` folder
  (``Browser.setDownloadBehavior``, ``Page.setDownloadBehavior``);
* commands that would open a way around this policy or load code from disk:
  ``Target.exposeDevToolsProtocol`` (gives a page's own script a CDP channel) and
  ``Extensions.loadUnpacked``.

Which messages reach here is chrome/inbound.py's business (only those that may be one of
these are parsed).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from browserdeck.errors import BrowserdeckError
from browserdeck.policy import confine, urls

__all__ = ["MAX_NESTING", "POLICED_METHODS", "Rules", "load_message", "refusal"]

MAX_NESTING = 4


@dataclass(frozen=True)
class Rules:
    """The settings the policy reads, asked for only when a message needs them."""

    allow_file_urls: Callable[[], bool]
    upload_roots: Callable[[], Sequence[str]] = tuple


def _refuse_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [key for key, _ in pairs]
    if len(keys) != len(set(keys)):
        raise ValueError("a key appears twice in one object")
    return dict(pairs)


def load_message(text: str | bytes) -> Any:
    """A CDP message parsed, refusing what Chrome and Python could read differently (a
    key twice: which copy wins differs between parsers). Raises ValueError."""
    return json.loads(text, object_pairs_hook=_refuse_duplicates)


def _url(field: str) -> Callable[[dict[str, Any], Rules, int], str | None]:
    def check(params: dict[str, Any], rules: Rules, depth: int) -> str | None:
        url = params.get(field)
        if isinstance(url, str) and urls.is_file_url(url) and not rules.allow_file_urls():
            refused = urls.file_url_forbidden(url)
            return f"{refused.message}; {refused.hint}"
        return None

    return check


def _files(paths: Any, rules: Rules) -> str | None:
    if paths is None:
        return None
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        return "files must be a list of paths"
    roots = rules.upload_roots()
    for path in paths:
        try:
            confine.cdp_upload_file(path, roots)
        except BrowserdeckError as exc:
            return f"{exc.message}; {exc.hint_for('api') or ''}".rstrip("; ")
    return None


def _input_files(params: dict[str, Any], rules: Rules, depth: int) -> str | None:
    return _files(params.get("files"), rules)


def _drag_files(params: dict[str, Any], rules: Rules, depth: int) -> str | None:
    data = params.get("data")
    return _files(data.get("files"), rules) if isinstance(data, dict) else None


def _downloads(params: dict[str, Any], rules: Rules, depth: int) -> str | None:
    path = params.get("downloadPath")
    if path is None:
        return None
    if not isinstance(path, str):
        return "downloadPath must be a string"
    try:
        confine.download_folder(path, rules.upload_roots())
    except BrowserdeckError as exc:
        return f"{exc.message}; {exc.hint_for('api') or ''}".rstrip("; ")
    return None


def _never(why: str) -> Callable[[dict[str, Any], Rules, int], str | None]:
    def check(params: dict[str, Any], rules: Rules, depth: int) -> str | None:
        return why

    return check


def _wrapped(params: dict[str, Any], rules: Rules, depth: int) -> str | None:
    """``Target.sendMessageToTarget``: the message it carries, under the same policy."""
    text = params.get("message")
    if not isinstance(text, str):
        return None  # Chrome refuses it itself
    if depth + 1 >= MAX_NESTING:
        return f"messages wrapped more than {MAX_NESTING - 1} deep are refused"
    if "\0" in text:
        return "a wrapped message may not contain a NUL character"
    try:
        inner = load_message(text)
    except (ValueError, RecursionError) as exc:
        return f"the wrapped message is not a valid CDP message: {exc}"
    if not isinstance(inner, dict):
        return "the wrapped message is not a JSON object"
    why = refusal(inner, rules, depth + 1)
    return f"{why} (in a message wrapped in Target.sendMessageToTarget)" if why else None


_RULES: dict[str, Callable[[dict[str, Any], Rules, int], str | None]] = {
    "Page.navigate": _url("url"),
    "Target.createTarget": _url("url"),
    "Network.loadNetworkResource": _url("url"),
    "PWA.install": _url("installUrlOrBundleUrl"),
    "DOM.setFileInputFiles": _input_files,
    "Input.dispatchDragEvent": _drag_files,
    "Browser.setDownloadBehavior": _downloads,
    "Page.setDownloadBehavior": _downloads,
    "Target.sendMessageToTarget": _wrapped,
    "Target.exposeDevToolsProtocol": _never(
        "Target.exposeDevToolsProtocol is refused: it would give the page's own script a "
        "DevTools channel that no policy sees"
    ),
    "Extensions.loadUnpacked": _never("Extensions.loadUnpacked is refused: it loads code from disk"),
}
POLICED_METHODS = frozenset(_RULES)


def refusal(message: dict[str, Any], rules: Rules, depth: int = 0) -> str | None:
    """Why ``message`` (a parsed client message) may not reach the browser, or None."""
    method = message.get("method")
    check = _RULES.get(method) if isinstance(method, str) else None
    if check is None:
        return None
    params = message.get("params")
    return check(params if isinstance(params, dict) else {}, rules, depth)
