"""API and relay tokens: the OS keyring, else a 0600 file; never logged.

``BROWSERDECK_TOKEN`` overrides the API token (handy for CI and for clients
that read it from their environment). A token is 32 random bytes, base64url.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import secrets as _secrets
from pathlib import Path

from browserdeck.util import paths
from browserdeck.util.files import write_atomic

log = logging.getLogger(__name__)

SERVICE = "browserdeck"
TOKEN_ENV = {"api": "BROWSERDECK_TOKEN", "relay": "BROWSERDECK_RELAY_TOKEN"}
# What a stored service token may be: visible ASCII, as it is sent as a header.
TOKEN_RE = re.compile(r"^[!-~]{1,4096}$")


def new_token() -> str:
    return _secrets.token_urlsafe(32)


def keyring_get(entry: str) -> str | None:
    """The OS keyring's ``entry`` of browserdeck's service; None when it has none or no
    keyring works here."""
    try:
        import keyring
        from keyring.errors import KeyringError, NoKeyringError
    except ImportError:  # pragma: no cover - keyring is a dependency
        return None
    try:
        value = keyring.get_password(SERVICE, entry)
    except (NoKeyringError, KeyringError, RuntimeError):
        return None
    return str(value) if value else None


def keyring_set(entry: str, value: str) -> bool:
    """Keep ``value`` as the keyring's ``entry``; False when no keyring takes it (read back:
    a keyring that accepts and drops writes, the null backend, counts as none)."""
    try:
        import keyring
        from keyring.errors import KeyringError, NoKeyringError
    except ImportError:  # pragma: no cover
        return False
    try:
        keyring.set_password(SERVICE, entry, value)
    except (NoKeyringError, KeyringError, RuntimeError):
        return False
    return keyring_get(entry) == value


def keyring_delete(entry: str) -> None:
    try:
        import keyring
        from keyring.errors import KeyringError, NoKeyringError, PasswordDeleteError
    except ImportError:  # pragma: no cover
        return
    with contextlib.suppress(NoKeyringError, KeyringError, PasswordDeleteError, RuntimeError):
        keyring.delete_password(SERVICE, entry)


def _keyring_get(kind: str) -> str | None:
    return keyring_get(f"{kind}-token")


def _file_get(path: Path) -> str | None:
    try:
        value = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    return value or None


def _file_set(path: Path, value: str) -> None:
    """Write with mode 0600 from the first byte, then atomically replace."""
    write_atomic(path, value + "\n", mode=0o600)


def get_token(kind: str = "api", *, create: bool = True) -> str | None:
    """The token of ``kind`` ("api" or "relay"): env override, keyring, 0600 file, or a new one."""
    env = os.environ.get(TOKEN_ENV.get(kind, ""))
    if env:
        return env
    value = _keyring_get(kind) or _file_get(paths.token_file(kind))
    if value or not create:
        return value
    value = new_token()
    store_token(kind, value)
    return value


def location(kind: str = "api") -> str:
    """Where the ``kind`` token is kept, for `browserdeck paths` (never the token itself)."""
    if os.environ.get(TOKEN_ENV.get(kind, "")):
        return f"${TOKEN_ENV[kind]} (environment)"
    if _keyring_get(kind):
        return f"the OS keyring (service {SERVICE!r}, entry '{kind}-token')"
    return str(paths.token_file(kind))


def store_token(kind: str, value: str) -> str:
    """Store in the keyring when it works, else in the 0600 file. Returns where it went."""
    # Read back (keyring_set): a keyring that accepts and drops writes (the null backend
    # that `keyring --disable` selects) would otherwise hand out a new token on every call.
    if keyring_set(f"{kind}-token", value):
        # A stale fallback file would shadow nothing (keyring is read first) but would
        # leave a copy of an old secret on disk.
        paths.token_file(kind).unlink(missing_ok=True)
        return "keyring"
    _file_set(paths.token_file(kind), value)
    log.info("stored the %s token in %s (no OS keyring backend)", kind, paths.token_file(kind))
    return str(paths.token_file(kind))


def delete_token(kind: str) -> None:
    """Forget a stored secret (a deleted remote profile's service token), wherever it is."""
    keyring_delete(f"{kind}-token")
    paths.token_file(kind).unlink(missing_ok=True)


def rotate_token(kind: str = "api") -> str:
    value = new_token()
    store_token(kind, value)
    return value
