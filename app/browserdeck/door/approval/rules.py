"""What counts as risky: the words, the form fields, the policy per profile, and why.

Declared once here: the English words that make a click risky (``RISKY_WORDS``, which the
``approvalWords`` setting extends), the autocomplete tokens and input types that make a
form sensitive, and how a profile's ``approval`` value is found (the profile's, else the
global one, else the driver's default). The page side reads the facts with one function
(``engine/risk.py``, also run by the in-page catch of scripts) and says which of these
rules an element meets; ``why`` puts that in words for the person and the agent.
"""

from __future__ import annotations

import functools
import json
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from browserdeck import driverspecs

if TYPE_CHECKING:
    from browserdeck.config import Config

Mode = Literal["off", "risky", "all"]
MODES: tuple[Mode, ...] = ("off", "risky", "all")

# A click on an element whose role and accessible name hold one of these (whole words,
# any case) is risky. English; the approvalWords setting adds more (any language).
RISKY_WORDS: tuple[str, ...] = (
    "buy",
    "pay",
    "order",
    "checkout",
    "check out",
    "purchase",
    "subscribe",
    "donate",
    "transfer",
    "delete",
    "remove",
    "close account",
    "send",
    "post",
    "publish",
    "share",
    "invite",
    "confirm",
)
# A form holding a field with one of these autocomplete tokens (or an input of type
# password) is sensitive: submitting it is risky.
SENSITIVE_TOKENS: Mapping[str, str] = {
    "current-password": "password",
    "new-password": "password",
    "cc-number": "payment card",
    "cc-csc": "payment card",
    "cc-exp": "payment card",
    "cc-exp-month": "payment card",
    "cc-exp-year": "payment card",
    "one-time-code": "one-time code",
}
# Field names and ids that say the same where a site set no autocomplete token.
SENSITIVE_NAMES = r"card.?num|cc.?num|cvc|cvv|csc|otp|one.?time.?(code|password)"
# The roles a click may carry out (a control); a click elsewhere is read from the page
# all the same (a span inside a button clicks the button).
CLICK_KEYS = frozenset({"Enter", "NumpadEnter", " ", "Space"})


def mode_of(config: Config, profile: str | None, driver: str | None) -> Mode:
    """The profile's ``approval``: its own value, else the global one, else its driver's."""
    own = None
    if profile is not None and profile in config.profiles:
        own = config.profiles[profile].approval
        driver = driver or config.profiles[profile].driver
    return _mode(own) if own else inherited_mode(config, driver)


def inherited_mode(config: Config, driver: str | None) -> Mode:
    """What a profile of ``driver`` gets without a value of its own."""
    if config.approval:
        return _mode(config.approval)
    return _mode(driverspecs.spec_of(driver).approval if driver in driverspecs.SPECS else "off")


def _mode(value: str) -> Mode:
    for mode in MODES:
        if value == mode:
            return mode
    return "off"


def where_set(config: Config, profile: str | None) -> str:
    """Where the profile's value comes from, in words (for refusals and the tray)."""
    if profile in config.profiles and config.profiles[profile].approval:
        return f'profile "{profile}"'
    if config.approval:
        return "the global setting"
    return "the driver's default"


def visible(text: str) -> str:
    """``text`` without the format characters a reader does not see (zero-width spaces, bidi
    controls, a soft hyphen). The page function drops them before it looks for a word
    (engine/risk.py): "P\u2060ay" says "pay" to the person, and so to the rules."""
    return "".join(c for c in text if unicodedata.category(c) != "Cf")


def quoted(text: str, limit: int = 80) -> str:
    """Page text (a name) in a question or a refusal: one line of what a reader sees, at
    most ``limit`` characters, as a JSON string whose quotes are escapes, so a name cannot
    close its quote and go on as browserdeck's words (as engine/pagetext.py does for
    the MCP answers)."""
    flat = " ".join(visible(text).split())
    if len(flat) > limit:
        flat = flat[: limit - 1] + "…"
    return json.dumps(flat, ensure_ascii=False).replace('\\"', "\\u0022")


@dataclass(frozen=True)
class Words:
    """The risky words as one pattern, in Python's and JavaScript's syntax."""

    python: re.Pattern[str]
    javascript: str  # a RegExp source, for flags "iu"

    def find(self, text: str) -> str | None:
        match = self.python.search(text)
        return " ".join(match.group(0).lower().split()) if match else None


@functools.lru_cache(maxsize=8)
def words(extra: tuple[str, ...] = ()) -> Words:
    """The built-in words and ``extra`` (the approvalWords setting) as whole-word patterns:
    "Pay $49.00" and "Delete row" match, "Payment" and "PayPal" do not."""
    phrases = sorted({w.strip().lower() for w in (*RISKY_WORDS, *extra) if w.strip()}, key=len)
    parts = [r"\s+".join(re.escape(p) for p in phrase.split()) for phrase in reversed(phrases)]
    body = "|".join(parts) or "(?!)"
    python = re.compile(rf"(?<!\w)(?:{body})(?!\w)", re.IGNORECASE)
    javascript = rf"(?<![\p{{L}}\p{{N}}_])(?:{body})(?![\p{{L}}\p{{N}}_])"
    return Words(python, javascript.replace("/", r"\/"))


