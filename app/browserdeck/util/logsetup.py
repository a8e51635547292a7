"""Logging to ``<state dir>/log/browserdeck.log`` (rotated) and to stderr.

Tokens are never logged: nothing in browserdeck passes one to a logger, and this
filter blanks any ``Bearer …`` that a library might print anyway, and every secret of
the vault (secrets/redact.py).
"""

from __future__ import annotations

import logging
import logging.handlers
import re
import sys

from browserdeck.util import paths

_BEARER = re.compile(r"(Bearer\s+)[A-Za-z0-9_\-\.=]+", re.IGNORECASE)


class RedactTokens(logging.Filter):
    """Blanks tokens, and the user's secrets (secrets/redact.py: a page's error may quote a value
    typed into it), in the message and in a traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if "earer" in message:
            message = _BEARER.sub(r"\1<redacted>", message)
        # A secret reaches a log line only in page text or a call's error, both of which come
        # after the front door and the engine imported secrets/redact.py: before that (serve's
        # early start, whose time counts) there is nothing to take out, and nothing to import.
        redact = sys.modules.get("browserdeck.secrets.redact")
        clean = redact.text(message) if redact is not None else message
        if clean is not record.msg:
            record.msg, record.args = clean, None
        if redact is not None and (record.exc_info or record.exc_text):  # maybe formatted
            text = record.exc_text or _FORMATTER.formatException(record.exc_info)  # type: ignore[arg-type]
            record.exc_text = redact.text(text)
        return True


_FORMATTER = logging.Formatter()


def setup(level: int = logging.INFO, *, stderr: bool = True) -> None:
    root = logging.getLogger()
    if getattr(root, "_browserdeck", False):
        return
    root.setLevel(level)
    fmt = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    file_handler = logging.handlers.RotatingFileHandler(
        paths.log_dir() / "browserdeck.log", maxBytes=5 * 2**20, backupCount=3, encoding="utf-8"
    )
    file_handler.setFormatter(fmt)
    file_handler.addFilter(RedactTokens())
    root.addHandler(file_handler)
    if stderr:
        console = logging.StreamHandler()
        console.setFormatter(logging.Formatter("browserdeck: %(levelname)s %(message)s"))
        console.addFilter(RedactTokens())
        console.setLevel(logging.WARNING)
        root.addHandler(console)
    # Chatty libraries: their INFO lines are noise for our users.
    for name in ("httpx", "httpcore", "websockets", "uvicorn.error", "asyncio"):
        logging.getLogger(name).setLevel(logging.WARNING)
    root._browserdeck = True  # type: ignore[attr-defined]


def set_max_mb(max_mb: int) -> None:
    """The logMaxMb setting: the rotated log files together stay under it."""
    for handler in logging.getLogger().handlers:
        if isinstance(handler, logging.handlers.RotatingFileHandler):
            handler.maxBytes = max(1, max_mb * 2**20 // (handler.backupCount + 1))
