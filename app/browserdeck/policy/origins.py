"""Where an agent may go: the ``allowedOrigins`` / ``blockedOrigins`` rules, read once.

A rule is an origin or a glob of one, written as people write them:

* ``https://example.com``: that origin exactly (its scheme's default port);
* ``https://example.com:8443``, ``http://localhost:*``: a port, or any port;
* ``example.com``: that host on any scheme and port;
* ``*.example.com``: the host and every subdomain (``example.com`` itself too);
* ``*``: every host (``blockedOrigins: ["*"]`` with an allow list reads naturally).

Only network addresses are judged (``http``, ``https``, ``ws``, ``wss``): a WebSocket
counts as its page's scheme (``wss`` is ``https``), and ``data:``, ``blob:``,
``about:`` pages have no origin to refuse. A URL is refused when a ``blockedOrigins``
rule matches it, or when ``allowedOrigins`` is not empty and none of its rules does;
a block wins over an allow. Each refusal names the rule (``refusal``), so an agent and
a person can see why.

The rules take three forms, all built here from one parse so they cannot disagree: a
Python regular expression over the normalised origin ``scheme://host:port`` (the front
door's check, the engine's check of a navigation), the same expression's source for the
in-page guard of WebSockets and popups (JavaScript reads it alike), and URL patterns for
Chromium's ``Network.setBlockedURLs`` (subresources, EventSource, beacons).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from browserdeck.errors import Forbidden

if TYPE_CHECKING:
    from collections.abc import Iterable

# The schemes a rule judges, by family: a WebSocket is judged as its http(s) twin.
FAMILY = {"http": "http", "ws": "http", "https": "https", "wss": "https"}
DEFAULT_PORT = {"http": 80, "https": 443}
_HOST_GLOB = re.compile(r"^[a-z0-9*][a-z0-9.*-]*$")
_RULE = re.compile(r"^(?:(?P<scheme>[a-z*]+)://)?(?P<host>[^:/]+)(?::(?P<port>\d+|\*))?/?$")
MAX_RULES = 500
MAX_RULE_CHARS = 300


class RuleError(ValueError):
    """A rule that cannot be read, with what is wrong in words (the setting's refusal)."""


@dataclass(frozen=True)
class Rule:
    """One parsed rule: the text as written, and the parts it matches."""

    text: str
    family: str | None  # "http", "https", or None: any
    host: str  # a host glob: "example.com", "*.example.com", "api-*.corp", "*"
    port: int | None  # None: any port

    @functools.cached_property
    def regex(self) -> str:
        """The source of a regular expression over ``family://host:port`` (Python and
        JavaScript read it the same: only groups, classes, escapes and anchors)."""
        scheme = self.family or "https?"
        if self.host == "*":
            host = "[^:/]+"
        elif self.host.startswith("*."):
            host = r"(?:[^:/]+\.)?" + _host_regex(self.host[2:])
        else:
            host = _host_regex(self.host)
        port = r"\d+" if self.port is None else str(self.port)
        return f"^{scheme}://{host}:{port}$"

    @functools.cached_property
    def compiled(self) -> re.Pattern[str]:
        return re.compile(self.regex)

    def url_patterns(self) -> list[str]:
        """The rule as URL patterns (the URLPattern syntax of ``Network.setBlockedURLs``)."""
        # Chromium's list stops no WebSocket (the in-page guard does): http(s) only.
        schemes = (self.family,) if self.family else ("http", "https")
        hosts = [self.host[2:], self.host] if self.host.startswith("*.") else [self.host]
        if self.port is None:
            port = ":*"
        elif self.family is not None and self.port == DEFAULT_PORT[self.family]:
            port = ""  # a URL pattern's default port is the one its scheme omits
        else:
            port = f":{self.port}"
        return [f"{s}://{h}{port}/*" for s in schemes for h in hosts]


def _host_regex(glob: str) -> str:
    return "".join("[^:/]*" if c == "*" else re.escape(c) for c in glob)


def parse_rule(raw: object) -> Rule:
    """One rule from its text; ``RuleError`` says what is wrong with it."""
    if not isinstance(raw, str):
        raise RuleError(f"{raw!r} is not text")
    text = raw.strip().lower()
    if not text:
        raise RuleError("an empty rule")
    if len(text) > MAX_RULE_CHARS:
        raise RuleError(f"a rule of {len(text)} characters (at most {MAX_RULE_CHARS})")
    if "[" in text or text.count(":") > 2:
        raise RuleError(f"{raw!r}: IPv6 addresses are not supported; use a host name")
    match = _RULE.match(text)
    if match is None:
        raise RuleError(
            f"{raw!r} is not an origin: write scheme://host[:port], host or *.host, "
            "without a path (e.g. https://example.com, *.example.com, http://localhost:*)"
        )
    scheme, host, port = match.group("scheme"), match.group("host"), match.group("port")
    if scheme is not None and scheme != "*" and scheme not in FAMILY:
        raise RuleError(f"{raw!r}: scheme {scheme!r} is not one of http, https, ws, wss or *")
    if not _HOST_GLOB.match(host) or ".." in host or host.endswith("."):
        raise RuleError(f"{raw!r}: {host!r} is not a host name (letters, digits, '.', '-', '*')")
    if "*" in host and host != "*" and host.count("*") > 3:
        raise RuleError(f"{raw!r}: too many '*' in the host")
    family = FAMILY.get(scheme or "")
    if port == "*" or (port is None and family is None):
        number = None
    elif port is None:
        assert family is not None
        number = DEFAULT_PORT[family]
    else:
        number = int(port)
        if not 0 < number < 65536:
            raise RuleError(f"{raw!r}: port {number} is out of range")
    return Rule(raw.strip(), family, host, number)


def parse_rules(raw: Iterable[object]) -> tuple[Rule, ...]:
    return tuple(parse_rule(r) for r in raw)


def check_rules(value: object) -> list[str]:
    """A setting's list of rules, each checked; the texts as written (a line or comma
    separated text from a form is split first)."""
    if isinstance(value, str):
        value = [v for v in re.split(r"[\s,]+", value) if v]
    if not isinstance(value, list):
        raise RuleError("expected a list of origins")
    if len(value) > MAX_RULES:
        raise RuleError(f"{len(value)} rules (at most {MAX_RULES})")
    return [parse_rule(v).text for v in value]


def origin_of(url: str) -> str | None:
    """``family://host:port`` of a network URL; None for anything else (data:, about:,
    blob:, a URL that does not parse)."""
    try:
        parts = urlsplit(url.strip())
        family = FAMILY.get(parts.scheme.lower())
        if family is None or not parts.hostname:
            return None
        port = parts.port or DEFAULT_PORT[family]
    except ValueError:
        return None
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    return f"{family}://{host}:{port}"


@dataclass(frozen=True)
class OriginRules:
    """The rules one profile obeys: its own, else the global ones."""

    allowed: tuple[Rule, ...] = ()
    blocked: tuple[Rule, ...] = ()

    @property
    def active(self) -> bool:
        return bool(self.allowed or self.blocked)

    def refusal(self, url: str) -> str | None:
        """Why ``url`` is refused, naming the rule; None when it may load."""
        origin = origin_of(url)
        if origin is None:
            return None
        for rule in self.blocked:
            if rule.compiled.match(origin):
                return f"blockedOrigins rule {rule.text!r}"
        if self.allowed and not any(rule.compiled.match(origin) for rule in self.allowed):
            shown = ", ".join(repr(r.text) for r in self.allowed[:5])
            more = f" and {len(self.allowed) - 5} more" if len(self.allowed) > 5 else ""
            return f"not in allowedOrigins ({shown}{more})"
        return None

    def block_patterns(self) -> list[dict[str, Any]]:
        """``Network.setBlockedURLs``'s ``urlPatterns``: the first that matches decides, so
        blocks come first, then allows, then (with an allow list) everything else."""
        out = [
            {"urlPattern": p, "block": True} for rule in self.blocked for p in rule.url_patterns()
        ]
        out += [
            {"urlPattern": p, "block": False} for rule in self.allowed for p in rule.url_patterns()
        ]
        if self.allowed:
            out += [{"urlPattern": f"{s}://*:*/*", "block": True} for s in DEFAULT_PORT]
        return out

    def summary(self) -> str | None:
        """The rules in a line for people (the panel): None when there are none."""
        parts = []
        if self.allowed:
            parts.append("only " + ", ".join(r.text for r in self.allowed))
        if self.blocked:
            parts.append("never " + ", ".join(r.text for r in self.blocked))
        return "Sites agents may visit: " + "; ".join(parts) if parts else None

    def script_rules(self) -> dict[str, Any]:
        """The rules as the in-page guard reads them (regular expression sources)."""
        return {
            "blocked": [[r.text, r.regex] for r in self.blocked],
            "allowed": [[r.text, r.regex] for r in self.allowed],
        }


NO_RULES = OriginRules()


@functools.lru_cache(maxsize=64)
def rules_of(allowed: tuple[str, ...], blocked: tuple[str, ...]) -> OriginRules:
    """The parsed rules of two settings' values (cached: read on every call)."""
    if not allowed and not blocked:
        return NO_RULES
    return OriginRules(parse_rules(allowed), parse_rules(blocked))


def refused(url: str, why: str) -> Forbidden:
    """The error of a navigation the rules refuse, naming the rule."""
    return Forbidden(
        f"browserdeck refused to load {url[:500]}: {why}",
        hint="the user's settings keep agents off this site (allowedOrigins / "
        "blockedOrigins); go somewhere allowed, or ask the user to change the setting",
        code="origin_refused",
    )
