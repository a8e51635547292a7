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
from collections.abc import Callable
from urllib.parse import urlsplit

from browserdeck.errors import BrowserdeckError, Forbidden, InvalidInput, NotFound
from browserdeck.policy.guard import is_loopback_name
from browserdeck.util.fastjson import LONE_SURROGATES

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
    # A lone surrogate (no UTF-8 carries it) is shown as U+FFFD, as every answer shows it.
    url = url.translate(LONE_SURROGATES)
    return repr(url if len(url) <= 80 else url[:77] + "…")


def _ipv4_number(part: str) -> int | None:
    # WHATWG "IPv4 number parser": 0x… is hex ("0x" alone is 0), a leading 0 octal.
    if not part:
        return None
    radix = 10
    if part[:2].lower() == "0x":
        part, radix = part[2:], 16
    elif len(part) > 1 and part[0] == "0":
        part, radix = part[1:], 8
    if not part:
        return 0
    digits = "0123456789abcdef"[:radix]
    if any(c not in digits for c in part.lower()):
        return None
    return int(part, radix)


def _check_ipv4_like(host: str, url: str) -> None:
    # WHATWG: a host whose last label is a number is parsed as IPv4, and fails if it is not
    # one ("256.256.256.256", "1.2.3.999", "09"); Chrome then refuses the URL. Shorthand
    # forms (127.1, 0x7f.0.0.1) are addresses.
    labels = host.split(".")
    if len(labels) > 1 and labels[-1] == "":
        labels.pop()
    last = labels[-1]
    if not (last.isascii() and last.isdigit()) and _ipv4_number(last) is None:
        return  # a name, not an address
    parts = [_ipv4_number(label) for label in labels]
    numbers = [p for p in parts if p is not None]
    if (
        len(numbers) != len(parts)
        or len(parts) > 4
        or any(p > 255 for p in numbers[:-1])
        or numbers[-1] >= 256 ** (5 - len(parts))
    ):
        raise _invalid(url, f"{_show(host)} is not an IP address")


def _mapped_host(host: str, url: str) -> str:
    """A non-ASCII host as Chromium reads it (UTS #46, as the URL standard says: mapped,
    each label checked; hyphens and lengths not), or a 400 naming what is wrong.

    Chromium refuses such a URL outright ("Cannot navigate to invalid URL"): a code point
    no host may hold (unassigned, a control, a private-use or invisible one), a label that
    starts with a combining mark, a joiner out of place, a mix of directions the Bidi rule
    forbids, or an xn-- label that is not Punycode of a valid name.
    """
    try:
        host.encode()
    except UnicodeEncodeError:
        raise _invalid(url, f"the host {_show(host)} has a lone surrogate (half a UTF-16 pair)") from None
    import unicodedata

    from idna import core as idna  # only a non-ASCII host pays for its tables

    def remap(text: str) -> str:
        return idna.uts46_remap(text, std3_rules=False, transitional=False)

    try:
        mapped = remap(host)
    except idna.IDNAError:
        bad = next((c for c in host if not _remaps(remap, c)), host[0])
        raise _invalid(
            url, f"the host {_show(host)} has U+{ord(bad):04X}, which no host name can hold"
        ) from None
    bidi = any(unicodedata.bidirectional(c) in ("R", "AL", "AN") for c in mapped)
    for label in mapped.split("."):
        shown = label
        if label[:4] == "xn--" and not label.isascii():
            raise _invalid(url, f"the label {_show(shown)} mixes xn-- with other characters")
        if label[:4] == "xn--":
            try:
                label = label[4:].encode("ascii").decode("punycode")
            except UnicodeError:
                label = ""
            if not label or label.isascii() or not _remaps(remap, label, same=True):
                raise _invalid(url, f"the label {_show(shown)} is not Punycode of a valid name")
        if not label:
            continue
        try:
            idna.check_initial_combiner(label)
            for i, c in enumerate(label):
                if c in "\u200c\u200d" and not idna.valid_contextj(label, i):
                    raise idna.IDNAError("a zero-width joiner is out of place")
            if bidi:
                idna.check_bidi(label, check_ltr=True)
        except (idna.IDNAError, ValueError) as exc:
            raise _invalid(url, f"the host label {_show(shown)} is not a valid name ({exc})") from None
    return mapped


def _remaps(remap: Callable[[str], str], text: str, *, same: bool = False) -> bool:
    try:
        out = remap(text)
    except ValueError:  # idna's errors are ValueErrors
        return False
    return out == text if same else True


def _check_host(host: str, url: str) -> None:
    if not host:
        raise _invalid(url, "it has no host")
    if _FORBIDDEN_HOST.search(host):
        raise _invalid(url, f"the host {_show(host)} has a character hosts cannot have")
    if not host.isascii():
        host = _mapped_host(host, url)
        if not host:
            raise _invalid(url, "its host is made of characters that map to nothing")
    _check_ipv4_like(host, url)


# Chromium's restricted ports (net/base/port_util.cc; measured on Chromium 156, where each
# answers net::ERR_UNSAFE_PORT): the ports of other protocols (mail, FTP, SSH, IRC, SIP …),
# where a page's request could be read as that protocol's commands, and port 0.
RESTRICTED_PORTS = frozenset(
    {
        0, 1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87,
        95, 101, 102, 103, 104, 109, 110, 111, 113, 115, 117, 119, 123, 135, 137, 139, 143,
        161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532, 540, 548, 554, 556,
        563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049, 3659, 4045, 5060,
        5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6697, 10080,
    }
)  # fmt: skip


