"""MCP's compact form keeps the ref of everything actionable, folded or not.

Texts as the engine hands them to MCP (Playwright's lines, the engine's marks after a
ref: engine/actionable.py). The widget suite (tests/widgets) drives the same through
real libraries end to end.
"""

from __future__ import annotations

import re

from browserdeck.engine import pagetext
from browserdeck.mcpserver import snapshot

GRID = "\n".join(
    [
        "- grid [ref=e8]:",
        "  - rowgroup [ref=e9]:",
        "    - row [ref=e10]:",
        '      - columnheader "ID" [ref=e11]',
        '      - columnheader "Product" [ref=e14] [cursor=pointer]',
        '      - columnheader "Price" [ref=e17]',
        "  - rowgroup [ref=e19]:",
        *[
            line
            for i in range(1, 41)
            for line in (
                f"    - row [ref=e{100 + 4 * i}]:",
                f'      - gridcell "{i}" [ref=e{101 + 4 * i}]',
                f'      - gridcell "Product {i}" [ref=e{102 + 4 * i}]',
                f'      - gridcell "{i}.99" [ref=e{103 + 4 * i}]',
            )
        ],
    ]
)


def test_a_header_row_keeps_its_column_headers_refs_inline() -> None:
    compact = snapshot.compact(GRID)
    header = compact.splitlines()[1]
    assert header == (
        '  - row: columnheader "ID" [ref=e11] | columnheader "Product" [ref=e14] | '
        'columnheader "Price" [ref=e17]'
    )
    assert snapshot.actionable_refs(GRID) <= snapshot.refs_in(compact)


def test_folding_keeps_the_header_row_and_says_how_to_see_the_rest() -> None:
    for cap in (2000, 400, 0):
        folded = snapshot.folded(GRID, cap)
        assert folded is not None
        for ref in ("e11", "e14", "e17"):
            assert f"[ref={ref}]" in folded, (cap, folded)
        assert "more like the above (to see them: browser_snapshot" in folded
    # A header row is never folded, not even among look-alikes (a grid that draws its
    # header again over each page of rows).
    header = GRID.splitlines()[2:6]
    copies = [line.replace("[ref=e1", f"[ref=e{copy}1") for copy in (7, 8) for line in header]
    two_headers = "\n".join(GRID.splitlines()[:6] + copies + GRID.splitlines()[6:])
    folded = snapshot.folded(two_headers, 0)
    assert folded is not None
    for ref in ("e11", "e14", "e17", "e711", "e714", "e717", "e811", "e814", "e817"):
        assert f"[ref={ref}]" in folded, folded


def test_what_the_dom_makes_actionable_keeps_its_ref_and_says_why() -> None:
    raw = "\n".join(
        [
            "- list [ref=e4]:",
            "  - listitem [ref=e5] [cursor=move]: Build the package",
            "  - listitem [ref=e6] [draggable]: Run the tests",
            "  - listitem [ref=e7]: Plain",
            '- generic "Contacts" [ref=e8] [focusable]:',
            "  - generic [ref=e9] [cursor=pointer]: Contact 1",
            "- iframe [ref=e10]:",
            '  - generic "Rich Text Area" [ref=f1e1] [editable]:',
            "    - paragraph [ref=f1e2]: Draft text.",
        ]
    )
    assert snapshot.compact(raw).splitlines() == [
        "- list:",
        "  - listitem [ref=e5] [cursor=move]: Build the package",
        "  - listitem [ref=e6] [draggable]: Run the tests",
        "  - listitem: Plain",
        '- generic "Contacts" [ref=e8] [focusable]:',
        "  - generic [ref=e9]: Contact 1",
        "- iframe:",
        '  - generic "Rich Text Area" [ref=f1e1] [editable]:',
        '    - "Draft text."',
    ]


def test_over_the_cap_long_prose_is_cut_short_before_anything_folds() -> None:
    words = " ".join(f"word{i}" for i in range(120))
    raw = "\n".join(
        line
        for p in range(1, 31)
        for line in (
            f"- paragraph [ref=e{10 * p}]:",
            f"  - text: {words}",
            f'  - link "reference {p}" [ref=e{10 * p + 1}] [cursor=pointer]:',
            f"    - /url: /ref/{p}",
        )
    )
    whole = snapshot.compact(raw)
    folded = snapshot.folded(raw, len(whole) // 2)
    assert folded is not None and len(folded) <= len(whole) // 2
    assert "more like the above" not in folded  # nothing had to fold
    assert snapshot.refs_in(folded) == snapshot.refs_in(whole)  # every link, with its ref
    cut = [line for line in folded.splitlines() if line.lstrip().startswith('- "word0 ')]
    assert len(cut) == 30 and all(re.search(r"… \[\+\d+ chars\]\"$", c) for c in cut), cut[:2]


def test_cut_prose_stays_quoted_as_page_text() -> None:
    """A cut line is quoted as every page text is (engine/pagetext.py): a bracket or a
    quote of the page never reads as a ref or the string's end."""
    forged = 'Click "OK" [ref=e99] ' + " ".join(f"word{i}" for i in range(120))
    raw = pagetext.escape_snapshot(
        "\n".join(f"- paragraph [ref=e{p}]: {forged}" for p in range(1, 30))
    )
    folded = snapshot.folded(raw, len(snapshot.compact(raw)) // 2)
    assert folded is not None and "[+" in folded
    assert "[ref=e99]" not in folded and '"OK"' not in folded
    assert "\\u005bref=e99\\u005d" in folded
