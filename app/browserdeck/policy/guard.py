"""Who may talk to a browserdeck endpoint: the one Host / Origin / token guard.

Every local surface (the control API and ``/mcp``, the extension relay, the managed
profiles' CDP endpoint) answers only requests that pass the same three checks:

* **transport**: the peer is a loopback address and the ``Host`` header is a loopback
  name (``localhost``, ``127.x.y.z``, ``[::1]``) with at most a numeric port. A page on
  ``evil.example`` that re-resolved to 127.0.0.1 (DNS rebinding) still sends its own
  Host and is refused. The Host is parsed strictly: ``[::1]evil.com``,
  ``localhost:80@evil.com`` and ``localhost:evil`` are refused, not "probably loopback".
* **origin**: browser pages send ``Origin``; a request carrying one is refused unless
  it is one the surface names (the relay lets its own extension in), or, where the
  surface allows it (``/mcp``), the endpoint's own origin: ``http://<loopback>:<port>``
  naming the very Host and port the request came to, which only a page served from
  that port carries (a local MCP inspector); a page on any other port is refused.
  ``null`` is a browser Origin too (sandboxed iframes, ``file:`` and ``data:`` pages).
* **token**: ``Authorization: Bearer <token>`` (or a surface-specific place), compared
  in constant time *as bytes*, so a token with non-ASCII characters is a plain 401.

A header that may appear once (Host, Origin, Authorization) and appears twice is
refused outright: servers and proxies disagree on which copy wins.

The checks are pure functions over ``(name, value)`` header pairs (names lowercased,
values decoded as latin-1, as HTTP carries them) so ASGI, ``websockets`` and raw-socket
servers share them; ``headers_from_asgi`` / ``headers_from_pairs`` build the pairs.
Each check returns ``None`` or a ``Refusal`` (status, code, message, hint) that the
surface renders in its own format. See docs/security.md.
"""

from __future__ import annotations

import ipaddress
import os
import re
import secrets
import socket
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

# The loopback names we answer to, in the form a Host header or URL carries them.
# 127.0.0.0/8 addresses other than 127.0.0.1 are loopback as well (see is_loopback_name).
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")

Headers = Sequence[tuple[str, str]]

# RFC 3986 reg-name restricted to what DNS and IPv4 use; no userinfo, no path, no spaces.
_REG_NAME = re.compile(r"[a-z0-9](?:[a-z0-9.-]{0,252})?")
_PORT = re.compile(r"[0-9]{1,5}")


@dataclass(frozen=True)
class Refusal:
    """Why a request was refused, for the surface to render (JSON error, text, close code)."""

    status: int
    code: str
    message: str
    hint: str


@dataclass(frozen=True)
class HostHeader:
    """A parsed ``Host``: the name (lowercased; IPv6 without brackets) and the port if given."""

    name: str
    port: int | None

    @property
    def url_host(self) -> str:
        """The name as it goes into a URL (IPv6 in brackets)."""
        return f"[{self.name}]" if ":" in self.name else self.name

    def netloc(self, default_port: int) -> str:
        """``host:port`` rebuilt from the parsed parts, never the raw header."""
        return f"{self.url_host}:{self.port if self.port is not None else default_port}"


def parse_host(value: str | None) -> HostHeader | None:
    """Parse a ``Host`` header (or a URL's netloc without userinfo) strictly; ``None`` if bad.

    Accepted: ``name``, ``name:port``, ``[v6]``, ``[v6]:port`` where name is a DNS name or
    dotted IPv4 and port is 1-65535 in digits. Anything else (userinfo, trailing text after
    ``]``, a non-numeric port, whitespace inside, an empty name) is refused.
    """
    if value is None:
        return None
    host = value.strip().lower()  # optional whitespace around a field value is allowed
    if not host:
        return None
    port_text: str | None = None
    if host.startswith("["):
        end = host.find("]")
        if end < 0:
            return None
        name = host[1:end]
        rest = host[end + 1 :]
        if rest:
            if not rest.startswith(":"):
                return None
            port_text = rest[1:]
        try:
            name = str(ipaddress.IPv6Address(name))
        except ValueError:
            return None
    else:
        name, sep, port_part = host.partition(":")
        if sep:
            port_text = port_part
        if not _REG_NAME.fullmatch(name):
            return None
    port: int | None = None
    if port_text is not None:
        if not _PORT.fullmatch(port_text):
            return None
        port = int(port_text)
        if not 0 < port <= 65535:
            return None
    return HostHeader(name, port)


