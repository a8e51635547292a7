"""What a recording or a request's details must not show: credentials and secrets.

HAR files and ``browser_network_request`` show headers and bodies a developer reads
later, often elsewhere. While ``redactNetworkSecrets`` is on (the default; a setting,
never an agent's argument) the values of the headers that carry credentials are
replaced by ``[redacted]``, and every value of the vault wherever it appears is replaced
by its placeholder (``redact.text``, the one redaction of every output).
"""

from __future__ import annotations

from collections.abc import Iterable

from browserdeck.secrets import redact

REDACTED = "[redacted]"
CREDENTIAL_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key"}
)


def redact_secrets(text: str) -> str:
    """``text`` with every value of the vault replaced (none stored: ``text`` itself)."""
    return redact.text(text)


def header_value(name: str, value: str) -> str:
    """What a header's value shows: ``[redacted]`` for a credential, else the value with
    stored secrets replaced."""
    if name.lower() in CREDENTIAL_HEADERS:
        return REDACTED
    return redact_secrets(value)


def headers(pairs: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(name, header_value(name, value)) for name, value in pairs]
