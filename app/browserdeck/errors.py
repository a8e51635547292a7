"""The one error type the core raises, and what it tells the caller to do next.

Every message follows the same shape so a person and an LLM can both act on it:
``message`` says what happened and why; ``hint`` says what to do next; ``code`` is
stable and machine-readable. A hint that names something to do (take a snapshot,
list tabs, start the profile) names it as a ``Step`` inside a ``Hint``, and the edge
that answers says it in its caller's words: a route to HTTP clients, a command to the
CLI, a tool to MCP clients (``hint_for``). The class says what kind of failure it is (bad input,
not found, conflict, unavailable ...), never how a transport reports it: the core
knows no HTTP. The API maps class and code to an HTTP status at its edge
(``api/errors.py``, one table); MCP turns any of them into a tool error.
"""

from __future__ import annotations

# Not `from typing import`: typing costs a CLI call about a fifth of its start-up.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal

    # Whose words a hint is said in: HTTP clients (routes), the CLI (its commands), MCP
    # clients (tool names).
    Via = Literal["api", "cli", "mcp"]


class Step:
    """Something a caller can do next, named the way each kind of caller does it.

    A way in that lacks the step falls back: the CLI to the route; MCP to the CLI command
    (an agent's user runs it on this machine; a route needs the API token), then the
    route. A step about one profile names it with ``of``:
    ``RESET_PROFILE.of(profile="work")``.
    """

    __slots__ = ("command", "route", "tool")

    def __init__(self, route: str, command: str | None = None, tool: str | None = None) -> None:
        self.route = route
        self.command = command
        self.tool = tool

    def of(self, **values: object) -> Step:
        """This step with its ``{placeholders}`` filled (``str.format``; braces meant
        literally in a step that takes values are doubled)."""
        return Step(
            self.route.format_map(values),
            self.command.format_map(values) if self.command else None,
            self.tool.format_map(values) if self.tool else None,
        )

    def say(self, via: Via) -> str:
        if via == "mcp" and self.tool:
            return self.tool
        if via in ("cli", "mcp") and self.command:
            return f"`{self.command}`"
        return self.route

    def __repr__(self) -> str:
        return f"Step({self.route!r})"


# The steps hints name; a step added here is said right by every way in.
SNAPSHOT = Step("GET /snapshot", "browserdeck snapshot", "browser_snapshot")
TABS = Step("GET /tabs", "browserdeck tabs", "browser_tabs action=list")
OPEN_TAB = Step("POST /tabs/open", "browserdeck open URL", "browser_tabs action=new")
FOCUS_TAB = Step("POST /tabs/focus", "browserdeck focus ID", "browser_tabs action=select")
CLOSE_TAB = Step("DELETE /tabs/{targetId}", "browserdeck close ID", "browser_tabs action=close")
STATUS = Step("GET /", "browserdeck status", "browser_profiles action=list")
PROFILES = Step("GET /profiles", "browserdeck profiles", "browser_profiles action=list")
CREATE_PROFILE = Step("POST /profiles/create", "browserdeck create-profile NAME")
DELETE_PROFILE = Step("DELETE /profiles/{name}", "browserdeck delete-profile NAME")
START = Step("POST /start", "browserdeck start", "browser_profiles action=start")
STOP = Step("POST /stop", "browserdeck stop", "browser_profiles action=stop")
# The same, for one profile (``.of(profile=...)``). No tool shows a profile's whole
# status (a remote service's health): MCP clients are told the command.
STATUS_OF = Step("GET /?profile={profile}", "browserdeck status --profile {profile}")
START_OF = Step(
    "POST /start?profile={profile}",
    "browserdeck start --profile {profile}",
    "browser_profiles action=start name={profile}",
)
STOP_OF = Step(
    "POST /stop?profile={profile}",
    "browserdeck stop --profile {profile}",
    "browser_profiles action=stop name={profile}",
)
# Admin steps no MCP tool does: MCP clients are told the command.
RESET_PROFILE = Step(
    "POST /reset-profile?profile={profile}", "browserdeck reset-profile --profile {profile}"
)
REMOTE_TOKEN = Step(
    'POST /profiles/token?profile={profile} {{"token": "…"}}',
    "browserdeck remote-token --profile {profile}",
)
# Pairing is the user's, in Chrome: HTTP clients are pointed at the tray.
PAIR = Step("the tray's “Pair extension…”", "browserdeck pair --profile {profile}")
# Not a step but a place, said the same way: where a file an agent may upload or read
# goes (policy/confine.py): the folders each kind of caller declares.
WORKSPACE = Step(
    'a folder the request names in "roots"',
    "the current directory",
    "the MCP client's workspace (its roots or working directory)",
)
RELOAD = Step(
    "POST /navigate with action=reload", "browserdeck navigate URL", "browser_navigate to its URL"
)
OFFLINE = Step("POST /set/offline", None, "browser_set_offline")
SESSIONS = Step("GET /sessions", "browserdeck sessions")
HAR_START = Step("POST /network/har/start", "browserdeck har-start", "browser_har_start")
HAR_STOP = Step("POST /network/har/stop", "browserdeck har-stop", "browser_har_stop")
REQUESTS = Step("GET /network/requests", "browserdeck requests", "browser_network_requests")
FULL_PAGE = Step(
    'POST /screenshot {"fullPage": true}',
    "browserdeck screenshot --full-page",
    "browser_take_screenshot fullPage=true",
)


