"""The browserdeck extension's pinned identity.

The manifest carries the public key below as its ``key``, which makes Chrome give
the unpacked extension the same id on every machine and from any folder. The relay
accepts ``/extension`` connections only from this id's origin (plus the relay token:
any local process can forge an Origin header). The private key was thrown away after
generating the public one: it is only needed to pack a .crx for a store, which we do
not do. tests/relay/test_extension_id.py checks the manifest and this file agree.
"""

from __future__ import annotations

import base64
import hashlib

EXTENSION_PUBLIC_KEY = (
    "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA4Q/08GqDKTj+kL27mu2h63yWNzN/GYKiZrnf"
    "+MeayIck/277YKUI9jinBbADKDWjaAU0gdWTVj7H9jaAo94ESJzGhDp638oMbZrt3vjnnyXUSDTRyZUO"
    "6uDyBizqJQkwpHAnnI0jZC/ZMdBRQoECVr4s8TgrpzvAxmmv91IsUu1GHJNfyZKllus4zFdcuH178Rwp"
    "f2d0kk3ouR7lG4U0uMN7vo9sKJ59j/fCqCIE4fKoBCsOnwyd+285Wywwb49bDN2pa3TYEiv6m+xFZia0"
    "pr2qnA0ypKAW+G6IZeEXronj1Aen0aocmdf5wLidLDKYG3li5pWHa/QJEY6kHRi86wIDAQAB"
)


def extension_id_from_key(public_key_b64: str) -> str:
    """Chrome's rule: sha256 of the DER public key, first 32 hex digits mapped 0-f to a-p."""
    digest = hashlib.sha256(base64.b64decode(public_key_b64)).hexdigest()[:32]
    return "".join(chr(ord("a") + int(c, 16)) for c in digest)


EXTENSION_ID = "mhoojloiahbjbhhalhffgoahddppgplb"
EXTENSION_ORIGIN = f"chrome-extension://{EXTENSION_ID}"

__all__ = ["EXTENSION_ID", "EXTENSION_ORIGIN", "EXTENSION_PUBLIC_KEY", "extension_id_from_key"]
