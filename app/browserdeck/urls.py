"""The one URL policy: how an agent's URL is read, completed and allowed.

Every way a URL reaches a browser (``POST /tabs/open``, ``POST /navigate``, MCP
``browser_navigate``/``browser_tabs``, the CLI, the tray's "New tab") goes through
:func:`prepare`. Two rules shape it:

* **Read it the way Chrome will.** Chrome drops leading/trailing C0 controls and spaces
  and removes tabs and newlines anywhere (WHATWG URL parsing), so ``"fi\\tle:///etc"``
  *is* ``file:///etc`` to Chrome. We clean first and judge the cleaned URL, and hand
  Chrome exactly what we judged.
* **Refuse what an agent should not reach**: ``file:`` unless ``allowFileUrls`` is on,
  including inside the wrapper schemes that show a file's contents (``view-source:``,
  ``filesystem:``, ``blob:``); schemes that are not web pages (``javascript:``,
  ``ftp:`` …); hosts Chrome cannot parse (``256.256.256.256``, ``[::1``); and URLs
  longer than :data:`MAX_URL_CHARS`.

Completing a bare address follows what users expect from a browser's address bar:
``localhost``, ``127.0.0.1``, ``[::1]`` and other IP addresses get ``http://`` (local
dev servers rarely speak TLS); any other host gets ``https://``.

:func:`is_file_url` is the backstop the engine applies to a page's *real* URL, so a
``file:`` page reached some other way (a redirect, a link, ``location.href`` set by a
script) cannot be read while ``allowFileUrls`` is off.
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import urlsplit

from browserdeck.errors import Forbidden, InvalidInput
from browserdeck.guard import is_loopback_name

# Chrome's own limit is 2 MiB (url::kMaxURLChars); past it Chrome shows an error page.
# Ours is lower so a request stays small: a data: URL this big is better served over http.
MAX_URL_CHARS = 65_536

# Schemes an agent may open. view-source: is checked on what it wraps.
WEB_SCHEMES = frozenset({"http", "https"})
PAGE_SCHEMES = WEB_SCHEMES | {"about", "data", "chrome", "file", "view-source"}
# Schemes that show the contents of what they wrap: never around file: while it is off.
WRAPPER_SCHEMES = frozenset({"view-source", "filesystem", "blob"})

_SCHEME_RE = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*):")
# Known schemes written without "//" (about:blank, data:text/html,…). Anything else before
# a colon with no "//" is a host:port ("localhost:3000", "example.com:8080/x").
_OPAQUE_SCHEMES = frozenset(
    {
        "about",
        "data",
        "javascript",
        "mailto",
        "view-source",
        "blob",
        "filesystem",
        "chrome",
        "file",
        "tel",
        "sms",
        "ws",
        "wss",
        "ftp",
        "chrome-extension",
        "devtools",
        "intent",
    }
)
_C0_OR_SPACE = "".join(chr(c) for c in range(0x21))
# WHATWG forbidden host code points (those that survive urlsplit).
_FORBIDDEN_HOST = re.compile(r"[\x00-\x20#%/:<>?@\[\\\]^|\x7f]")


def clean(raw: str) -> str:
    """What Chrome makes of ``raw`` before parsing: ends trimmed, tabs/newlines removed."""
    return raw.strip(_C0_OR_SPACE).replace("\t", "").replace("\n", "").replace("\r", "")


def scheme_of(url: str) -> str:
    """The lower-cased scheme of an already cleaned URL, or ``""``."""
    m = _SCHEME_RE.match(url)
    return m.group(1).lower() if m else ""


def _has_scheme(url: str) -> bool:
    scheme = scheme_of(url)
    if not scheme:
        return False
    return url[len(scheme) + 1 :].startswith("//") or scheme in _OPAQUE_SCHEMES


def _is_ip_or_local(host: str) -> bool:
    host = host.lower()
    if is_loopback_name(host) or host.endswith(".localhost"):
        return True
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


def complete(url: str) -> str:
    """Add a scheme to a bare address: http for local names and IPs, https otherwise."""
    if _has_scheme(url):
        return url
    host = re.split(r"[/?#]", url, maxsplit=1)[0]
    if host.startswith("["):
        host = host.split("]", 1)[0] + "]"
    else:
        host = host.rsplit(":", 1)[0] if re.search(r":\d*$", host) else host
    return ("http://" if _is_ip_or_local(host) else "https://") + url


def _invalid(url: str, why: str) -> InvalidInput:
    return InvalidInput(
        f"{_show(url)} is not a valid URL: {why}",
        hint="give a full http(s) URL, e.g. https://example.com/page or http://localhost:3000",
        code="invalid_url",
    )


def _show(url: str) -> str:
    return repr(url if len(url) <= 80 else url[:77] + "…")


def _check_ipv4_like(host: str, url: str) -> None:
    # WHATWG: a host whose last label is a number is parsed as IPv4, and fails if it is not
    # one ("256.256.256.256", "1.2.3.999"); Chrome then refuses the URL.
    labels = host.rstrip(".").split(".")
    if not labels or not re.fullmatch(r"(0[xX][0-9a-fA-F]*|\d+)", labels[-1]):
        return
    try:
        ipaddress.IPv4Address(host.rstrip("."))
    except ValueError:
        # Chrome also accepts shorthand forms (127.1, 0x7f.0.0.1); refuse only what no
        # IPv4 parse can give.
        parts = []
        for label in labels:
            try:
                parts.append(int(label, 16) if label.lower().startswith("0x") else int(label))
            except ValueError:
                raise _invalid(url, f"{host!r} is not an IP address") from None
        if (
            len(parts) > 4
            or any(p > 255 for p in parts[:-1])
            or parts[-1] >= 256 ** (5 - len(parts))
        ):
            raise _invalid(url, f"{host!r} is not an IP address") from None


def _check_web(url: str) -> None:
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise _invalid(url, str(exc)) from None
    del port
    netloc = parts.netloc.rsplit("@", 1)[-1]
    if netloc.startswith("["):
        host = netloc.split("]", 1)[0][1:]
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            raise _invalid(url, f"{host!r} is not an IPv6 address") from None
        return
    host = netloc.rsplit(":", 1)[0] if ":" in netloc else netloc
    if not host:
        raise _invalid(url, "it has no host")
    if _FORBIDDEN_HOST.search(host):
        raise _invalid(url, f"the host {host!r} has a character hosts cannot have")
    _check_ipv4_like(host, url)


def is_file_url(url: str) -> bool:
    """True when ``url`` shows a local file: ``file:`` itself or a wrapper around one."""
    url = clean(url)
    for _ in range(4):  # view-source:view-source:file:… is still a file
        scheme = scheme_of(url)
        if scheme == "file":
            return True
        if scheme not in WRAPPER_SCHEMES:
            return False
        url = url[len(scheme) + 1 :]
    return True


def file_url_forbidden(url: str) -> Forbidden:
    return Forbidden(
        f"file:// URLs are not allowed ({_show(url)})",
        hint="serve the file over http (e.g. `python -m http.server`) or turn on "
        '"allowFileUrls" in Settings if agents may read local files',
        code="file_url_forbidden",
    )


def check_allowed(url: str, *, allow_file_urls: bool) -> None:
    """Refuse ``url`` (already :func:`prepare`-d or a page's real URL) if it shows a file."""
    if not allow_file_urls and is_file_url(url):
        raise file_url_forbidden(url)


def prepare(raw: str | None, *, allow_file_urls: bool, empty: str | None = None) -> str:
    """The URL to hand Chrome for ``raw``, or a clear 400/403.

    ``empty`` is what an empty URL means (``"about:blank"`` for a new tab); ``None``
    makes it an error (a navigation needs somewhere to go).
    """
    if len(raw or "") > MAX_URL_CHARS:
        raise InvalidInput(
            f"the URL is {len(raw or ''):,} characters long; the limit is {MAX_URL_CHARS:,}",
            hint="for a big document, serve it over http and open that URL instead of a data: URL",
            code="url_too_long",
        )
    url = clean(raw or "")
    if not url:
        if empty is not None:
            return empty
        raise InvalidInput(
            "a URL is needed", hint='e.g. {"url": "https://example.com"}', code="invalid_url"
        )
    url = complete(url)
    _check_scheme(url, raw or "", allow_file_urls=allow_file_urls)
    return url


def _check_scheme(url: str, raw: str, *, allow_file_urls: bool) -> None:
    scheme = scheme_of(url)
    if scheme in WRAPPER_SCHEMES and is_file_url(url):
        # Checked before the scheme list so view-source:file: says "file", not "scheme".
        check_allowed(url, allow_file_urls=allow_file_urls)
    if scheme not in PAGE_SCHEMES:
        raise InvalidInput(
            f"{_show(raw)} uses the {scheme}: scheme, which agents cannot open",
            hint="use an http(s) URL (or about:blank, data:, chrome:// pages"
            + (", file://" if allow_file_urls else "")
            + ")",
            code="unsupported_scheme",
        )
    if scheme == "file":
        check_allowed(url, allow_file_urls=allow_file_urls)
    elif scheme in WEB_SCHEMES:
        _check_web(url)
    elif scheme == "view-source":
        inner = url[len(scheme) + 1 :]
        if scheme_of(inner) not in WEB_SCHEMES:
            raise InvalidInput(
                f"view-source: can only wrap an http(s) URL ({_show(raw)})",
                hint="e.g. view-source:https://example.com",
                code="unsupported_scheme",
            )
        _check_web(inner)