def is_loopback_name(name: str | None) -> bool:
    """``localhost``, an IPv4 address in 127.0.0.0/8 or ``::1`` (brackets optional)."""
    if not name:
        return False
    name = name.strip().lower()
    if name == "localhost":
        return True
    if name.startswith("[") and name.endswith("]"):
        name = name[1:-1]
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return False  # a Host of [::ffff:127.0.0.1] is nothing a real client sends
    # Only canonical dotted-quad IPv4 parses here: "127.1" or "0x7f.0.0.1" do not.
    return address.is_loopback


def host_is_loopback(value: str | None) -> bool:
    """True when a ``Host`` header parses strictly and names a loopback host."""
    parsed = parse_host(value)
    return parsed is not None and is_loopback_name(parsed.name)


def is_loopback_address(address: str | None) -> bool:
    """True for a socket peer address on loopback (``127.x``, ``::1``, ``::ffff:127.x``)."""
    if not address:
        return False
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped.is_loopback
    return ip.is_loopback


def is_loopback_url(url: str) -> bool:
    """True when a URL's host is a loopback name (for cdpUrl settings and endpoints)."""
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return False
    return is_loopback_name(host)


def tokens_equal(given: str | bytes | None, expected: str | bytes | None) -> bool:
    """Constant-time token comparison over UTF-8 bytes; empty never matches.

    ``secrets.compare_digest`` raises TypeError for ``str`` with non-ASCII characters,
    which turned a hostile Authorization header into a 500; bytes compare fine.
    """
    if not given or not expected:
        return False
    return secrets.compare_digest(_as_bytes(given), _as_bytes(expected))


def _as_bytes(value: str | bytes) -> bytes:
    if isinstance(value, bytes):
        return value
    return value.encode("utf-8", "surrogatepass")