def words_of(config: Config) -> Words:
    return words(tuple(config.approval_words))


def page_rules(config: Config, mode: Mode) -> dict[str, Any]:
    """What the page-side function needs to judge an element (engine/risk.py)."""
    return {
        "words": words_of(config).javascript,
        "tokens": dict(SENSITIVE_TOKENS),
        "names": SENSITIVE_NAMES,
        "all": mode == "all",
    }


@dataclass(frozen=True)
class Facts:
    """What the page says about the element an action hits (engine/risk.py reads it)."""

    tag: str = ""
    role: str = ""
    name: str = ""  # its accessible name, as the page function reckons it
    word: str | None = None  # a risky word in that name
    activates: bool = False  # a control: the click or key carries it out
    submits: bool = False  # the action submits the element's form
    default_name: str = ""  # the form's submit button an Enter would press
    default_word: str | None = None
    sensitive: tuple[str, ...] = ()  # "password", "payment card", "one-time code"
    download: bool = False  # a link with a download attribute
    file: bool = False  # an <input type=file>
    amounts: tuple[str, ...] = ()  # money found on the element or its form
    url: str = ""  # the frame's address
    sends_to: str = ""  # the form's destination host, when not the page's
    box: tuple[float, float, float, float] | None = None  # viewport CSS pixels

    @classmethod
    def of(cls, raw: Mapping[str, Any] | None) -> Facts:
        if not raw:
            return cls()
        box = raw.get("box")
        return cls(
            tag=str(raw.get("tag") or ""),
            role=str(raw.get("role") or ""),
            name=str(raw.get("name") or "")[:200],
            word=raw.get("word") or None,
            activates=bool(raw.get("activates")),
            submits=bool(raw.get("submits")),
            default_name=str(raw.get("defaultName") or "")[:200],
            default_word=raw.get("defaultWord") or None,
            sensitive=tuple(str(s) for s in raw.get("sensitive") or ())[:3],
            download=bool(raw.get("download")),
            file=bool(raw.get("file")),
            amounts=tuple(str(a) for a in raw.get("amounts") or ())[:3],
            url=str(raw.get("url") or ""),
            sends_to=str(raw.get("sendsTo") or ""),
            box=tuple(float(box[k]) for k in ("x", "y", "width", "height"))  # type: ignore[arg-type]
            if isinstance(box, dict)
            else None,
        )

    def describe(self) -> str:
        what = self.role or self.tag or "element"
        return f"{what} {quoted(self.name)}" if self.name else what


def why(facts: Facts, *, name: str | None = None, words_: Words | None = None) -> str | None:
    """Why the action is risky, in a few words; None when it is not.

    ``name`` is the element's accessible name from the snapshot (exact); the page's own
    reckoning of it (``facts.name``) is read too. A name counts only on an element a
    click or key carries out (a button, a link, a clickable box), never on a text field
    ("Confirm password" is a field, not a confirmation)."""
    if facts.activates:
        found = (words_.find(name) if words_ is not None and name else None) or facts.word
        if found:
            return f'its name says "{found}"'
        if facts.download:
            return "it downloads a file to this computer (a link with a download attribute)"
    if facts.submits and facts.sensitive:
        plural = "s" if len(facts.sensitive) > 1 else ""
        return f"it submits a form holding {_joined(facts.sensitive)} field{plural}"
    if facts.submits and facts.default_word:
        pressed = f" {quoted(facts.default_name)}" if facts.default_name else ""
        return (
            f"it submits the form as its button{pressed} would, whose name says "
            f'"{facts.default_word}"'
        )
    return None


def _joined(items: Sequence[str]) -> str:
    said = [f"an {i}" if i[0] in "aeiou" else f"a {i}" for i in items]
    return said[0] if len(said) == 1 else ", ".join(said[:-1]) + " and " + said[-1]


def host_of(url: str) -> str:
    from urllib.parse import urlsplit

    try:
        return urlsplit(url).hostname or ""
    except ValueError:
        return ""


def origin_of(url: str) -> str:
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return ""
    if not parts.scheme or not parts.netloc:
        return parts.scheme or ""
    return f"{parts.scheme}://{parts.netloc}".lower()


def file_names(paths: Iterable[str]) -> str:
    from pathlib import PurePath

    names = [PurePath(p).name for p in paths]
    shown = ", ".join(names[:3])
    return shown + (f" and {len(names) - 3} more" if len(names) > 3 else "")
