"""The compact snapshot keeps every actionable ref, on real Playwright ai snapshots."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import pytest
from playwright.async_api import Page, async_playwright

from browserdeck.engine import snapshot_text as st
from browserdeck.mcpserver import snapshot, snapshot_lines, snapshot_search
from tests.support.browsers import RawChromium


@pytest.fixture
async def page(chromium: RawChromium) -> AsyncIterator[Page]:
    async with async_playwright() as pw:
        browser = await pw.chromium.connect_over_cdp(chromium.cdp_url)
        ctx = browser.contexts[0]
        yield ctx.pages[0] if ctx.pages else await ctx.new_page()
        await browser.close()


@pytest.mark.parametrize("path", ["/shop.html", "/form.html", "/frames.html"])
async def test_compact_keeps_every_actionable_ref_and_is_smaller(
    page: Page, site: str, path: str
) -> None:
    await page.goto(site + path)
    if path == "/frames.html":
        await page.frame_locator("iframe").locator("button").wait_for()
    raw = await page.aria_snapshot(mode="ai")
    compact = snapshot.compact(raw)
    wanted = snapshot.actionable_refs(raw)
    assert wanted, "the page has actionable elements"
    assert wanted <= snapshot.refs_in(compact)
    assert len(compact) < 0.85 * len(raw)
    # A kept ref still names the element Playwright gave it to.
    for ref in sorted(wanted)[:3]:
        assert await page.locator(f"aria-ref={ref}").count() == 1


async def test_compact_covers_iframe_and_shadow_refs(page: Page, site: str) -> None:
    await page.goto(site + "/frames.html")
    await page.frame_locator("iframe").locator("button").wait_for()
    compact = snapshot.compact(await page.aria_snapshot(mode="ai"))
    for name in ("Top button", "Inner button", "Shadow button", "Shadow link"):
        line = next(line for line in compact.splitlines() if f'"{name}"' in line)
        assert "[ref=" in line, line
    assert compact.count('button "Same"') == 2


def test_compact_folds_urls_and_drops_wrappers() -> None:
    raw = "\n".join(
        [
            "- generic [ref=e1]:",
            "  - generic [ref=e2]:",
            '    - link "Home" [ref=e3] [cursor=pointer]:',
            "      - /url: /home",
            '    - heading "Title" [level=1] [ref=e4]',
            "    - paragraph [ref=e5]: some text",
            "  - generic [ref=e6] [cursor=pointer]: Clickable",
            '  - textbox "Name" [ref=e7]:',
            "    - /placeholder: Your name",
            "  - this line is : not parseable [",
        ]
    )
    assert snapshot.compact(raw).splitlines() == [
        '- link "Home" [ref=e3] [url=/home]',
        '- heading "Title" [level=1]',
        '- "some text"',
        "- generic [ref=e6]: Clickable",
        '- textbox "Name" [ref=e7]:',
        "  - /placeholder: Your name",
        "- this line is : not parseable [",
    ]


def test_compact_keeps_yaml_quoting_of_keys_with_colons() -> None:
    raw = "- 'button \"a: b\" [ref=e2]'\n- 'heading \"Q: why\" [level=2] [ref=e3]'"
    assert snapshot.compact(raw).splitlines() == [
        "- 'button \"a: b\" [ref=e2]'",
        "- 'heading \"Q: why\" [level=2]'",
    ]


def test_diff_and_find() -> None:
    before = '- button "Save" [ref=e1]\n- text: draft'
    after = '- button "Save" [ref=e1]\n- text: saved'
    assert snapshot_search.diff(before, before) is None
    changes = snapshot_search.diff(before, after)
    assert changes is not None
    assert "-- text: draft" in changes and "+- text: saved" in changes
    lines, total = snapshot_search.find('- main:\n  - button "Save" [ref=e1]\n  - link "save as"', "save")
    assert total == 2 and lines[0].endswith("(in: - main:)")
    lines, total = snapshot_search.find('- button "Save"\n- link "save"', "/^- b.*Save/", regex=True)
    assert total == 1


def test_parse_reads_every_line_as_the_full_parser_does() -> None:
    # The fast path (one regex over the whole text) and the path for YAML-quoted keys
    # (the engine's line parser) build the same tree; blank lines are dropped, lines
    # nobody can parse are kept verbatim, each under the nearest shallower line.
    raw = "\n".join(
        [
            "- generic [ref=e1]:",
            '  - link "Say \\"hi\\"" [ref=e3] [cursor=pointer]:',
            "    - /url: /home",
            "",
            "  - paragraph [ref=e5]: some text",
            "  - this line is : not parseable [",
            "    - text: under it",
            '  - button "" [ref=e7]',
        ]
    )
    quoted = "- 'button \"a: b\" [ref=e9]'"

    def shape(nodes: list[snapshot.Node]) -> list[tuple[object, ...]]:
        return [
            (n.indent, n.raw, n.role, n.name, n.attrs, n.value, n.ref, shape(n.children))
            for n in nodes
        ]

    fast = snapshot.parse(raw)
    assert shape(snapshot.parse(raw + "\n" + quoted))[:-1] == shape(fast)
    (root,) = fast
    link, para, odd, button = root.children
    assert (link.name, link.ref, link.children[0].value) == ('"Say \\"hi\\""', "e3", "/home")
    assert (para.value, odd.role, odd.children[0].value) == ("some text", None, "under it")
    assert (button.name, button.ref) == ('""', "e7")


# A table with a row that repeats another's lines at other indents, a link with its /url,
# a wrapper and text: each line's reading is a function of its whole text, indent included.
_TABLE = "\n".join(
    [
        "- generic [ref=e1]:",
        '  - link "Home" [ref=e2] [cursor=pointer]:',
        "    - /url: /home",
        "  - table [ref=e3]:",
        "    - rowgroup [ref=e4]:",
        "      - row [ref=e5]:",
        '        - cell "Order 1" [ref=e6]',
        "        - cell [ref=e7]:",
        '          - button "Edit" [active] [ref=e8]',
        "      - row [ref=e9]:",
        '        - cell "Order 2" [ref=e10]',
        "        - cell [ref=e11]:",
        '          - button "Edit" [ref=e12]',
        "  - text: same words",
        "  - paragraph [ref=e13]:",
        "    - text: same words",
        '    - cell "Order 1" [ref=e6]',
    ]
)


def _counting_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many lines each regex pass of snapshot_lines reads (one entry per pass)."""
    reads: list[int] = []
    real = snapshot_lines.READER.pattern

    class Counting:
        def findall(self, text: str) -> list[tuple[str, ...]]:
            reads.append(text.count("\n") + 1)
            return real.findall(text)

        def match(self, line: str) -> re.Match[str] | None:
            reads.append(1)
            return real.match(line)

    monkeypatch.setattr(snapshot_lines.READER, "pattern", Counting())
    return reads


