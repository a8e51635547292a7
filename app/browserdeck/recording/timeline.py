"""What a recorded session and each of its steps keep, redacted at the source.

A step (``results.RecordedStep``; its session is a ``results.SessionSummary``) is one
call at the front door: when, what (the request's fields with typed text replaced by its
length), on which tab and page, how it ended, and for an action the
images before and after, the snapshot changes it caused, the console errors and failed
requests while it ran. Every text passes ``scrub`` before it is kept: the one hook where
the vault's secrets are taken out (see ``scrub``).

Steps are written as JSON lines (``store.py``): a step's row when its images are in, and
a patch (``{"n": 7, "diff": …}``) when a later snapshot tells what it changed.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
import time
from typing import Any, Literal

from browserdeck.door.activity import notes_of
from browserdeck.door.call import Call, Caller
from browserdeck.errors import BrowserdeckError
from browserdeck.recorded import RecordedStep
from browserdeck.secrets import redact
from browserdeck.session import session_key as agent_session
from browserdeck.tabs import QUIET_CLIENTS

# Calls whose effect on the page is shown by an image before and after.
ACTION_OPS = frozenset({"act", "navigate", "file-chooser"})
# Act kinds that change nothing on the page (no images; still a step).
QUIET_KINDS = frozenset({"wait"})


def scrub(text: str) -> str:
    """Every text the recorder keeps or exports passes here: the vault's secrets out, by
    value in every spelling (secrets/redact.py, the one redaction for every output).

    Typed text never gets this far (``redacted_args``); password inputs and the inputs
    a secret was typed into are painted over in the images (``shots.py``).
    """
    return redact.text(text)


def scrub_value(value: Any) -> Any:
    """``value`` (JSON-like) with ``scrub`` applied to every string in it."""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        return {scrub(str(k)): scrub_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [scrub_value(v) for v in value]
    return value


def typed(n: int) -> str:
    return f"‹{n} character{'' if n == 1 else 's'} typed›"


def redacted_args(request: Any) -> dict[str, Any]:
    """The request's fields as given (JSON names), typed text replaced by its length: a
    type's text, a fill's values, a dialog's prompt text. Cut to a readable size."""
    given = request.given() if hasattr(request, "given") else {}
    out: dict[str, Any] = {}
    for key, value in given.items():
        if isinstance(value, str) and (
            (key == "text" and given.get("kind") == "type") or key == "promptText"
        ):
            out[key] = typed(len(value))
        elif key == "fields" and isinstance(value, list):
            out[key] = [_fill_field(f) for f in value]
        elif key == "token":
            out[key] = "‹token›"
        else:
            out[key] = _cut(value)
    return scrub_value(out)  # type: ignore[no-any-return]


def _fill_field(entry: Any) -> Any:
    if not isinstance(entry, dict):
        return entry
    value = entry.get("value")
    if isinstance(value, str):
        return {**entry, "value": typed(len(value))}
    return entry


def _cut(value: Any, limit: int = 2000) -> Any:
    if isinstance(value, str) and len(value) > limit:
        return value[:limit] + f"… ({len(value):,} characters)"
    if isinstance(value, list) and len(value) > 50:
        return [*value[:50], f"… ({len(value)} items)"]
    return value


def is_action(step: RecordedStep) -> bool:
    """A step whose effect on the page is shown by an image before and after."""
    return step.op in ACTION_OPS and step.kind not in QUIET_KINDS


def row_of(step: RecordedStep) -> dict[str, Any]:
    """The step as a line of ``timeline.jsonl`` (camelCase, as the API answers it)."""
    return step.model_dump(by_alias=True, mode="json", exclude={"pending"})


_NAMES = {f.alias or name: name for name, f in RecordedStep.model_fields.items()}


def patched(step: RecordedStep, patch: dict[str, Any]) -> RecordedStep:
    """``step`` with a patch row's fields (camelCase) set."""
    update = {_NAMES[k]: v for k, v in patch.items() if k in _NAMES and k != "n"}
    return step.model_copy(update=update)


_NAVIGATIONS = {"goto": "navigate", "back": "go back", "forward": "go forward", "reload": "reload"}


def _quoted(element: str) -> str:
    """'button "Save"' -> 'button “Save”'."""
    role, _, name = element.partition(" ")
    if len(name) >= 2 and name[0] == '"' and name[-1] == '"':
        return f"{role} “{name[1:-1]}”"
    return element