def unsafe_port(url: str, port: int) -> InvalidInput:
    return InvalidInput(
        f"{_show(url)} uses port {port}, which browsers refuse to load (it is on Chromium's "
        "list of restricted ports: ports of other protocols such as mail, FTP or IRC)",
        hint="serve the page on another port, e.g. 8080 or 3000",
        code="unsafe_port",
    )


def _check_web(url: str) -> None:
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise _invalid(url, str(exc)) from None
    if port is not None and port in RESTRICTED_PORTS:
        raise unsafe_port(url, port)
    netloc = parts.netloc.rsplit("@", 1)[-1]
    if netloc.startswith("["):
        host = netloc.split("]", 1)[0][1:]
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            raise _invalid(url, f"{_show(host)} is not an IPv6 address") from None
        return
    _check_host(netloc.rsplit(":", 1)[0] if ":" in netloc else netloc, url)


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
    elif scheme == "chrome":
        # A standard scheme to Chromium: its host is read as a web host's ("chrome:settings"
        # and "chrome:///settings" are chrome://settings/ too).
        host = re.split(r"[/\\?#:]", url[len(scheme) + 1 :].lstrip("/\\"), maxsplit=1)[0]
        _check_host(host, url)
    elif scheme == "view-source":
        inner = url[len(scheme) + 1 :]
        if scheme_of(inner) not in WEB_SCHEMES:
            raise InvalidInput(
                f"view-source: can only wrap an http(s) URL ({_show(raw)})",
                hint="e.g. view-source:https://example.com",
                code="unsupported_scheme",
            )
        _check_web(inner)


def page_not_available(url: str) -> NotFound:
    return NotFound(
        f"{_show(url)} is not available in this browser",
        hint="which chrome:// pages exist depends on the browser: Chromium's headless shell "
        "(headless managed profiles) has almost none; a headed profile or your own Chrome "
        "(an extension profile) has them",
        code="page_not_available",
    )


def refused_by_browser(url: str, reason: str) -> BrowserdeckError | None:
    """What to answer when the browser refused to navigate to ``url`` at once (``reason``:
    its error), or None when the refusal is not about the URL itself.

    The checks of :func:`prepare` say most of this before a tab is touched; the browser is
    the last word (a host Chromium's Unicode tables refuse, ports a browser restricts
    itself, and the chrome:// pages it has, which differ from browser to browser).
    """
    low = reason.lower()
    if "cannot navigate to invalid url" in low:
        return _invalid(url, "the browser cannot parse it")
    if "err_unsafe_port" in low:
        try:
            port = urlsplit(url).port
        except ValueError:
            port = None
        return unsafe_port(url, port if port is not None else 0)
    if scheme_of(url) == "chrome" and ("err_invalid_url" in low or "net::err_failed" in low):
        return page_not_available(url)
    return None


# A URL glob as Playwright reads it (``wait`` ``url``): a backslash escapes the next
# character, ``{a,b}`` groups do not nest, and the glob matches the whole URL, so it starts
# with ``*`` (``**/done``), a group, or a scheme (``https://example.com/*``). Published as
# the field's pattern; :func:`check_glob` holds to exactly this and says what is wrong.
GLOB_PATTERN = (
    r"^(?=\*|\{|[A-Za-z][A-Za-z0-9+.\-]*:)"
    r"(?:\\[\s\S]|[^\\{}]|\{(?:\\[\s\S]|[^\\{}])*\})*\\?$"
)
_GLOB = re.compile(GLOB_PATTERN)


def check_glob(glob: str) -> str:
    """``glob`` if it can match a URL, else a ValueError that says why (a 400 at once,
    rather than a wait that can only run out of time)."""
    if _GLOB.fullmatch(glob):
        return glob
    from playwright._impl.errors import Error
    from playwright._impl.isomorphic.url_match import glob_to_regex_pattern

    try:
        glob_to_regex_pattern(glob)
    except Error as exc:
        raise ValueError(f"{exc.message} (a group is {{a,b}}; escape a brace as \\{{)") from None
    raise ValueError(
        f"the glob {_show(glob)} cannot match a URL: it matches the whole URL, so start it "
        "with ** or a scheme, e.g. **/done or https://example.com/*"
    )


# A CDP endpoint (a remote profile's cdpUrl): http(s) or ws(s), a host name (letters,
# digits, '.', '-', '_') or a bracketed IPv6 address, an optional port, and nothing a
# client library refuses to connect to (controls, spaces). The API publishes the pattern.
_HEX = "[0-9A-Fa-f]{1,4}"
_IPV6 = "|".join(
    (
        f"(?:{_HEX}:){{7}}{_HEX}",
        f"(?:{_HEX}:){{1,7}}:",
        *(f"(?:{_HEX}:){{1,{n}}}(?::{_HEX}){{1,{7 - n}}}" for n in range(1, 7)),
        f":(?:(?::{_HEX}){{1,7}}|:)",
    )
)
_USERINFO = r'!"$-.0-9:->A-Z\\^-`a-z{-~'  # printable ASCII but / ? # @ [ ]
_PORT = r"0*(?:[0-9]{1,4}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])"
_AFTER_SCHEME = (
    rf"://(?:[{_USERINFO}]*@)?(?:[A-Za-z0-9._-]+|\[(?:{_IPV6})\])(?::(?:{_PORT})?)?"
    r"(?:[/?#][^\x00-\x20\x7f]*)?$"
)
# The scheme in lower case: a browser service is told from a CDP endpoint by it ("Ws://"
# was read as an http endpoint, which Playwright then refused).
HTTP_CDP_URL = r"^https?" + _AFTER_SCHEME
WS_CDP_URL = r"^wss?" + _AFTER_SCHEME
CDP_URL = re.compile(f"{HTTP_CDP_URL}|{WS_CDP_URL}")
