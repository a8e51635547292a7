"""The one rule of what is actionable, and how marks and input refs are written (no browser)."""

from __future__ import annotations

import pytest

from browserdeck.engine import actionable as a
from browserdeck.engine import snapshot_text as st
from browserdeck.mcpserver import snapshot_lines as sl


@pytest.mark.parametrize(
    ("role", "attrs", "expected"),
    [
        ("button", "", True),
        ("columnheader", " [ref=e4]", True),
        ("rowheader", " [ref=e4]", True),
        ("gridcell", " [ref=e4]", True),
        ("treeitem", " [ref=e4]", True),
        ("generic", " [ref=e4]", False),
        ("listitem", " [ref=e4] [cursor=pointer]", True),
        ("listitem", " [ref=e4] [cursor=move]", True),
        ("generic", " [ref=e4] [cursor=grab]", True),
        ("generic", " [ref=e4] [draggable]", True),
        ("generic", " [ref=e4] [editable]", True),
        ("generic", " [ref=e4] [focusable]", True),
        ("paragraph", " [ref=e4] [level=2]", False),
    ],
)
def test_one_rule_for_every_reader(role: str, attrs: str, expected: bool) -> None:
    assert a.actionable(role, attrs) is expected
    split = tuple(attrs[2:-1].split("] [")) if attrs else ()
    assert a.actionable_attrs(role, split) is expected
    # The ref table's reading and MCP's compact form decide by it.
    line = f"- {role}{attrs}: text"
    read = st.SCAN_READER.line(line)
    assert read is not None and read[4] is expected
    mcp = sl.read_line(line)
    assert mcp is not None and mcp[7] is expected


TEXT = "\n".join(
    [
        "- generic [active] [ref=e1]:",
        '  - paragraph [ref=e2]: "see [ref=e3] in the docs"',
        "  - listitem [ref=e3]: Build",
        "  - 'listitem \"a: b\" [ref=e4]'",
        "  - generic [ref=e9]:",
        '    - textbox "Editor content"',
        "    - generic [ref=e10]: text",
        "  - generic [ref=e11] [cursor=pointer]:",
        "    - textbox",
        "  - paragraph [ref=e12]: Note",
    ]
)


@pytest.mark.parametrize("many", [False, True])
def test_marks_go_after_the_ref_of_an_element_line_only(
    many: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if many:  # the one-pass path, as for a page with many marks
        monkeypatch.setattr(a, "FEW", 0)
    marked = a.with_marks(
        TEXT,
        {
            "e3": ("cursor=move", ""),
            "e4": ("draggable", ""),
            "e7": ("editable", "e12"),  # not in the text: the mark goes on the one inside
            "e99": ("focusable", ""),  # not in the text at all: left out
            "e11": ("draggable", ""),  # actionable already (a pointer): not written
        },
    )
    lines = marked.splitlines()
    assert lines[1] == TEXT.splitlines()[1]  # page text that reads like a ref is left alone
    assert lines[2] == "  - listitem [ref=e3] [cursor=move]: Build"
    assert lines[3] == "  - 'listitem \"a: b\" [ref=e4] [draggable]'"  # inside the YAML quotes
    assert lines[9] == "  - paragraph [ref=e12] [editable]: Note"
    assert "e99" not in marked
    assert lines[7] == TEXT.splitlines()[7]
    button = '- button "Go" [ref=e5]:\n  - tab "One" [ref=e6]'  # said by the role already
    assert a.with_marks(button, {"e5": ("draggable", ""), "e6": ("focusable", "")}) == button
    assert a.with_marks(TEXT, {}) is TEXT


def test_a_boxless_input_takes_the_ref_of_the_element_around_it() -> None:
    text, given = a.with_input_refs(
        TEXT, [("e9", "textbox", "Editor content"), ("e11", "textbox", ""), ("e77", "textbox", "")]
    )
    lines = text.splitlines()
    assert lines[4] == "  - generic:"  # not actionable: its ref moved to the input
    assert lines[5] == '    - textbox "Editor content" [ref=e9]'
    assert lines[7] == "  - generic [ref=e11] [cursor=pointer]:"  # actionable: kept
    assert lines[8] == "    - textbox [ref=e11]"
    assert given == {"e9": ("textbox", "Editor content"), "e11": ("textbox", "")}
    # An input named otherwise than the page said is still the one under that element.
    _, given = a.with_input_refs(TEXT, [("e9", "textbox", "Code")])
    assert given == {"e9": ("textbox", "Editor content")}
    assert a.with_input_refs(TEXT, []) == (TEXT, {})