def test_the_next_snapshot_reads_only_its_changed_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(snapshot_lines.READER, "memo", {})
    reads = _counting_reads(monkeypatch)
    first = snapshot.compact(_TABLE)
    assert reads == [len(_TABLE.split("\n"))]
    # After a click: focus moved to the second row's button, one more line of text.
    after = _TABLE.replace(" [active]", "").replace(
        '"Edit" [ref=e12]', '"Edit" [active] [ref=e12]'
    ) + "\n  - text: clicked"
    second = snapshot.compact(after)
    assert reads[1:] == [3]  # the two rows' buttons and the new line
    # The same forms as a first reading (nothing remembered), line for line.
    monkeypatch.setattr(snapshot_lines.READER, "memo", {})
    assert snapshot.compact(_TABLE) == first
    assert snapshot.compact(after) == second
    assert second.splitlines() == [
        '- link "Home" [ref=e2] [url=/home]',
        "- table:",
        '  - row: "Order 1" | button "Edit" [ref=e8]',
        '  - row: "Order 2" | button "Edit" [active] [ref=e12]',
        '- "same words"',
        '- "same words"',
        '- cell "Order 1"',
        '- "clicked"',
    ]


def test_remembered_lines_are_bounded_and_never_needed(monkeypatch: pytest.MonkeyPatch) -> None:
    fresh = snapshot.compact(_TABLE)
    other = _TABLE.replace("Order", "Invoice")
    fresh_other = snapshot.compact(other)
    # Full: what was remembered goes, the new snapshot's lines stay.
    monkeypatch.setattr(snapshot_lines.READER, "limit", 18)  # 17 lines, 3 new
    monkeypatch.setattr(snapshot_lines.READER, "memo", {})
    assert snapshot.compact(_TABLE) == fresh
    assert snapshot.compact(other) == fresh_other
    assert set(snapshot_lines.READER.memo) == set(other.split("\n"))

    # A line gone from memory between the pass and the read (another thread emptied it):
    # read on its own, the same way.
    class Forgetful(dict[str, object]):
        def update(self, *args: object, **kwargs: object) -> None:
            pass

    forgetful = Forgetful({"- generic [ref=e1]:": snapshot_lines.READER.memo["- generic [ref=e1]:"]})
    monkeypatch.setattr(snapshot_lines.READER, "memo", forgetful)
    reads = _counting_reads(monkeypatch)
    assert snapshot.compact(_TABLE) == fresh
    assert reads[0] == len(_TABLE.split("\n")) - 1 and reads[1:] == [1] * reads[0]


