"""The HTTP status of each core error: the API's one table, at its edge.

The core raises errors that say what kind of failure happened (``errors.py``: bad
input, not found, a conflict, a browser not there ...) and carry no HTTP status; the
API answers each with the status this table gives. A ``code`` listed in ``BY_CODE``
wins over its class; else the nearest class in ``BY_CLASS`` (a subclass such as
``BrowserOnPort(Conflict)`` answers as its parent). MCP reports the same errors as
tool errors, and names the status only in the activity log, from this table too.

The two other HTTP servers of browserdeck keep their own few statuses at their own
edges, since they are core modules that cannot import the API: the relay (``409`` when
the single-active client slot is held: the DevTools protocol's clients expect it at
connect) and the managed profiles' DevTools gateway (``chrome/gateway.py``).
"""

from __future__ import annotations

from browserdeck import errors
from browserdeck.engine.errors import NavigationFailed

# A code whose status differs from its class's.
BY_CODE: dict[str, int] = {
    "unknown_profile": 404,  # an InvalidInput (a name given), but nothing by that name exists
    "browser_error": 500,  # a browser failure we do not recognise: a bug to look into
}

BY_CLASS: dict[type[errors.BrowserdeckError], int] = {
    errors.InvalidInput: 400,
    errors.Unauthorized: 401,
    errors.Forbidden: 403,
    errors.NotFound: 404,
    errors.Conflict: 409,
    errors.ConfigError: 500,
    NavigationFailed: 502,  # the page's server, not us: a bad gateway
    errors.CDPError: 502,  # the browser answered a protocol call with an error
    errors.Disabled: 503,
    errors.Unavailable: 503,
    errors.ActionTimeout: 504,
    errors.BrowserdeckError: 400,
}


def status_of(exc: errors.BrowserdeckError) -> int:
    """The HTTP status the API answers ``exc`` with."""
    by_code = BY_CODE.get(exc.code)
    if by_code is not None:
        return by_code
    for cls in type(exc).__mro__:
        status = BY_CLASS.get(cls)
        if status is not None:
            return status
    return 400  # unreachable: BrowserdeckError itself is in the table