def bearer_token(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` value, else ``None``."""
    if authorization and authorization[:7].lower() == "bearer ":
        return authorization[7:].strip()
    return None


def headers_from_asgi(raw: Iterable[tuple[bytes, bytes]]) -> list[tuple[str, str]]:
    """ASGI ``scope["headers"]`` as ``(lowercase name, value)`` pairs, duplicates kept."""
    return [(k.decode("latin-1").lower(), v.decode("latin-1")) for k, v in raw]


def headers_from_pairs(raw: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """``(name, value)`` pairs (e.g. ``websockets`` ``headers.raw_items()``), names lowercased."""
    return [(k.lower(), v) for k, v in raw]


def header_values(headers: Headers, name: str) -> list[str]:
    """Every value of header ``name`` (lowercase), in order."""
    return [v for k, v in headers if k == name]


def single_header(headers: Headers, name: str) -> tuple[str | None, bool]:
    """``(value, ok)``: the value of a header allowed at most once; ``ok`` False if repeated."""
    values = header_values(headers, name)
    if len(values) > 1:
        return None, False
    return (values[0] if values else None), True


def check_transport(client_address: str | None, headers: Headers) -> Refusal | None:
    """Refuse non-loopback peers and a missing, repeated or non-loopback ``Host``.

    ``client_address`` None means the transport has no peer address (an in-process ASGI
    call, a Unix socket): nothing to check there.
    """
    if client_address is not None and not is_loopback_address(client_address):
        return Refusal(
            403,
            "forbidden_client",
            f"connections from {client_address} are refused",
            "browserdeck only serves this machine (127.0.0.1)",
        )
    host, once = single_header(headers, "host")
    if not once:
        return Refusal(
            400,
            "forbidden_host",
            "the request carries more than one Host header",
            "send exactly one Host header, e.g. Host: 127.0.0.1:<port>",
        )
    if not host_is_loopback(host):
        shown = (host or "")[:100]
        return Refusal(
            403,
            "forbidden_host",
            f"Host {shown!r} is not a loopback name",
            "call it as http://127.0.0.1:<port> (DNS-rebinding protection)",
        )
    return None


def is_own_origin(origin: str, headers: Headers, port: int) -> bool:
    """``origin`` is this endpoint's own: ``http://<loopback name>:<port>``, the same
    name and port as the request's Host, and ``port`` the one we listen on.

    Only a page served from this very port sends that Origin (a browser writes the page's
    origin, never the target's), so a page on another local port (localhost:3000) or a
    rebound name (evil.example) is not it. Parsed as strictly as a Host.
    """
    scheme, sep, rest = origin.partition("://")
    if scheme.lower() != "http" or not sep:
        return False
    mine = parse_host(rest)
    host = parse_host(single_header(headers, "host")[0])
    if mine is None or host is None or mine.port is None or host.port is None:
        return False
    return (
        is_loopback_name(mine.name)
        and (mine.name, mine.port) == (host.name, host.port)
        and mine.port == port
    )


def check_origin(
    headers: Headers, allowed: Iterable[str] = (), *, own_port: int | None = None
) -> Refusal | None:
    """Refuse a request from a web page (any ``Origin`` not in ``allowed``), or two Origins.

    ``own_port``: the port this surface listens on, when its own origin is allowed
    (``is_own_origin``)."""
    values = header_values(headers, "origin")
    if len(values) > 1:
        return Refusal(
            403,
            "forbidden_origin",
            "the request carries more than one Origin header",
            "call it from a local program, not from a browser page",
        )
    if not values or values[0] == "":
        return None
    origin = values[0]
    if origin in set(allowed):
        return None
    if own_port is not None and is_own_origin(origin, headers, own_port):
        return None
    return Refusal(
        403,
        "forbidden_origin",
        f"requests from web pages (Origin {origin[:100]!r}) are refused",
        "call it from a local program, not from a browser page",
    )


def origin_of(headers: Headers) -> str | None:
    """The request's single Origin (None when absent or repeated: repeated is refused)."""
    value, once = single_header(headers, "origin")
    return value if once else None


def check_token(
    headers: Headers,
    expected: str,
    *,
    extra: Iterable[str] = (),
    what: str = "API token",
    hint: str = "send 'Authorization: Bearer <token>'; `browserdeck token` prints it",
) -> Refusal | None:
    """Refuse unless the bearer token (or one of ``extra``, e.g. ``?token=``) matches."""
    authorization, once = single_header(headers, "authorization")
    candidates = [bearer_token(authorization)] if once else []
    candidates.extend(extra)
    if any(tokens_equal(c, expected) for c in candidates):
        return None
    return Refusal(401, "unauthorized", f"missing or wrong {what}", hint)


def peer_uid(sock: socket.socket) -> int | None:
    """The uid of the process at the other end of a Unix socket (Linux ``SO_PEERCRED``).

    None where the kernel does not say (another system, not a Unix socket).
    """
    found = peer_credentials(sock)
    return found[1] if found is not None else None


def peer_credentials(sock: socket.socket) -> tuple[int, int] | None:
    """``(pid, uid)`` of the process that connected to a Unix socket (Linux
    ``SO_PEERCRED``, as of its ``connect``); None where the kernel does not say."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None or sock.family != getattr(socket, "AF_UNIX", None):
        return None
    try:
        raw = sock.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
    except OSError:
        return None
    pid, uid, _gid = struct.unpack("3i", raw)
    return int(pid), int(uid)


def check_peer_uid(uid: int | None) -> Refusal | None:
    """The Unix-socket surface's stand-in for the token: the caller must be this user.

    The socket sits in a 0700 folder of ours (paths.runtime_path), so nobody else can
    reach it in the first place; this is the second lock, and it holds for root too (a
    process of another user that root lets through the folder is still refused).
    """
    if uid is not None and uid == os.geteuid():
        return None
    return Refusal(
        403,
        "forbidden_user",
        "the API socket serves only the user browserdeck runs as"
        + (f" (the caller is uid {uid})" if uid is not None else ""),
        "run the command as the user who runs browserdeck",
    )


def check_request(
    client_address: str | None,
    headers: Headers,
    *,
    token: str,
    allowed_origins: Iterable[str] = (),
    extra_tokens: Iterable[str] = (),
) -> Refusal | None:
    """Transport, then origin, then token: the whole guard for a surface without quirks."""
    return (
        check_transport(client_address, headers)
        or check_origin(headers, allowed_origins)
        or check_token(headers, token, extra=extra_tokens)
    )


__all__ = [
    "LOOPBACK_NAMES",
    "HostHeader",
    "Refusal",
    "bearer_token",
    "check_origin",
    "check_peer_uid",
    "check_request",
    "check_token",
    "check_transport",
    "header_values",
    "headers_from_asgi",
    "headers_from_pairs",
    "host_is_loopback",
    "is_loopback_address",
    "is_loopback_name",
    "is_loopback_url",
    "is_own_origin",
    "origin_of",
    "parse_host",
    "peer_uid",
    "single_header",
    "tokens_equal",
]
