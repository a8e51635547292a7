"""What a recording or a request's details must not show: credentials and secrets.

HAR files and ``browser_network_request`` show headers and bodies a developer reads
later, often elsewhere. While ``redactNetworkSecrets`` is on (the default; a setting,
never an agent's argument) the values of the headers that carry credentials are
replaced by ``[redacted]``, and so is every stored secret wherever it appears
(``SECRET_REDACTORS``: the vault of stored secrets adds its own function there).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

REDACTED = "[redacted]"
CREDENTIAL_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key"}
)

# Functions that replace stored secrets in a text (the secrets vault registers one):
# each is given a text and answers it with every secret it knows replaced.
SECRET_REDACTORS: list[Callable[[str], str]] = []


def redact_secrets(text: str) -> str:
    """``text`` with every stored secret replaced (no secrets stored: ``text`` itself)."""
    for redactor in SECRET_REDACTORS:
        text = redactor(text)
    return text


def header_value(name: str, value: str) -> str:
    """What a header's value shows: ``[redacted]`` for a credential, else the value with
    stored secrets replaced."""
    if name.lower() in CREDENTIAL_HEADERS:
        return REDACTED
    return redact_secrets(value)


def headers(pairs: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(name, header_value(name, value)) for name, value in pairs]
