"""The one error type the core raises.

Every message follows the same shape so a person and an LLM can both act on it:
``message`` says what happened and why; ``hint`` says what to do next; ``code`` is
stable and machine-readable. The class says what kind of failure it is (bad input,
not found, conflict, unavailable ...), never how a transport reports it: the core
knows no HTTP. The API maps class and code to an HTTP status at its edge
(``api/errors.py``, one table); MCP turns any of them into a tool error.
"""

from __future__ import annotations

# Not `from typing import`: typing costs a CLI call about a fifth of its start-up (issue 14).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class BrowserdeckError(Exception):
    """A failure with a precise, actionable message."""

    code: str = "bad_request"

    def __init__(
        self,
        message: str,
        *,
        hint: str | None = None,
        code: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        if code is not None:
            self.code = code

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "hint": self.hint}

    def __str__(self) -> str:
        return f"{self.message} ({self.hint})" if self.hint else self.message


class InvalidInput(BrowserdeckError):
    code = "invalid_input"


class Unauthorized(BrowserdeckError):
    code = "unauthorized"


class Forbidden(BrowserdeckError):
    code = "forbidden"


class NotFound(BrowserdeckError):
    code = "not_found"


class Conflict(BrowserdeckError):
    code = "conflict"


class Disabled(BrowserdeckError):
    code = "disabled"


class Unavailable(BrowserdeckError):
    """The browser (or relay, or extension) that the request needs is not there."""

    code = "unavailable"


class ActionTimeout(BrowserdeckError):
    code = "timeout"


class ConfigError(BrowserdeckError):
    """The config file cannot be read or a value in it is invalid."""

    code = "config_error"
