"""The vault: the user's secrets (passwords, one-time code seeds) that agents use by name.

Each secret has a name, the origins it may be typed into, a value and an optional TOTP
seed. Names and origins are kept in ``<data>/vault/vault.json`` (0600, in a 0700
folder); values in the OS keyring (one entry ``secret:NAME`` of the ``browserdeck``
service) or, where no keyring works, in that same 0600 file, as the tokens are
(secrets/tokens.py).

Who writes: the user only, with ``browserdeck secret set|rm`` (this module, in the CLI's
own process: no route of the service sets or reads a value) and the settings dialog's
Secrets page (in-process). The service reads the file again whenever it changed (a stat
per use). Agents see names and origins (``GET /secrets``, ``browser_secrets``), and
write ``<secret>NAME</secret>`` or ``<totp>NAME</totp>`` where the value goes; the
engine puts it in at the last moment, on an allowed origin only (engine/placeholders.py),
and ``secrets/redact.py`` takes every known value out of what leaves the service.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from browserdeck.errors import Forbidden, InvalidInput, NotFound
from browserdeck.secrets import tokens, totp
from browserdeck.util import paths

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

NAME_RULE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
# Shorter values would be masked wherever those few characters appear in a page.
MIN_VALUE_CHARS = 4
MAX_VALUE_CHARS = 4096
# A one-time code typed is redacted this long after (it may show up in a later answer).
CODE_MEMORY_SECONDS = 600.0
_DEFAULT_PORTS = {"http": "80", "https": "443"}
_LIST_HINT = "the user adds secrets with `browserdeck secret set NAME --origin URL` or in Settings"


@dataclass(frozen=True)
class SecretInfo:
    """What anyone may know of a secret: its name, origins, whether it holds a value and
    a one-time code seed, and where its value is kept. Never the value."""

    name: str
    origins: tuple[str, ...]
    value: bool
    totp: bool
    where: str  # "keyring" or "file"

    def allows(self, origin: str) -> bool:
        return any(origin_matches(pattern, origin) for pattern in self.origins)


def name_problem(name: object, what: str = "a secret name") -> str | None:
    """What is wrong with ``name`` as a name (a secret's, a saved auth state's), or None.
    (fullmatch: ``$`` alone lets a trailing newline through.)"""
    if isinstance(name, str) and NAME_RULE.fullmatch(name):
        return None
    return (
        f"{name!r} is not {what}: letters, digits, '_', '.' and '-', at most 64, "
        "starting with a letter or digit"
    )


def check_name(name: str, what: str = "a secret name", example: str = "bank-password") -> str:
    """``name`` if it is one, else ``InvalidInput``."""
    problem = name_problem(name, what)
    if problem:
        raise InvalidInput(problem, hint=f"e.g. {example}")
    return name


def normalize_origin(text: str) -> str:
    """``https://Site.Example:443/`` -> ``https://site.example``; ``https://*.example.com``
    stays a pattern (the domain and every subdomain). Refuses what is not an origin."""
    raw = text.strip()
    parts = urlsplit(raw)
    scheme = parts.scheme.lower()
    hint = "an origin is scheme://host[:port], e.g. https://bank.example or https://*.bank.example"
    if scheme not in ("http", "https") or not parts.netloc:
        raise InvalidInput(f"{text!r} is not an http(s) origin", hint=hint)
    if parts.path not in ("", "/") or parts.query or parts.fragment or "@" in parts.netloc:
        raise InvalidInput(f"{text!r} has more than an origin (a path, query or user)", hint=hint)
    host, _, port = parts.netloc.lower().rpartition(":") if _has_port(parts.netloc) else (
        parts.netloc.lower(), "", ""
    )
    if port and (not port.isdigit() or not 0 < int(port) < 65536):
        raise InvalidInput(f"{text!r} has a bad port", hint=hint)
    body = host[2:] if host.startswith("*.") else host
    if not body or "*" in body or any(c in body for c in "/\\ "):
        raise InvalidInput(f"{text!r} has a bad host", hint=hint)
    if port == _DEFAULT_PORTS[scheme]:
        port = ""
    return f"{scheme}://{host}" + (f":{port}" if port else "")


def _has_port(netloc: str) -> bool:
    tail = netloc.rsplit("]", 1)[-1]  # an IPv6 literal's colons are not a port
    return ":" in tail


def origin_of(url: str) -> str:
    """The origin of a page address, as ``normalize_origin`` writes it ("" if none)."""
    try:
        return normalize_origin(f"{urlsplit(url).scheme}://{urlsplit(url).netloc}")
    except (InvalidInput, ValueError):
        return ""


def origin_matches(pattern: str, origin: str) -> bool:
    if pattern == origin:
        return True
    scheme, _, rest = pattern.partition("://")
    if not rest.startswith("*.") or not origin.startswith(scheme + "://"):
        return False
    base = rest[2:]
    host = origin[len(scheme) + 3 :]
    return host == base or host.endswith("." + base)


class Vault:
    """The secrets of one data folder. Thread-safe; re-read when the file changes."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.path = folder / "vault.json"
        self._lock = threading.RLock()
        self._signature: tuple[int, int, int] | None = None
        self._index: dict[str, dict[str, Any]] = {}
        self._stored: dict[str, dict[str, str]] = {}  # values kept in the file
        self._values: dict[str, dict[str, str]] = {}  # read so far, this signature
        self._codes: deque[tuple[float, str, str]] = deque(maxlen=200)  # (when, name, code)
        self._changes = 0  # reloads and codes typed: what a redactor is built from changed

    # --- reading ---------------------------------------------------------------
    def _fresh(self) -> None:
        try:
            st = os.stat(self.path)
            signature: tuple[int, int, int] | None = (st.st_ino, st.st_mtime_ns, st.st_size)
        except FileNotFoundError:
            signature = None
        if signature == self._signature and (signature is not None or not self._index):
            return
        data: dict[str, Any] = {}
        if signature is not None:
            with contextlib.suppress(FileNotFoundError, ValueError):
                data = json.loads(self.path.read_text(encoding="utf-8"))
        self._index = dict(data.get("secrets") or {})
        self._stored = dict(data.get("values") or {})
        self._values = {}
        self._signature = signature
        self._changes += 1

    def generation(self) -> int:
        """Changes whenever what ``known_values`` lists may have changed."""
        with self._lock:
            self._fresh()
            self._forget_old_codes()
            return self._changes

    def entries(self) -> list[SecretInfo]:
        with self._lock:
            self._fresh()
            return [self._info(name) for name in sorted(self._index)]

    def __bool__(self) -> bool:
        with self._lock:
            self._fresh()
            return bool(self._index)

    def info(self, name: str) -> SecretInfo:
        with self._lock:
            self._fresh()
            if name not in self._index:
                known = ", ".join(sorted(self._index)) or "none"
                raise NotFound(
                    f"there is no secret named {name!r} (secrets: {known})",
                    hint="list them with browser_secrets (GET /secrets); " + _LIST_HINT,
                    code="unknown_secret",
                )
            return self._info(name)

    def _info(self, name: str) -> SecretInfo:
        entry = self._index[name]
        return SecretInfo(
            name,
            tuple(entry.get("origins") or ()),
            bool(entry.get("value", True)),
            bool(entry.get("totp")),
            str(entry.get("where") or "file"),
        )

    def _parts(self, name: str) -> dict[str, str]:
        if name not in self._values:
            if self._index[name].get("where") == "keyring":
                raw = tokens.keyring_get(f"secret:{name}")
                try:
                    parts = json.loads(raw) if raw else {}
                except ValueError:
                    parts = {}
            else:
                parts = self._stored.get(name) or {}
            self._values[name] = {k: str(v) for k, v in parts.items() if isinstance(v, str)}
        return self._values[name]

    def use(self, kind: str, name: str, origin: str) -> str:
        """The value (``kind`` "secret") or the current one-time code ("totp") of ``name``,
        for a page of ``origin``; refused unless the secret allows that origin."""
        with self._lock:
            info = self.info(name)
            shown = origin or "a page with no origin (about:blank, data:)"
            if not origin or not info.allows(origin):
                raise Forbidden(
                    f"secret {name!r} may not be used on {shown}: it is allowed on "
                    f"{', '.join(info.origins)} only",
                    hint="navigate to a page of an allowed origin first; only the user can "
                    "change a secret's origins (`browserdeck secret set` or Settings)",
                    code="secret_origin_refused",
                )
            parts = self._parts(name)
            if kind == "totp":
                if not info.totp or "totp" not in parts:
                    raise InvalidInput(
                        f"secret {name!r} has no one-time code seed",
                        hint=f"use <secret>{name}</secret> for its value; the user adds a seed "
                        "with `browserdeck secret set NAME --totp`",
                        code="no_totp_seed",
                    )
                code = totp.parse(parts["totp"]).code()
                self._codes.append((time.monotonic(), name, code))
                self._changes += 1
                return code
            if not info.value or not parts.get("value"):
                raise InvalidInput(
                    f"secret {name!r} holds only a one-time code seed",
                    hint=f"use <totp>{name}</totp>",
                    code="no_secret_value",
                )
            return parts["value"]

    def known_values(self) -> list[tuple[str, str, str]]:
        """Every value a redaction must find: (value, name, kind), one-time codes typed in
        the last ``CODE_MEMORY_SECONDS`` included."""
        with self._lock:
            self._fresh()
            self._forget_old_codes()
            out = []
            for name in sorted(self._index):
                value = self._parts(name).get("value")
                if value:
                    out.append((value, name, "secret"))
            out += [(code, name, "totp") for _, name, code in self._codes]
            return out

    def _forget_old_codes(self) -> None:
        while self._codes and time.monotonic() - self._codes[0][0] > CODE_MEMORY_SECONDS:
            self._codes.popleft()
            self._changes += 1

    # --- writing (the user: CLI, settings dialog) -------------------------------------
    def set(
        self,
        name: str,
        origins: Iterable[str],
        value: str | None = None,
        *,
        totp_seed: str | None = None,
        drop_totp: bool = False,
    ) -> SecretInfo:
        """Add or change a secret. ``value`` None keeps the stored one (an existing secret:
        new origins only); ``totp_seed`` None keeps the seed, ``drop_totp`` removes it."""
        check_name(name)
        allowed = sorted({normalize_origin(o) for o in origins})
        if not allowed:
            raise InvalidInput(
                f"secret {name!r} needs at least one origin it may be used on",
                hint="e.g. --origin https://bank.example",
            )
        if value is not None:
            value = strip_newline(value)
            if value and not MIN_VALUE_CHARS <= len(value) <= MAX_VALUE_CHARS:
                raise InvalidInput(
                    f"a secret's value must have {MIN_VALUE_CHARS} to {MAX_VALUE_CHARS} "
                    f"characters (this one has {len(value)}): shorter values would be masked "
                    "wherever those characters appear on a page",
                    hint="store the whole password",
                )
        if totp_seed is not None:
            totp_seed = totp_seed.strip()
            totp.parse(totp_seed)  # refused here, not at the first login
        with self._lock, self._locked():
            self._fresh()
            old = self._parts(name) if name in self._index else {}
            parts = dict(old)
            if value is not None:
                parts["value"] = value
            if totp_seed is not None:
                parts["totp"] = totp_seed
            if drop_totp:
                parts.pop("totp", None)
            parts = {k: v for k, v in parts.items() if v}
            if not parts:
                raise InvalidInput(
                    f"secret {name!r} needs a value or a one-time code seed",
                    hint="give the value (prompt or stdin), or a seed with --totp",
                )
            where = "keyring" if tokens.keyring_set(f"secret:{name}", json.dumps(parts)) else "file"
            index = {**self._index}
            index[name] = {
                "origins": allowed,
                "value": "value" in parts,
                "totp": "totp" in parts,
                "where": where,
                "changed": time.time(),
            }
            stored = {k: v for k, v in self._stored.items() if k != name}
            if where == "file":
                stored[name] = parts
            self._write(index, stored)
            self._fresh()
            return self._info(name)

    def remove(self, name: str) -> bool:
        with self._lock, self._locked():
            self._fresh()
            if name not in self._index:
                return False
            if self._index[name].get("where") == "keyring":
                tokens.keyring_delete(f"secret:{name}")
            index = {k: v for k, v in self._index.items() if k != name}
            stored = {k: v for k, v in self._stored.items() if k != name}
            self._write(index, stored)
            return True

    def _write(self, index: dict[str, Any], stored: dict[str, Any]) -> None:
        from browserdeck.util.files import write_atomic

        data: dict[str, Any] = {"version": 1, "secrets": index}
        if stored:
            data["values"] = stored
        write_atomic(self.path, json.dumps(data, indent=1, sort_keys=True) + "\n", mode=0o600)
        self._signature = None  # read back at the next use

    @contextlib.contextmanager
    def _locked(self) -> Any:
        """Across processes too: the CLI and the tray may both write (POSIX; elsewhere the
        last writer wins)."""
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows
            yield
            return
        fd = os.open(self.folder / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
        with os.fdopen(fd, "r+") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)


def strip_newline(value: str) -> str:
    """A value as typed or piped: one trailing newline (``\\n`` or ``\\r\\n``) is not part of it."""
    if value.endswith("\r\n"):
        return value[:-2]
    return value[:-1] if value.endswith("\n") else value


_shared: dict[str | None, Vault] = {}
_shared_lock = threading.Lock()


def shared() -> Vault:
    """The vault of this process's data folder (``BROWSERDECK_HOME`` picks it)."""
    key = os.environ.get(paths.HOME_ENV)
    with _shared_lock:
        found = _shared.get(key)
        if found is None:
            found = _shared[key] = Vault(paths.vault_dir())
        return found
