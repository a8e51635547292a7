"""The one error type the core raises, and its HTTP mapping.

Every message follows the same shape so a person and an LLM can both act on it:
``message`` says what happened and why; ``hint`` says what to do next.  Routes
never build error bodies by hand: they raise one of these and the API layer
turns it into ``{"error": {"code", "message", "hint"}}`` with ``status``.
"""

from __future__ import annotations

# Not `from typing import`: typing costs a CLI call about a fifth of its start-up (issue 14).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class BrowserdeckError(Exception):
    """A failure with a precise, actionable message."""

    status: int = 400
    code: str = "bad_request"

    def __init__(
        self,
        message: str,
        *,
        hint: str | None = None,
        code: str | None = None,
        status: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        if code is not None:
            self.code = code
        if status is not None:
            self.status = status

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "hint": self.hint}

    def __str__(self) -> str:
        return f"{self.message} ({self.hint})" if self.hint else self.message


class InvalidInput(BrowserdeckError):
    status = 400
    code = "invalid_input"


class Unauthorized(BrowserdeckError):
    status = 401
    code = "unauthorized"


class Forbidden(BrowserdeckError):
    status = 403
    code = "forbidden"


class NotFound(BrowserdeckError):
    status = 404
    code = "not_found"


class Conflict(BrowserdeckError):
    status = 409
    code = "conflict"


class Disabled(BrowserdeckError):
    status = 503
    code = "disabled"


class Unavailable(BrowserdeckError):
    """The browser (or relay, or extension) that the request needs is not there."""

    status = 503
    code = "unavailable"


class ActionTimeout(BrowserdeckError):
    status = 504
    code = "timeout"


class ConfigError(BrowserdeckError):
    """The config file cannot be read or a value in it is invalid."""

    status = 500
    code = "config_error"