def title_of(call: Call[Any], element: str | None) -> tuple[str, str]:
    """(kind, line) for a call: 'click e12 · button “Save”', 'navigate https://…'."""
    notes = notes_of(call)
    kind = notes.kind or ""
    if call.name == "navigate":
        words = [_NAVIGATIONS.get(kind, kind or "navigate")]
    else:
        words = [kind if call.name == "act" and kind else call.name]
    if notes.ref:
        words.append(notes.ref + (f" · {_quoted(element)}" if element else ""))
    if notes.start_ref and notes.end_ref:
        words.append(f"{notes.start_ref} → {notes.end_ref}")
    if notes.key:
        words.append(f"key {notes.key}")
    if notes.typed_chars is not None:
        words.append(typed(notes.typed_chars))
    if notes.values:
        words.append(", ".join(f"“{v}”" for v in notes.values))
    url = notes.url or getattr(call.request, "url", None)
    if isinstance(url, str) and url and call.name in ("navigate", "open-tab"):
        words.append(url)
    return kind, scrub(" ".join(words))


def summary_of(answer: Any) -> dict[str, Any]:
    """What an answer said, in short (a snapshot's size, not its text)."""
    if answer is None or not hasattr(answer, "model_dump"):
        return {}
    data = answer.model_dump(by_alias=True, exclude_unset=True, mode="json")
    for big in ("snapshot", "base64", "refs", "labels"):
        if big in data:
            value = data.pop(big)
            if isinstance(value, str):
                data[f"{big}Chars"] = len(value)
    if isinstance(data.get("filled"), list):  # a fill's values are typed text too
        data["filled"] = [_fill_field(f) for f in data["filled"]]
    for key in ("dialogs", "popups", "console", "messages", "requests", "errors"):
        if isinstance(data.get(key), list) and len(data[key]) > 20:
            data[key] = data[key][:20]
    return scrub_value({k: _cut(v, 1000) for k, v in data.items()})  # type: ignore[no-any-return]


def now() -> float:
    return time.time()


def step_facts(step: RecordedStep) -> list[tuple[str, str]]:
    """What a step recorded beside its images, in the order every view shows it: (what,
    text) pairs; a text of several lines (the changes, the errors) is one entry."""
    facts: list[tuple[str, str]] = []
    if step.error:
        facts.append(("failed", step.error.get("message", "")))
        if step.error.get("hint"):
            facts.append(("what to do", step.error["hint"]))
    if step.note:
        facts.append(("note", step.note))
    outcome = step.result.get("outcome") if step.result else None
    if outcome:
        facts.append(("caused", str(outcome)))
    if step.shot_note:
        facts.append(("images", step.shot_note))
    for what, items in (("console errors", step.console), ("failed requests", step.failed)):
        if items:
            facts.append((what, "\n".join(items)))
    if step.diff:
        facts.append(("snapshot changes", step.diff))
    return facts


# --- what the recorder derives from a call -------------------------------------

DIFF_MAX_LINES = 300
NO_CHANGE = "no change in the page's snapshot"


def recorded(caller: Caller) -> bool:
    """Whether ``caller`` is an agent session the recorder follows (never the user)."""
    if not caller.is_agent or caller.client in QUIET_CLIENTS:
        return False
    return bool(caller.session) or (bool(caller.client) and caller.via in ("api", "cli"))


def session_key(caller: Caller) -> str:
    """The agent session a call belongs to: its id as the sessions registry knows it
    (sessions.py), else its client's name."""
    return agent_session(caller.session) or f"client:{caller.client}"


def snapshot_scope(request: Any) -> str:
    """What a snapshot covered, beyond its tab: "" for the whole page as agents see it."""
    given = request.given() if hasattr(request, "given") else {}
    scope = {k: v for k, v in given.items() if k not in ("targetId", "timeoutMs", "format")}
    return json.dumps(scope, sort_keys=True) if scope else ""


def line_diff(before: str, after: str) -> str:
    """The lines that went (``-``) and came (``+``), in order; "" when none did."""
    out: list[str] = []
    for line in difflib.unified_diff(before.splitlines(), after.splitlines(), n=0, lineterm=""):
        if line.startswith(("---", "+++", "@@")):
            continue
        out.append(line)
        if len(out) >= DIFF_MAX_LINES:
            out.append(f"… (more changes: the diff stops at {DIFF_MAX_LINES} lines)")
            break
    return "\n".join(out)


def hint_words(caller: Caller) -> Literal["api", "cli", "mcp"]:
    return "api" if caller.via == "gui" else caller.via


def why_not(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):
        return "it took too long"
    if isinstance(exc, BrowserdeckError):
        return scrub(exc.message)[:200]
    return scrub(str(exc) or type(exc).__name__)[:200]


_SLUG = re.compile(r"[^a-z0-9]+")


def session_id(caller: Caller, key: str, now: float) -> str:
    """A folder name a person can read: when, who, and a hash of the session's key."""
    who = _SLUG.sub("-", (caller.client or "agent").lower()).strip("-")[:30] or "agent"
    digest = hashlib.sha256(key.encode()).hexdigest()[:6]
    return f"{time.strftime('%Y%m%d-%H%M%S', time.localtime(now))}-{who}-{digest}"
