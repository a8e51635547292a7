"""How much the snapshot line memories (``snapshot_text.LineReader``) keep.

Both memories are module-wide (every session and profile of the service): the engine's
ref scan (``SCAN_READER``) and MCP's compact form (``snapshot_lines.READER``). They are
bounded by the characters they hold, and long lines are not kept; what they give stays
what a first reading gives.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import pytest

from browserdeck.engine import snapshot_text as st
from browserdeck.mcpserver import snapshot, snapshot_lines

READERS: dict[str, st.LineReader[Any]] = {"scan": st.SCAN_READER, "mcp": snapshot_lines.READER}


@pytest.fixture(params=list(READERS))
def reader(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[st.LineReader[Any]]:
    """One of the real readers with an empty memory (restored afterwards)."""
    found = READERS[request.param]
    monkeypatch.setattr(found, "memo", {})
    monkeypatch.setattr(found, "chars", 0)
    yield found


def kept_chars(reader: st.LineReader[Any]) -> int:
    return sum(map(len, reader.memo))


def page(n: int, big: str) -> str:
    """A page that keeps its buttons and changes one long text in every snapshot."""
    rows = [f'- button "Row {i}" [ref=e{i + 2}] [cursor=pointer]' for i in range(40)]
    return "\n".join(
        [
            "- generic [active] [ref=e1]:",
            *["  " + r for r in rows],
            f'  - paragraph [ref=e99]: "{big}{n}"',
        ]
    )


def fresh(reader: st.LineReader[Any], text: str) -> list[object]:
    """What a first reading gives (nothing remembered), leaving the memory as it was."""
    memo, chars = reader.memo, reader.chars
    reader.memo, reader.chars = {}, 0
    try:
        return list(reader.lines(text))
    finally:
        reader.memo, reader.chars = memo, chars


def test_a_long_line_that_changes_every_snapshot_is_not_kept(reader: st.LineReader[Any]) -> None:
    """300 snapshots of a page with one changing 100 KB line once kept 151 MB."""
    big = "x" * 100_000
    for n in range(300):
        text = page(n, big)
        assert reader.lines(text) == fresh(reader, text)
    assert max(map(len, reader.memo)) <= reader.longest
    assert len(reader.memo) == 41  # the page's short lines, once each
    assert kept_chars(reader) < 5_000


def test_the_memory_is_emptied_before_it_holds_more_than_its_budget(
    reader: st.LineReader[Any],
) -> None:
    """Lines just short enough to be kept, all different: at most ``budget`` characters
    (4 M) are held, well before the 10,000-line limit would empty it."""
    name = "n" * 900
    seen_full = False
    for n in range(12):
        text = "\n".join(f'- button "{name}{n}-{i}" [ref=e{i}]' for i in range(1, 800))
        assert reader.lines(text) == fresh(reader, text)
        assert kept_chars(reader) <= reader.chars <= reader.budget
        seen_full |= reader.chars > reader.budget - 800 * 1_000
    assert seen_full  # it did fill up to about the budget
    assert len(reader.memo) < reader.limit


def test_a_snapshot_over_the_budget_on_its_own_is_read_not_kept(
    reader: st.LineReader[Any],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(reader, "budget", 50_000)
    text = "\n".join(f'- button "{"n" * 500}{i}" [ref=e{i}]' for i in range(1, 200))
    text += "\n" + "- text: " + "y" * 5_000  # a long line among them, read in place
    assert reader.lines(text) == fresh(reader, text)
    assert reader.memo == {} and reader.chars == 0


def test_a_snapshot_over_the_bounds_on_its_own_leaves_the_memory_as_it_is(
    reader: st.LineReader[Any],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Another session's lines stay: emptying would not make room for this snapshot."""
    other = page(0, "x")
    reader.lines(other)
    before, chars = dict(reader.memo), reader.chars
    assert len(before) == 42
    monkeypatch.setattr(reader, "limit", 100)  # 199 lines: over the limit on its own
    text = "\n".join(f'- button "b{i}" [ref=e{i}]' for i in range(1, 200)) + "\n" + other
    assert reader.lines(text) == fresh(reader, text)
    assert reader.memo == before and reader.chars == chars
    monkeypatch.setattr(reader, "limit", 10_000)
    monkeypatch.setattr(reader, "budget", 2_500)  # its 2,700 characters alone: over
    big = "\n".join(f'- button "{"n" * 900}{i}" [ref=e{i}]' for i in range(3))
    assert reader.lines(big) == fresh(reader, big)
    assert reader.memo == before and reader.chars == chars


@pytest.mark.parametrize("wide", ["\u0436", "\U0001f600"])  # 2 and 4 bytes a character
def test_the_budget_holds_in_bytes_for_non_ascii_lines(
    reader: st.LineReader[Any], wide: str
) -> None:
    """CPython stores a non-ASCII str at 2-4 bytes a character: the budget counts bytes."""
    name = wide * 900
    for n in range(12):
        text = "\n".join(f'- button "{name}{n}-{i}" [ref=e{i}]' for i in range(1, 800))
        assert reader.lines(text) == fresh(reader, text)
        held = sum(sys.getsizeof(raw) for raw in reader.memo)
        assert held <= reader.chars + 100 * len(reader.memo) <= reader.budget + 100 * 800
    assert 0 < len(reader.memo) < 800 * 4  # emptied well before the line limit


def test_the_compact_form_of_a_page_with_a_long_line_is_unchanged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Byte-identical output whether the lines come from the memory or not."""
    monkeypatch.setattr(snapshot_lines.READER, "memo", {})
    monkeypatch.setattr(snapshot_lines.READER, "chars", 0)
    big = "z" * 3_000
    first = [snapshot.compact(page(n, big)) for n in range(3)]
    monkeypatch.setattr(snapshot_lines.READER, "longest", 10**9)  # everything kept
    monkeypatch.setattr(snapshot_lines.READER, "memo", {})
    assert [snapshot.compact(page(n, big)) for n in range(3)] == first
    assert f'"{big}2"' in first[2]
