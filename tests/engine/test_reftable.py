"""The ref table after an action: the rows of the last build when the lines read the same.

Issue 14 target 5 (docs/performance.md, "Where a big snapshot's time goes"): after a
click, the next text of a big page differs in a few lines (a status line, the focus),
and what the rows are built from (each element line's role, name, ref, ...) is the same.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from browserdeck.engine import reftable
from browserdeck.engine import snapshot as snap
from browserdeck.engine.options import SnapshotOptions
from browserdeck.errors import Conflict
from tests.engine.conftest import Tab, ref_of
from tests.engine.test_snapshot import count_scans, table_state

pytestmark = pytest.mark.asyncio(loop_scope="module")

# 40 lines: up to 4 may differ for the last build's lines to be compared one by one.
PAGE = "\n".join(
    [
        "- generic [active] [ref=e1]:",
        "  - paragraph [ref=e2]: nothing yet",
        '  - link "Docs" [ref=e3] [cursor=pointer]:',
        "    - /url: /docs",
        '  - textbox "Name" [ref=e4]: Ann',
        *(
            f'  - row "Order {i}" [ref=e{10 + 2 * i}]:\n'
            f'    - button "Edit" [ref=e{11 + 2 * i}] [cursor=pointer]'
            for i in range(17)
        ),
        '  - button "Export" [ref=e50]',
    ]
)
# After a click on the second Edit: the status line, the focus, the field's value, a
# link's URL changed; nothing the rows are read from.
ACTED = (
    PAGE.replace("- generic [active] [ref=e1]", "- generic [ref=e1]")
    .replace("nothing yet", "clicked Edit 1")
    .replace('"Edit" [ref=e13]', '"Edit" [active] [ref=e13]')
    .replace('"Name" [ref=e4]: Ann', '"Name" [ref=e4]: Anna')
)
# Changes the rows do depend on: each builds them again.
REBUILT = {
    "a name": ACTED.replace('"Order 3"', '"Order 33"'),
    "a ref": ACTED.replace("[ref=e50]", "[ref=e51]"),
    "a role": ACTED.replace('button "Export"', 'link "Export"'),
    "pointer": ACTED.replace('"Order 3" [ref=e16]', '"Order 3" [ref=e16] [cursor=pointer]'),
    "a line gone": ACTED.replace('  - button "Export" [ref=e50]', '  - text: "Export"'),
    "a line more": ACTED + '\n  - button "Import" [ref=e52]',
    "an indent": ACTED.replace('  - button "Export"', '    - button "Export"'),
}


def fresh(state: Any, text: str, opts: SnapshotOptions) -> dict[str, Any]:
    """What a build gives from the tab's numbering as it is, with no build to compare."""
    alone = table_state()
    alone.epoch_key = state.epoch_key
    alone.memory.bases = dict(state.memory.bases)
    alone.memory.issued_max = state.memory.issued_max
    table, _ = reftable.build_table(alone, text, opts, "aria")
    return {ref: table.refs[ref] for ref in table.refs}


async def test_lines_that_read_the_same_keep_the_last_builds_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    scans = count_scans(monkeypatch)
    state = table_state()
    aria = SnapshotOptions()
    first, _ = reftable.build_table(state, PAGE, aria, "aria")
    expected = fresh(state, ACTED, aria)
    scans.clear()
    acted, renamed = reftable.build_table(state, ACTED, aria, "aria")
    assert scans == [] and acted is not first and renamed == {}
    assert {ref: acted.refs[ref] for ref in acted.refs} == expected
    assert state.memory.issued_max == 50
    # Which refs exist is this snapshot's: a ref it does not have stays unknown.
    assert "e51" not in acted.refs and "e13" in acted.refs
    for what, text in REBUILT.items():
        expected = fresh(state, text, aria)
        scans.clear()
        table, _ = reftable.build_table(state, text, aria, "aria")
        assert len(scans) == 1, what
        assert {ref: table.refs[ref] for ref in table.refs} == expected, what
        reftable.build_table(state, ACTED, aria, "aria")  # back: the next one compares
    # Another format, a depth limit: rows of their own, read again.
    scans.clear()
    role, _ = reftable.build_table(state, PAGE, SnapshotOptions(format="role"), "role")
    assert len(scans) == 1 and "e2" not in role.refs


