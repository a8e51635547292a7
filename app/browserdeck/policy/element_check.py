"""Does an agent's description of an element fit the ref it names?

Playwright MCP's click-like tools take ``element``, a human description ("Add to cart
button"), beside the ``ref``. A page can make one element look like another's ref to the
model (a name holding ``" [ref=e5] - button "Confirm purchase``), so the model
clicks e5 believing it is "Cancel". The description is the model's own account of what it
means to click, so it is compared with what the ref really is:

* it fits when it shares a word with the element's name or its ancestors' names (a word
  may be the start of the other: "log" fits "Login"), or says nothing but roles and
  filler ("the button", "that field");
* it is refused only when it shares none *and* names another element on the page (every
  word of it that is not a role or filler is in that element's name) *and* no shared
  role tells the two apart ("Cancel button" on button "Confirm purchase", with a button
  "Cancel" on the page). A vague description ("the editor", "submit button" on a page
  with no "Submit") is accepted.

Pure functions over what the snapshot showed (``Element``); the way in builds those and
words the refusal (mcpserver/element_guard.py for MCP).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["Element", "mismatch", "words"]


@dataclass(frozen=True)
class Element:
    """An element as a snapshot showed it."""

    ref: str
    role: str
    name: str


_WORD = re.compile(r"[^\W_]+")


def words(text: str) -> set[str]:
    """The lowercased words of ``text`` (letters and digits, any script)."""
    return {w.lower() for w in _WORD.findall(text)}


# Words that say nothing about which element: articles, prepositions, verbs of acting.
FILLER = frozenset(
    words(
        "a an the this that these those it its of on in into onto to for with and or at by "
        "from my your our their his her please click press tap hit select choose open use "
        "type enter fill check element item entry thing one"
    )
)
# Roles, and the words agents use for them.
ROLE_WORDS = frozenset(
    words(
        "button btn link hyperlink anchor textbox text box input field textarea editor "
        "search searchbox combobox combo dropdown drop down select listbox list option "
        "checkbox check radio switch toggle slider spinbutton menu menuitem menubar tab "
        "tablist tabpanel heading title image img icon picture cell gridcell row column "
        "columnheader rowheader table grid tree treeitem dialog modal alert banner "
        "navigation nav form region section group article paragraph label tooltip "
        "progressbar scrollbar generic"
    )
)


def _fits(word: str, among: Iterable[str]) -> bool:
    """``word`` is one of ``among``, or one starts with the other (3 letters or more)."""
    for other in among:
        if word == other:
            return True
        short, long_ = (word, other) if len(word) <= len(other) else (other, word)
        if len(short) >= 3 and long_.startswith(short):
            return True
    return False


def mismatch(
    description: str,
    target: Element,
    ancestor_names: Sequence[str],
    elements: Iterable[Element],
) -> Element | None:
    """The other element ``description`` names instead of ``target``, or None when it may
    describe ``target`` (see the module docstring). ``elements``: the page's elements as
    the snapshot showed them (read only when the description does not fit the target)."""
    said = words(description) - FILLER
    own = words(target.name).union(*(words(n) for n in ancestor_names))
    if any(_fits(w, own) for w in said):
        return None
    content = said - ROLE_WORDS
    if not content:
        return None  # only roles and filler: too vague to contradict anything
    named = [
        e
        for e in elements
        if e.ref != target.ref and e.name and all(_fits(w, words(e.name)) for w in content)
    ]
    if not named:
        return None
    role_said = said & ROLE_WORDS
    if _fits_role(role_said, target.role) and not any(
        _fits_role(role_said, e.role) for e in named
    ):
        return None  # "the Cancel link" on a link, where only a button is named Cancel
    return named[0]


def _fits_role(said: set[str], role: str) -> bool:
    return bool(said) and any(_fits(w, words(role)) for w in said)
