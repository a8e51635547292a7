"""Everything an agent may act on has a ref, and text reaches every kind of editor.

Real Chromium through the engine under test, on pages/reach.html: elements actionable
only by what the DOM says (draggable, a move or grab cursor, tabindex, contenteditable,
an iframe in design mode) and editors whose input has no box (an EditContext element of
zero width, as Monaco's; an input without pointer events). What the page holds after
typing is read over a separate raw CDP connection (``Tab.js``).
"""

from __future__ import annotations

import re

import pytest

from tests.engine.conftest import Tab, ref_of

pytestmark = pytest.mark.asyncio(loop_scope="module")

MARKED = {
    "Card A": "draggable",
    "Handle B bold": "cursor=move",
    "Knob C": "cursor=grab",
    "Panel D": "focusable",
    "Note E": "editable",
    "Rich F": "editable",  # the body of an iframe in design mode (its only paragraph)
}


async def _open(tab: Tab) -> str:
    await tab.goto("reach.html")
    await tab.js("new Promise((ok) => setTimeout(ok, 50))")  # the iframe's design mode
    return str((await tab.snap())["snapshot"])


def _line(text: str, words: str) -> str:
    return next(line for line in text.splitlines() if line.rstrip().endswith(words))


async def test_the_dom_makes_elements_actionable(tab: Tab) -> None:
    text = await _open(tab)
    for words, mark in MARKED.items():
        line = _line(text, words)
        assert re.search(rf"\[ref=[^\]]+\] \[{re.escape(mark)}\]", line), line
    for words in ("Not focusable", "Plain text"):  # tabindex=-1, and nothing at all
        line = _line(text, words)
        assert "[ref=" in line and not re.search(r"\[(draggable|cursor=|focusable|editable)", line)
    # The move cursor is marked where it starts, not again on what inherits it.
    assert text.count("[cursor=move]") == 1

    interactive = (await tab.snap(interactive=True))["snapshot"]
    for words in MARKED:
        assert words in interactive, interactive
    assert "Not focusable" not in interactive and "Plain text" not in interactive

    # The labelled screenshot (and so the panel) labels them too: the same rule.
    labels = {label.ref for label in (await tab.shot(labels=True))["labels"]}
    for words in ("Card A", "Handle B bold", "Knob C", "Panel D", "Note E"):
        assert ref_of(text, words) in labels, words
    assert ref_of(text, "Plain text") not in labels


async def test_a_boxless_editor_input_gets_a_ref_that_takes_text(tab: Tab) -> None:
    text = await _open(tab)
    ref = ref_of(text, 'textbox "Code input"')  # Playwright gives it none: no box
    # The ref is the visible element's around it, shown once: that line lost it.
    assert text.count(f"[ref={ref}]") == 1
    await tab.act(kind="type", ref=ref, text="SELECT 1")
    assert await tab.text("#out") == "typed: SELECT 1"
    await tab.act(kind="type", ref=ref, text="SELECT 2")  # replaces, as fill does
    assert await tab.text("#out") == "typed: SELECT 2"
    await tab.act(kind="type", ref=ref, text=";", slowly=True)
    assert await tab.text("#out") == "typed: SELECT 2;"
    await tab.act(kind="click", ref=ref)  # lands on the element around it

    # A text box with a box that fill refuses (neither an input nor contenteditable).
    await tab.act(kind="type", ref=ref_of(text, 'textbox "Key box"'), text="keyed")
    assert await tab.js("document.getElementById('keybox').dataset.text") == "keyed"

    ghost = ref_of(text, 'textbox "Ghost field"')  # an input without pointer events
    await tab.act(kind="fill", fields=[{"ref": ghost, "value": "boo"}])
    assert await tab.js("document.getElementById('ghost').value") == "boo"


async def test_type_into_contenteditable_and_an_iframe_in_design_mode(tab: Tab) -> None:
    text = await _open(tab)
    await tab.act(kind="type", ref=ref_of(text, "Note E"), text="Hello")
    assert await tab.text("#note") == "Hello"
    await tab.act(kind="type", ref=ref_of(text, "Rich F"), text="Rich text", slowly=True)
    body = await tab.js("document.getElementById('rich').contentDocument.body.textContent")
    assert "Rich text" in str(body)
