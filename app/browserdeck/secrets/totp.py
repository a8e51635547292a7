"""One-time codes (RFC 6238 TOTP, as authenticator apps make them) from a stored seed.

A seed is the base32 text a site shows beside its QR code (spaces and case do not
matter), or the whole ``otpauth://totp/...`` address the QR code holds, whose
``digits``, ``period`` and ``algorithm`` are then used.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import struct
import time
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

from browserdeck.errors import InvalidInput

ALGORITHMS = {"SHA1": hashlib.sha1, "SHA256": hashlib.sha256, "SHA512": hashlib.sha512}
_HINT = (
    "give the base32 text the site shows beside its QR code (e.g. JBSWY3DPEHPK3PXP), or the "
    "otpauth://totp/... address the QR code holds"
)


@dataclass(frozen=True)
class Seed:
    key: bytes
    digits: int = 6
    period: int = 30
    algorithm: str = "SHA1"

    def code(self, at: float | None = None) -> str:
        """The code for the time ``at`` (default: now)."""
        counter = int((time.time() if at is None else at) // self.period)
        mac = hmac.new(self.key, struct.pack(">Q", counter), ALGORITHMS[self.algorithm]).digest()
        offset = mac[-1] & 0x0F
        number = struct.unpack(">I", mac[offset : offset + 4])[0] & 0x7FFFFFFF
        return str(number % 10**self.digits).zfill(self.digits)


def _base32(text: str) -> bytes:
    cleaned = "".join(text.split()).replace("-", "").upper().rstrip("=")
    if not cleaned:
        raise InvalidInput("the one-time code seed is empty", hint=_HINT)
    try:
        return base64.b32decode(cleaned + "=" * (-len(cleaned) % 8))
    except ValueError:
        raise InvalidInput(
            "the one-time code seed is not base32 (letters A-Z and digits 2-7)", hint=_HINT
        ) from None


def parse(text: str) -> Seed:
    """The seed ``text`` names; ``InvalidInput`` saying what is wrong with it."""
    text = text.strip()
    if not text.lower().startswith("otpauth://"):
        return Seed(_base32(text))
    parts = urlsplit(text)
    if parts.netloc.lower() != "totp":
        raise InvalidInput(
            f"only time-based codes (otpauth://totp/...) are supported, not {parts.netloc!r}",
            hint=_HINT,
        )
    query = {k.lower(): v[-1] for k, v in parse_qs(parts.query).items()}
    if "secret" not in query:
        raise InvalidInput("the otpauth address has no secret= parameter", hint=_HINT)
    algorithm = query.get("algorithm", "SHA1").upper()
    if algorithm not in ALGORITHMS:
        raise InvalidInput(
            f"unknown algorithm {algorithm!r} in the otpauth address",
            hint="SHA1, SHA256 or SHA512",
        )
    try:
        digits, period = int(query.get("digits", "6")), int(query.get("period", "30"))
    except ValueError:
        raise InvalidInput("digits and period in the otpauth address must be numbers") from None
    if not (6 <= digits <= 10 and 1 <= period <= 600):
        raise InvalidInput(
            f"digits={digits}, period={period}: expected 6-10 digits and a period of 1-600 s"
        )
    return Seed(_base32(query["secret"]), digits, period, algorithm)