class Hint:
    """What to do next, with the steps it names left open until an edge says it.

    ``Hint("take a new snapshot ({snapshot})", snapshot=SNAPSHOT)`` is said "take a new
    snapshot (GET /snapshot)" to HTTP clients and "take a new snapshot
    (browser_snapshot)" to MCP clients. Braces that are not a step are doubled, as in
    ``str.format``. ``+`` joins hints and plain text (an f-string would say the steps
    in HTTP words once and for all).
    """

    __slots__ = ("steps", "template")

    def __init__(self, template: str, **steps: Step) -> None:
        self.template = template
        self.steps = steps

    def say(self, via: Via = "api") -> str:
        return self.template.format_map({k: s.say(via) for k, s in self.steps.items()})

    def __add__(self, other: str | Hint) -> Hint:
        if isinstance(other, Hint):
            return Hint(self.template + other.template, **{**self.steps, **other.steps})
        return Hint(self.template + _literal(other), **self.steps)

    def __radd__(self, other: str) -> Hint:
        return Hint(_literal(other) + self.template, **self.steps)

    def __str__(self) -> str:
        return self.say()

    def __repr__(self) -> str:
        return f"Hint({self.template!r})"


def _literal(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


class BrowserdeckError(Exception):
    """A failure with a precise, actionable message."""

    code: str = "bad_request"

    def __init__(
        self,
        message: str,
        *,
        hint: str | Hint | None = None,
        code: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        # What to do next, as raised: plain text, or a Hint said at the edge.
        self.what_next = hint
        if code is not None:
            self.code = code

    @property
    def hint(self) -> str | None:
        """What to do next in HTTP words (the API's answer, logs, the tray)."""
        return self.hint_for("api")

    def hint_for(self, via: Via) -> str | None:
        """What to do next in the words of the caller: ``api``, ``cli`` or ``mcp``."""
        what = self.what_next
        return what.say(via) if isinstance(what, Hint) else what

    def to_dict(self, via: Via = "api") -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "hint": self.hint_for(via)}

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


class CDPError(BrowserdeckError):
    """The browser answered a CDP call with a protocol error (chrome/cdp.py raises it; here
    with the others, so that the API's status table does not load the CDP client)."""

    code = "cdp_error"

    def __init__(
        self,
        message: str,
        *,
        method: str,
        cdp_code: int | None = None,
        data: Any = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message, hint=hint)
        self.method = method
        self.cdp_code = cdp_code
        self.data = data
