"""What the requests about a tab share: field types, timeouts, the tab field.

The field types (a ref, a CSS selector, a script, a URL, a URL glob, a press key, a local
path) are each checked as the request is read and publish what they are checked against.

A refusal is a 400 that names the field and says why; what is published is a ``pattern``
that is the very expression of the check, or, where the language is not a regular one
(CSS, JavaScript, a URL), its ``format``: what the schema allows is what the server takes
(docs/reliability.md, "The fuzz"). The request models of ``options.py`` and ``acts.py``
use them.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Generic, TypeVar

from pydantic import AfterValidator, Field

from browserdeck.door.request import Strict, TabRequest
from browserdeck.policy import confine, urls

A = TypeVar("A")
# argparse.SUPPRESS: a CLI argument that is accepted and not listed.
SUPPRESS = "==SUPPRESS=="

ACTION_TIMEOUT_MS = 8_000
NAVIGATE_TIMEOUT_MS = 20_000
ARM_TIMEOUT_MS = 120_000
SLOW_TYPE_DELAY_MS = 75  # per key when typing slowly


def clamp(value: int | None, default: int, low: int, high: int) -> int:
    return default if value is None else max(low, min(high, int(value)))


def action_timeout(value: int | None) -> int:
    """Action timeouts: default 8 s, clamped to 0.5–60 s."""
    return clamp(value, ACTION_TIMEOUT_MS, 500, 60_000)


def navigate_timeout(value: int | None) -> int:
    return clamp(value, NAVIGATE_TIMEOUT_MS, 500, 120_000)


def arm_timeout(value: int | None) -> int:
    """Arming (dialog, file chooser): default and maximum 2 minutes."""
    return clamp(value, ARM_TIMEOUT_MS, 500, ARM_TIMEOUT_MS)


def _css_only(value: str) -> str:
    # Playwright also reads its own selector engines here ("internal:control=enter-frame",
    # "xpath=", "text="); the API promises CSS, and the private ones fail as 500s.
    head = value.lstrip().lower()
    if head.startswith("internal:") or re.match(r"^[a-z][a-z0-9_-]*=", head):
        raise ValueError(
            "only CSS selectors are accepted (not Playwright selector engines such as "
            "internal:..., text=, xpath=)"
        )
    return value


# A CSS selector as the API takes it; published as format css-selector (a browser's
# selector grammar is not a pattern: a selector it cannot parse is a 400 naming it).
Css = Annotated[
    str, AfterValidator(_css_only), Field(json_schema_extra={"format": "css-selector"})
]
# A JavaScript function (or expression) run in the page; published as format
# javascript-function. One that does not parse, or throws, is a 400 with the page's words.
Script = Annotated[str, Field(json_schema_extra={"format": "javascript-function"})]
# A URL glob, checked at once (urls.check_glob) and published with its pattern.
UrlGlob = Annotated[
    str, AfterValidator(urls.check_glob), Field(json_schema_extra={"pattern": urls.GLOB_PATTERN})
]
# An element ref: what every ref field takes, described once. ``e12`` (``f1e3`` in an
# iframe); also ``@e12``, ``ref=e12``, ``[ref=e12]`` and a bare ``12`` as agents copy
# them. The pattern is published and is exactly what refs.normalize reads.
REF_PATTERN = r"^[ \t\n\r]*(?:@|ref=|\[ref=|aria-ref=)?(?:(?:f([0-9]+))?e([0-9]+)|([0-9]+))\]*[ \t\n\r]*$"
_REFS = re.compile(REF_PATTERN)


def _ref_shape(value: str) -> str:
    # At once, for every ref field: a ref an action does not use (evaluate's, a
    # screenshot's) would otherwise pass unread whatever it says.
    if not _REFS.fullmatch(value):
        what = "a read-only ref from format=aria" if re.fullmatch(r"\s*ax\d+\s*", value) else "not a ref"
        raise ValueError(
            f"{value[:40]!r} is {what}: refs look like e12 (f1e3 inside an iframe) and come "
            "from a snapshot in format ai or role"
        )
    return value


Ref = Annotated[
    str,
    AfterValidator(_ref_shape),
    Field(
        description="ref from the latest snapshot, e.g. e12",
        json_schema_extra={"pattern": REF_PATTERN},
    ),
]


# The keys a press takes (Playwright's US keyboard layout: its key codes, the modifiers, and
# every printable ASCII character), joined by "+" as Playwright splits them.
KEY_CODES = (  # noqa: SIM905 - a line of names reads better than 115 quoted ones
    "Escape F1 F2 F3 F4 F5 F6 F7 F8 F9 F10 F11 F12 Backquote Digit1 Digit2 Digit3 Digit4 "
    "Digit5 Digit6 Digit7 Digit8 Digit9 Digit0 Minus Equal Backslash Backspace Tab KeyQ KeyW "
    "KeyE KeyR KeyT KeyY KeyU KeyI KeyO KeyP BracketLeft BracketRight CapsLock KeyA KeyS KeyD "
    "KeyF KeyG KeyH KeyJ KeyK KeyL Semicolon Quote Enter ShiftLeft KeyZ KeyX KeyC KeyV KeyB KeyN "
    "KeyM Comma Period Slash ShiftRight ControlLeft MetaLeft AltLeft Space AltRight AltGraph "
    "MetaRight ContextMenu ControlRight PrintScreen ScrollLock Pause PageUp PageDown Insert "
    "Delete Home End ArrowLeft ArrowUp ArrowRight ArrowDown AudioVolumeMute AudioVolumeDown "
    "AudioVolumeUp MediaTrackNext MediaTrackPrevious MediaPlayPause NumLock NumpadDivide "
    "NumpadMultiply NumpadSubtract Numpad7 Numpad8 Numpad9 Numpad4 Numpad5 Numpad6 NumpadAdd "
    "Numpad1 Numpad2 Numpad3 Numpad0 NumpadDecimal NumpadEnter "
    "Shift Control Alt Meta ControlOrMeta"
).split()
_KEY = "(?:" + "|".join(sorted(KEY_CODES, key=len, reverse=True)) + r"|[ -~]|\n|\r)"
KEY_PATTERN = rf"^(?:{_KEY}\+)*{_KEY}$"
_KEYS = re.compile(KEY_PATTERN)


def _known_key(value: str) -> str:
    if not _KEYS.fullmatch(value):
        raise ValueError(
            f"unknown key {value!r}: use a key name (Enter, Tab, Escape, ArrowDown, Backspace, "
            "F5 …) or one ASCII character, with modifiers joined by + (Control+A, Shift+Tab)"
        )
    return value


PressKey = Annotated[
    str, AfterValidator(_known_key), Field(json_schema_extra={"pattern": KEY_PATTERN})
]


# A URL as an address bar takes it: an absolute IRI (https://bücher.example/x, about:blank,
# data:…, chrome://version) or a bare address (example.com, localhost:3000); urls.prepare
# checks it. Published as format iri-reference.
Url = Annotated[
    str,
    Field(
        json_schema_extra={"format": "iri-reference"},
        description="http(s)://…, a bare address (example.com, localhost:3000), about:, data:, "
        "chrome://…, view-source:http(s)://…, file:// when allowFileUrls is on; any other "
        "scheme (javascript:, ftp:, chrome-error: …) is a 400",
    ),
]


# A local path as the OS takes it (policy/confine.py refuses a NUL byte and over-long paths).
LocalPath = Annotated[
    str,
    Field(max_length=confine.MAX_PATH_CHARS, json_schema_extra={"pattern": "^[^\\x00]*$"}),
]


class Part(Strict):
    """A part of a request (one field of a fill): the requests' own config."""


class TabBody(TabRequest[A], Generic[A]):
    target_id: str | None = Field(
        default=None,
        description="tab: CDP targetId or a unique prefix; default: your last used tab (docs/api.md)",
    )

    def named_tab(self) -> str | None:
        return self.target_id


def wait_ms_field(when: str = "") -> Any:
    return Field(
        default=None,
        ge=0,
        le=60_000,
        description=f"{when}longest wait in ms for what it caused (navigation, requests); "
        "default: the actionWaitMs setting, 0 = none",
    )