async def test_renames_after_a_new_document_are_the_same_line_by_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """After a new document every ref is renamed above the tab's numbering; the next
    text's renames are worked out for its changed lines only, and give the same text
    as renaming it whole (a "[ref=" with no "]" on its line included)."""
    state = table_state()
    aria = SnapshotOptions()
    reftable.build_table(state, PAGE, aria, "aria")
    state.epoch_key = lambda main: (2, 1)  # a new document restarted Playwright's numbering
    table, renamed = reftable.build_table(state, PAGE, aria, "aria")
    assert renamed["e1"] == "e51" and "e51" in table.refs
    first = snap.render(PAGE, aria, table, renamed)
    assert first == reftable.rename_refs(PAGE, dict(renamed)) and "[ref=e63]" in first
    whole: list[str] = []
    real = reftable.rename_refs

    def counting(text: str, shown: dict[str, str]) -> str:
        whole.append(text)
        return real(text, shown)

    monkeypatch.setattr(reftable, "rename_refs", counting)
    odd = ACTED.replace("clicked Edit 1", "clicked [ref=e4 and [ref=e3]")
    for text in (ACTED, odd, PAGE):
        table, again = reftable.build_table(state, text, aria, "aria")
        assert again is renamed  # the rows held, and their renames
        whole.clear()
        assert snap.render(text, aria, table, again) == real(text, dict(renamed))
        assert "\n" not in "".join(whole)  # line by line
    assert "[ref=e54]] and" not in snap.render(odd, aria, table, renamed)
    assert "clicked [ref=e4 and [ref=e53]" in snap.render(odd, aria, table, renamed)


async def test_a_snapshot_after_a_click_keeps_working_refs_and_old_ones_fail(
    tab: Tab, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a real page, through the engine: the snapshot after a click builds no new rows
    (its lines read the same), its refs act on their elements, and a ref of the document
    before a navigation is refused as before."""
    await tab.goto("big.html?n=60")
    await tab.goto("big.html?n=60")  # a new document: refs are renamed above the first one's
    before = (await tab.snap())["snapshot"]
    assert ref_of(before, 'button "Button 0"') != "e3"  # renamed
    await tab.act(kind="click", ref=ref_of(before, 'button "Button 3"'))
    scans = count_scans(monkeypatch)
    after = (await tab.snap())["snapshot"]
    assert scans == [] and "hit 3" in after and after != before
    assert re.findall(r"\[ref=([^\]]+)\]", after) == re.findall(r"\[ref=([^\]]+)\]", before)
    button = ref_of(after, 'button "Button 7"')
    await tab.act(kind="click", ref=button)
    assert await tab.text("#hit") == "hit 7"
    await tab.goto("big.html?n=60")
    with pytest.raises(Conflict, match="stale"):
        await tab.act(kind="click", ref=button)
    assert ref_of((await tab.snap())["snapshot"], 'button "Button 7"') != button


async def test_renames_share_the_builds_lines() -> None:
    """After a new document the renamed lines are kept beside the build's own lines, not
    beside a second split of the same text (docs/performance.md, "A text that changed in
    a few lines")."""
    state = table_state()
    aria = SnapshotOptions()
    reftable.build_table(state, PAGE, aria, "aria")
    state.epoch_key = lambda main: (2, 1)  # a new document: every ref renamed
    for text in (PAGE, ACTED):
        table, renamed = reftable.build_table(state, text, aria, "aria")
        build = state.memory.last_build
        assert build is not None and "\n".join(build.lines) == text
        out = snap.render(text, aria, table, renamed, build.lines)
        assert out == reftable.rename_refs(text, dict(renamed))
        assert renamed.last is not None and renamed.last[0] is build.lines


async def test_every_tabs_builds_together_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Over ``KEPT_BUDGET`` characters in all, the least recently built tab's build is
    dropped first; that tab's next snapshot is built afresh and gives the same rows."""
    monkeypatch.setattr(reftable, "KEPT_BUDGET", 2 * len(PAGE) + 1)
    aria = SnapshotOptions()
    tabs = [table_state() for _ in range(3)]
    for state in tabs:
        reftable.build_table(state, PAGE, aria, "aria")
    assert [state.memory.last_build is not None for state in tabs] == [False, True, True]
    table, _ = reftable.build_table(tabs[0], PAGE, aria, "aria")  # used again: kept
    assert [state.memory.last_build is not None for state in tabs] == [True, False, True]
    assert {ref: table.refs[ref] for ref in table.refs} == fresh(table_state(), PAGE, aria)