def _counting_parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts compact_form parses whole (not from a kept text's tree), as it does."""
    parsed: list[str] = []
    real = snapshot.parse_tree

    def counting(text: str, raw: list[str] | None = None) -> snapshot.Tree:
        parsed.append(text)
        return real(text, raw)

    monkeypatch.setattr(snapshot, "parse_tree", counting)
    return parsed


def test_the_same_text_again_is_not_parsed_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """The next snapshot of a page whose text did not change (an action that changed
    nothing, a second look) takes the tree and compact form of that text, which depend on
    it alone (issue 14, docs/performance.md); a changed text is read as ever. Bounded."""
    monkeypatch.setattr(snapshot, "_FORMS", [])
    fresh = snapshot.parse_tree
    parsed = _counting_parses(monkeypatch)

    def real_parse(text: str) -> list[snapshot.Node]:
        return fresh(text).roots  # not counted

    roots, body = snapshot.compact_form(_TABLE)
    again = snapshot.compact_form("".join(list(_TABLE)))  # equal, not the same object
    assert parsed == [_TABLE] and again == (roots, body)
    assert body == snapshot.compact(_TABLE, real_parse(_TABLE))
    after = _TABLE.replace("Order 2", "Order 3")
    assert snapshot.compact_form(after)[1] == snapshot.compact(after, real_parse(after))
    assert len(parsed) == 1  # one line of 17 changed: the tree of the kept text's (below)
    # The last few texts are kept (the one used longest ago goes first); a big one never.
    others = [_TABLE.replace("Order", f"Order{i}") for i in range(snapshot.FORMS_MAX)]
    for text in others:
        snapshot.compact_form(text)
    parsed.clear()
    snapshot.compact_form(others[0])  # used again: now the last to go
    snapshot.compact_form(_TABLE)
    kept = [form[0] for form in snapshot._FORMS]
    assert parsed == [_TABLE] and kept == [*others[2:], others[0], _TABLE]
    monkeypatch.setattr(st, "KEEP_CHARS", len(_TABLE) - 1)
    snapshot.compact_form(after)
    assert after not in [form[0] for form in snapshot._FORMS]


def _shape(nodes: list[snapshot.Node]) -> list[object]:
    return [(n.raw, n.indent, n.role, n.leaf, n.piece, _shape(n.children)) for n in nodes]


# _TABLE and more rows: 41 lines, so that up to 5 may change for the tree to be updated.
_ROWS = _TABLE.replace(
    "\n  - text: same words",
    "".join(
        f'\n      - row [ref=e{20 + i}]:\n        - cell "Order {i}" [ref=e{50 + i}]'
        for i in range(3, 15)
    )
    + "\n  - text: same words",
    1,
)
# After a click: the focus moved, a cell's text and a link's URL changed, and the table
# got a name (a changed line above changed ones), all at the same indents.
_CLICKED = (
    _ROWS.replace('"Edit" [active] [ref=e8]', '"Edit" [ref=e8]')
    .replace("- table [ref=e3]:", '- table "Orders" [ref=e3]:')
    .replace('"Edit" [ref=e12]', '"Edit" [active] [ref=e12]')
    .replace('"Order 5"', '"Order 5 (paid)"')
    .replace("/url: /home", "/url: /home?x")
)


def test_a_text_changed_in_a_few_lines_gets_the_kept_trees_shape(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """After an action the next text differs in a few lines at the same indents: its tree
    is the kept text's, with those lines' nodes (and their ancestors) made anew and the
    rest shared (issue 14, docs/performance.md). The tree, compact form and folds are
    what a whole parse gives; the kept text's tree is left as it was. A line added, gone,
    blank or moved to another indent parses the text whole."""
    monkeypatch.setattr(snapshot, "_FORMS", [])
    fresh = snapshot.parse_tree
    parsed = _counting_parses(monkeypatch)
    monkeypatch.setattr(snapshot, "parse", lambda text: fresh(text).roots)
    roots, body = snapshot.compact_form(_ROWS)
    kept = _shape(roots)
    clicked, clicked_body = snapshot.compact_form(_CLICKED)
    assert parsed == [_ROWS]
    whole = snapshot.parse(_CLICKED)
    assert _shape(clicked) == _shape(whole) and _shape(roots) == kept
    assert clicked_body == snapshot.compact(_CLICKED, whole) != body
    assert "button \"Edit\" [active] [ref=e12]" in clicked_body
    for cap in (300, 600, 1200):
        folded = snapshot.folded(_CLICKED, cap, roots=clicked)
        assert folded == snapshot.folded(_CLICKED, cap, roots=whole)
    parsed.clear()
    # Shared where nothing changed: the last rows' nodes are the same objects.
    table = roots[0].children[1]
    assert clicked[0].children[1].children[0].children[-1] is table.children[0].children[-1]
    assert clicked[0].children[1] is not table  # an ancestor of a changed line
    reshaped = {
        "a line more": _CLICKED + '\n  - button "More" [ref=e99]',
        "a line gone": _CLICKED.replace('\n  - text: same words', "", 1),
        "a blank line": _CLICKED.replace("  - text: same words", "", 1),
        "another indent": _CLICKED.replace("  - text: same words", "    - text: same words", 1),
        "too many lines": _CLICKED.replace("Order", "Item"),
    }
    for what, text in reshaped.items():
        parsed.clear()
        got, got_body = snapshot.compact_form(text)
        assert parsed == [text], what
        assert _shape(got) == _shape(snapshot.parse(text)), what
        assert got_body == snapshot.compact(text), what


def test_a_row_shared_with_the_last_tree_is_not_inlined_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A row's inline line is worked out once per node: the rows a changed text's tree
    shares with the kept one's are written from what was worked out (issue 14); the
    compact form is what a whole parse gives."""
    monkeypatch.setattr(snapshot, "_FORMS", [])
    inlined: list[str] = []
    real = snapshot._inline_of

    def counting(node: snapshot.Node) -> str | None:
        inlined.append(node.raw.strip())
        return real(node)

    monkeypatch.setattr(snapshot, "_inline_of", counting)
    snapshot.compact_form(_ROWS)
    rows = sum(1 for line in _ROWS.split("\n") if line.lstrip().startswith("- row "))
    assert len([r for r in inlined if r.startswith("- row ")]) == rows == 14
    inlined.clear()
    _, body = snapshot.compact_form(_CLICKED)
    # The rows with a changed line (Edit's focus moved off and on; "Order 5"), made anew.
    made = sorted(r for r in inlined if r.startswith("- row "))
    assert made == ["- row [ref=e25]:", "- row [ref=e5]:", "- row [ref=e9]:"]
    monkeypatch.setattr(snapshot, "_inline_of", real)
    assert body == snapshot.compact(_CLICKED, snapshot.parse_tree(_CLICKED).roots)
