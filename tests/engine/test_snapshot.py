"""Snapshots: formats, options, frames, shadow DOM, stats and size limits."""

from __future__ import annotations

import re
from typing import Any

import pytest

from browserdeck.results import Snapshot, SnapshotRef
from tests.engine.conftest import Tab, ref_of

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def test_ai_snapshot_has_refs_url_title_and_stats(tab: Tab) -> None:
    await tab.goto("form.html")
    snap = await tab.snap()
    assert snap["format"] == "ai" and snap["refsMode"] == "aria"
    assert snap["url"].endswith("/form.html") and snap["title"] == "Form"
    text = snap["snapshot"]
    assert 'textbox "Text"' in text and 'button "Send"' in text
    refs = re.findall(r"\[ref=([^\]]+)\]", text)
    assert len(refs) == len(set(refs)) == snap["stats"].refs
    assert snap["stats"].chars == len(text)
    assert snap["stats"].lines == len(text.splitlines())
    assert 0 < snap["stats"].interactive < snap["stats"].refs


async def test_cross_origin_iframe_and_same_origin_iframe_refs_work(tab: Tab) -> None:
    await tab.goto("frames.html")
    await tab.act(kind="wait", fn="() => document.querySelectorAll('iframe').length === 2")
    snap = await tab.snap()
    text = snap["snapshot"]
    frame_refs = re.findall(r'button "Frame button" \[ref=(f\d+e\d+)\]', text)
    assert len(frame_refs) == 2, text
    for ref in frame_refs:
        await tab.act(kind="click", ref=ref)
    same = await tab.js(
        "document.getElementById('same').contentDocument.getElementById('b').textContent"
    )
    assert same == "Clicked same"
    # The cross-site frame runs in another process: read it through a fresh snapshot.
    after = (await tab.snap())["snapshot"]
    assert 'button "Clicked cross"' in after and 'button "Clicked same"' in after


async def test_open_shadow_root_elements_have_usable_refs(tab: Tab) -> None:
    await tab.goto("shadow.html")
    snap = await tab.snap()
    ref = ref_of(snap["snapshot"], 'button "Shadow button"')
    await tab.act(kind="click", ref=ref)
    assert await tab.text("#out") == "shadow clicked"
    field = ref_of(snap["snapshot"], 'textbox "Shadow field"')
    await tab.act(kind="type", ref=field, text="in the shadow")
    assert (
        await tab.js("document.getElementById('host').shadowRoot.querySelector('input').value")
        == "in the shadow"
    )


async def test_role_format_refs_only_interactive_and_nth_for_duplicates(tab: Tab) -> None:
    await tab.goto("dupes.html")
    snap = await tab.snap(format="role")
    assert snap["refsMode"] == "role"
    text = snap["snapshot"]
    deletes = [ln for ln in text.splitlines() if 'button "Delete"' in ln]
    assert len(deletes) == 3
    assert [re.search(r"\[nth=(\d)\]", ln).group(1) for ln in deletes] == ["0", "1", "2"]  # type: ignore[union-attr]
    assert "[nth=" not in next(ln for ln in text.splitlines() if 'button "Add row"' in ln)
    # Non-interactive lines carry no refs in role format.
    for line in text.splitlines():
        if "[ref=" in line:
            role = line.strip().lstrip("- ").lstrip("'").split(" ")[0]
            assert role in {"button", "link", "textbox", "checkbox", "radio", "combobox"}, line
    assert set(snap["refs"]) == set(re.findall(r"\[ref=([^\]]+)\]", text))
    second = re.search(r"\[ref=([^\]]+)\]", deletes[1]).group(1)  # type: ignore[union-attr]
    assert snap["refs"][second] == SnapshotRef(role="button", name="Delete", nth=1)
    # Served as declared (results.Snapshot.refs): nth only where there are several.
    served = Snapshot.model_validate(snap).wire()["refs"]
    assert served[second] == {"role": "button", "name": "Delete", "nth": 1}
    add = next(k for k, v in snap["refs"].items() if v.name == "Add row")
    assert served[add] == {"role": "button", "name": "Add row"}
    await tab.act(kind="click", ref=second)
    assert await tab.text("#out") == "deleted Beta"


async def test_interactive_is_flat_and_only_actionable(tab: Tab) -> None:
    await tab.goto("form.html")
    full = await tab.snap()
    flat = await tab.snap(interactive=True)
    lines = flat["snapshot"].splitlines()
    assert all(ln.startswith("- ") for ln in lines)
    assert all("[ref=" in ln for ln in lines)
    assert not any(ln.startswith("- heading") or "generic" in ln for ln in lines)
    assert flat["stats"].chars < full["stats"].chars
    # Refs are the same elements' refs as in the full snapshot.
    assert ref_of(flat["snapshot"], 'button "Send"') == ref_of(full["snapshot"], 'button "Send"')


async def test_compact_drops_unnamed_wrappers_and_keeps_refs(tab: Tab) -> None:
    await tab.goto("dupes.html")
    full = (await tab.snap())["snapshot"]
    compact = (await tab.snap(compact=True))["snapshot"]
    assert "- generic [active]" in full and "- generic [active]" not in compact
    assert "- list" in full and "- list" not in compact
    assert set(re.findall(r'button "Delete" \[ref=(\w+)\]', compact)) == set(
        re.findall(r'button "Delete" \[ref=(\w+)\]', full)
    )
    # Children moved up: the Delete buttons are at top level now.
    assert any(ln.startswith('- button "Delete"') for ln in compact.splitlines())


async def test_depth_limits_the_tree(tab: Tab) -> None:
    await tab.goto("dupes.html")
    shallow = (await tab.snap(depth=2))["snapshot"]
    assert 'button "Delete"' not in shallow
    assert 'button "Add row"' in shallow


async def test_selector_scopes_the_snapshot(tab: Tab) -> None:
    await tab.goto("dupes.html")
    snap = await tab.snap(selector="#rows")
    assert 'button "Delete"' in snap["snapshot"] and "Add row" not in snap["snapshot"]


async def test_frame_option_snapshots_inside_an_iframe(tab: Tab) -> None:
    await tab.goto("frames.html")
    await tab.act(
        kind="wait", fn="() => document.getElementById('same').contentDocument?.getElementById('b')"
    )
    snap = await tab.snap(frame="#same")
    assert 'button "Frame button"' in snap["snapshot"]
    assert "Main button" not in snap["snapshot"]
    await tab.act(kind="click", ref=ref_of(snap["snapshot"], 'button "Frame button"'))
    assert (
        await tab.js(
            "document.getElementById('same').contentDocument.getElementById('b').textContent"
        )
        == "Clicked same"
    )


async def test_selector_that_matches_nothing_is_not_found(tab: Tab) -> None:
    from browserdeck.errors import NotFound

    await tab.goto("dupes.html")
    with pytest.raises(NotFound, match="matches no element"):
        await tab.snap(selector="#nope")
    # A frame selector that names something else (it was a 500, browser_error).
    with pytest.raises(NotFound, match="not an <iframe>"):
        await tab.snap(frame=":root")


async def test_max_chars_cuts_with_an_explicit_marker(tab: Tab) -> None:
    await tab.goto("long.html")
    snap = await tab.snap(maxChars=1000)
    text = snap["snapshot"]
    assert "[... truncated: showing" in text and "maxChars" in text
    assert snap["truncated"].shown_chars <= 1000 < snap["truncated"].total_chars
    limited = await tab.snap(limit=10)
    assert limited["truncated"].shown_lines == 10


async def test_aria_format_is_the_raw_ax_tree_with_limit(tab: Tab) -> None:
    await tab.goto("form.html")
    snap = await tab.snap(format="aria")
    assert snap["format"] == "aria"
    assert re.search(r'- RootWebArea "Form" \[ref=ax1\]', snap["snapshot"])
    assert '- button "Send" [ref=ax' in snap["snapshot"]
    small = await tab.snap(format="aria", limit=5)
    assert small["stats"].lines == 5 and "showing 5 of " in small["snapshot"]
    assert small["truncated"].shown_lines == 5 < small["truncated"].total_lines
    inter = await tab.snap(format="aria", interactive=True)
    assert all(not ln.startswith(" ") for ln in inter["snapshot"].splitlines())
    assert "StaticText" not in inter["snapshot"]


async def test_aria_format_takes_a_selector_and_a_frame(tab: Tab) -> None:
    from browserdeck.errors import Conflict, NotFound

    await tab.goto("form.html")
    scoped = await tab.snap(format="aria", selector="#bio")
    assert scoped["snapshot"].startswith('- textbox "Bio" [ref=ax1]'), scoped["snapshot"]
    assert 'button "Send"' not in scoped["snapshot"]
    with pytest.raises(NotFound, match="matches no element"):
        await tab.snap(format="aria", selector="#nope")
    await tab.goto("frames.html")
    await tab.act(kind="wait", fn="() => document.querySelectorAll('iframe').length === 2")
    await tab.act(kind="wait", fn="() => !!document.getElementById('same').contentDocument?.querySelector('button')")
    inner = await tab.snap(format="aria", frame="#same")
    assert 'button "Frame button"' in inner["snapshot"] and "Main button" not in inner["snapshot"]
    button = await tab.snap(format="aria", frame="#same", selector="button")
    assert button["snapshot"].startswith('- button "Frame button"'), button["snapshot"]
    # A cross-site frame runs in another process: format=ai reads it, aria says so.
    with pytest.raises(Conflict, match="another process"):
        await tab.snap(format="aria", frame="#cross")
    with pytest.raises(NotFound, match="not an <iframe>"):
        await tab.snap(format="aria", frame="#m")


async def test_ax_refs_are_read_only(tab: Tab) -> None:
    from pydantic import ValidationError

    await tab.goto("form.html")
    await tab.snap()
    # Refused as the request is read, whatever the action.
    with pytest.raises(ValidationError, match="read-only"):
        await tab.act(kind="click", ref="ax3")


async def test_names_with_quotes_and_colons_round_trip_in_role_mode(tab: Tab) -> None:
    await tab.goto(
        'data:text/html,<button onclick="document.title=\'q\'">Say "hi": now</button>'
        "<button onclick=\"document.title='c'\">a: b</button>"
    )
    snap = await tab.snap(format="role")
    refs = {v.name: k for k, v in snap["refs"].items()}
    assert set(refs) == {'Say "hi": now', "a: b"}
    await tab.act(kind="click", ref=refs['Say "hi": now'])
    assert await tab.js("document.title") == "q"
    await tab.act(kind="click", ref=refs["a: b"])
    assert await tab.js("document.title") == "c"


async def test_fast_ref_scan_matches_the_full_parser(tab: Tab) -> None:
    from browserdeck.engine import snapshot_text as st

    await tab.goto("frames.html")
    await tab.act(
        kind="wait", fn="() => document.getElementById('same').contentDocument?.getElementById('b')"
    )
    text = (await tab.snap())["snapshot"]
    assert "- '" not in text  # the fast path
    fast, fast_totals = st.scan(text)
    quoted = text + "\n- 'button \"a: b\" [ref=e999]'"  # forces the full parser
    slow, slow_totals = st.scan(quoted)
    assert slow[:-1] == fast and slow[-1] == ("e999", "button", "a: b", (), True, 0)
    assert {k: v for k, v in slow_totals.items() if k != ((), "button", "a: b")} == fast_totals
    assert any(chain for _, _, _, chain, _, _ in fast)  # iframe refs carry their frame


async def test_viewport_snapshot_shows_the_viewport_and_keeps_every_ref(tab: Tab) -> None:
    # big.html?n=600: 300 rows of a button and a link, far taller than the viewport.
    await tab.goto("big.html?n=600")
    full = (await tab.snap())["snapshot"]
    far = ref_of(full, 'button "Button 290"')
    snap = await tab.snap(viewport=True)
    text = snap["snapshot"]
    assert 'button "Button 0"' in text and 'button "Button 290"' not in text
    assert "[box=" not in text
    assert snap["viewport"].outside > 0 and snap["viewport"].height > 0
    assert snap["stats"].refs >= 600  # the ref table still covers the whole page
    # A ref of an element outside the viewport still acts on that element.
    await tab.act(kind="click", ref=far)
    assert await tab.text("#hit") == "hit 290"
    # The click scrolled it into view: now it is in, and the top is out.
    text = (await tab.snap(viewport=True))["snapshot"]
    assert 'button "Button 290"' in text and 'button "Button 0"' not in text
    aria = await tab.snap(format="aria", viewport=True, interactive=True)
    assert 'button "Button 290"' in aria["snapshot"], aria["snapshot"][:500]
    assert 'button "Button 0"' not in aria["snapshot"]
    assert aria["viewport"].outside > 0


# A page with one frame, written the way Playwright writes it: an escaped name, a pointer
# attr after the ref, text and /url lines (not elements), a line nobody can parse.
ONE_FRAME = "\n".join(
    [
        "- generic [active] [ref=e1]:",
        '  - button "Say \\"hi\\"" [ref=e2] [cursor=pointer]',
        "  - text: hello",
        '  - link "Docs" [ref=e3] [cursor=pointer]:',
        "    - /url: /docs",
        '  - generic "Card" [ref=e4] [cursor=pointer]: Open',
        '  - button "Edit" [disabled] [ref=e5]',
        '  - button "Edit" [ref=e6]',
        '  - heading "Title" [level=2]',
        "  - this line is : not parseable [",
    ]
)


async def test_ref_scan_of_one_frame_reads_names_pointers_and_counts() -> None:
    from browserdeck.engine import snapshot_text as st

    entries, totals = st.scan(ONE_FRAME)
    assert entries == [
        ("e1", "generic", "", (), False, 0),
        ("e2", "button", 'Say "hi"', (), True, 0),
        ("e3", "link", "Docs", (), True, 0),
        ("e4", "generic", "Card", (), True, 0),  # a pointer makes any element actionable
        ("e5", "button", "Edit", (), True, 0),
        ("e6", "button", "Edit", (), True, 1),
    ]
    assert totals[((), "button", "Edit")] == 2
    assert totals[((), "heading", "Title")] == 1  # counted without a ref
    assert not any(role in ("text", "/url") for _, role, _ in totals)
    # The same answer as the full parser's (a YAML-quoted line sends the text there).
    slow, slow_totals = st.scan(ONE_FRAME + "\n- 'button \"a: b\" [ref=e9]'")
    assert slow[:-1] == entries
    assert {k: v for k, v in slow_totals.items() if k != ((), "button", "a: b")} == totals


def table_state(key: list[tuple[int, int]] | None = None) -> Any:
    """What build_table reads of a tab, without a browser: one document's memory. Its
    document key is read from ``key[0]`` when given (a test moves it to a new document)."""
    from types import SimpleNamespace

    from browserdeck.engine.state import TargetMemory

    return SimpleNamespace(
        memory=TargetMemory(),
        token=1,
        main_epoch=1,
        child_epoch=0,
        page=SimpleNamespace(url="http://example.test/"),
        epoch_key=(lambda main: (1, 1)) if key is None else (lambda main: key[0]),
    )


async def test_the_ref_table_of_a_text_is_what_each_ref_looks_up() -> None:
    """The table keeps a row per ref and makes a ref's RefInfo when it is looked up
    (issue 14: an action uses one of a big page's thousands); what a lookup finds is
    the scan's own answer, and a ref not in the text stays unknown (fails closed)."""

    from browserdeck.engine import snapshot as snap
    from browserdeck.engine import snapshot_text as st
    from browserdeck.engine.options import SnapshotOptions

    state = table_state()
    table, renamed = snap.build_table(state, ONE_FRAME, SnapshotOptions(), "aria")  # type: ignore[arg-type]
    assert renamed == {}  # a tab's first document: Playwright's names as they are
    entries, totals = st.scan(ONE_FRAME)
    assert list(table.refs) == [e[0] for e in entries] and len(table.refs) == 6
    for pw_ref, role, name, chain, interactive, nth in entries:
        info = table.refs[pw_ref]
        assert (info.ref, info.pw_ref, info.role, info.name) == (pw_ref, pw_ref, role, name)
        assert (info.frame_chain, info.nth, info.interactive) == (chain, nth, interactive)
        assert info.count == totals[(chain, role, name)]
        assert table.refs[pw_ref] is info  # made once
    assert table.refs.interactive_count() == sum(1 for e in entries if e[4])
    assert "e7" not in table.refs and table.refs.get("e7") is None
    assert table.refs.pw_refs() == {e[0]: e[0] for e in entries}

    # A new document restarts Playwright's numbering: the agent's refs go on above it.
    state.epoch_key = lambda main: (2, 1)
    table, renamed = snap.build_table(state, ONE_FRAME, SnapshotOptions(), "aria")  # type: ignore[arg-type]
    assert renamed == {f"e{n}": f"e{n + 6}" for n in range(1, 7)}
    assert table.refs["e12"].pw_ref == "e6" and "e6" not in table.refs
    shown = re.findall(r"\[ref=([^\]]+)\]", snap.rename_refs(ONE_FRAME, renamed))
    assert shown == [f"e{n}" for n in range(7, 13)] == list(table.refs)


async def test_ref_scan_reads_only_the_lines_that_changed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The next snapshot of a page repeats most lines as they were (issue 14): the scan
    reads each distinct line once (st.LineReader) and gives what a first reading gives."""
    from browserdeck.engine import snapshot_text as st

    monkeypatch.setattr(st.SCAN_READER, "memo", {})
    first = st.scan(ONE_FRAME)
    reads: list[int] = []
    real = st.SCAN_READER.pattern

    class Counting:
        def findall(self, text: str) -> list[tuple[str, ...]]:
            reads.append(text.count("\n") + 1)
            return real.findall(text)

    monkeypatch.setattr(st.SCAN_READER, "pattern", Counting())
    # Focus moved from the page to the second "Edit" button: two lines differ.
    after = ONE_FRAME.replace("[active] ", "").replace(
        'button "Edit" [ref=e6]', 'button "Edit" [active] [ref=e6]'
    )
    second = st.scan(after)
    assert reads == [2]
    assert second[0][-1] == ("e6", "button", "Edit", (), True, 1)
    monkeypatch.setattr(st.SCAN_READER, "pattern", real)
    monkeypatch.setattr(st.SCAN_READER, "memo", {})  # nothing remembered: the same answers
    assert st.scan(after) == second and st.scan(ONE_FRAME) == first


async def test_ref_names_are_split_once_and_the_memory_is_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """build_table splits each Playwright ref ("f2e14" -> "f2", 14) once and remembers it
    (the same in every snapshot of a document); the memory is emptied when full."""

    from browserdeck.engine import reftable as snap
    from browserdeck.engine.options import SnapshotOptions

    def table_of() -> tuple[list[str], int]:
        """The table's refs, and the highest number the tab has handed out."""
        state = table_state()
        table, _ = snap.build_table(state, ONE_FRAME, SnapshotOptions(), "aria")  # type: ignore[arg-type]
        return list(table.refs), state.memory.issued_max

    refs = ["e1", "e2", "e3", "e4", "e5", "e6"]
    monkeypatch.setattr(snap, "_SPLIT", {})
    assert table_of() == (refs, 6)
    assert snap._SPLIT["e6"] == ("", 6)
    # What is remembered is what is used: a wrong memory shows (so it is never stale by
    # design: a ref's split depends on the ref alone) ...
    snap._SPLIT["e6"] = ("", 60)
    assert table_of() == (refs, 60)
    # ... until the memory is full and emptied: read again from the refs themselves.
    monkeypatch.setattr(snap, "_SPLIT_MAX", 3)
    assert table_of() == (refs, 6)
    assert len(snap._SPLIT) == 6


def count_scans(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Each scan build_table runs (of a text, or of lines it has read), as it runs."""
    from browserdeck.engine import snapshot_text as st

    scans: list[object] = []
    real_scan, real_read = st.scan, st.scan_read

    def counting(text: str) -> Any:
        scans.append(text)
        return real_scan(text)

    def counting_read(lines: Any, *, one_frame: bool) -> Any:
        scans.append(lines)
        return real_read(lines, one_frame=one_frame)

    monkeypatch.setattr(st, "scan", counting)
    monkeypatch.setattr(st, "scan_read", counting_read)
    return scans


async def test_the_same_text_with_the_same_numbering_builds_the_same_rows_without_a_scan(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A snapshot whose text did not change since the tab's last build (an action that
    changed nothing, a second look) reuses that build's rows instead of scanning the text
    again (issue 14, docs/performance.md); the table is still a new one. Anything else the
    rows depend on (a new document, the format, depth) builds them afresh."""
    from browserdeck.engine import snapshot as snap
    from browserdeck.engine.options import SnapshotOptions

    scans = count_scans(monkeypatch)
    state = table_state()

    def fresh(text: str, opts: SnapshotOptions) -> dict[str, Any]:
        """What a build gives from the numbering as it is, with no build to reuse."""
        alone = table_state()
        alone.epoch_key = state.epoch_key
        alone.memory.bases = dict(state.memory.bases)
        alone.memory.issued_max = state.memory.issued_max
        table, _ = snap.build_table(alone, text, opts, "aria")  # type: ignore[arg-type]
        scans.pop()
        return {ref: table.refs[ref] for ref in table.refs}

    aria = SnapshotOptions()
    first, _ = snap.build_table(state, ONE_FRAME, aria, "aria")  # type: ignore[arg-type]
    expected = fresh(ONE_FRAME, aria)
    again, renamed = snap.build_table(state, ONE_FRAME, aria, "aria")  # type: ignore[arg-type]
    assert len(scans) == 1 and again is not first and renamed == {}
    assert {ref: again.refs[ref] for ref in again.refs} == expected
    assert list(again.refs) == list(first.refs) and state.memory.issued_max == 6
    assert again.refs["e6"] == first.refs["e6"]
    # Another text, then the first again: the last build is the only one kept.
    changed = ONE_FRAME.replace('"Docs"', '"Help"')
    snap.build_table(state, changed, aria, "aria")  # type: ignore[arg-type]
    snap.build_table(state, ONE_FRAME, aria, "aria")  # type: ignore[arg-type]
    assert len(scans) == 3
    # Format role keeps only interactive refs; a depth limit counts nothing.
    role, _ = snap.build_table(state, ONE_FRAME, SnapshotOptions(format="role"), "role")  # type: ignore[arg-type]
    assert len(scans) == 4 and "e4" not in role.refs and "e2" in role.refs
    deep, _ = snap.build_table(state, ONE_FRAME, SnapshotOptions(depth=5), "aria")  # type: ignore[arg-type]
    assert len(scans) == 5 and deep.refs["e6"].count is None
    # A new document restarts Playwright's numbering: the same text is renamed above it,
    # and the next same text keeps those names (the numbering is where the build left it).
    state.epoch_key = lambda main: (2, 1)
    moved, renamed = snap.build_table(state, ONE_FRAME, aria, "aria")  # type: ignore[arg-type]
    assert len(scans) == 6 and list(moved.refs) == [f"e{n}" for n in range(7, 13)]
    expected = fresh(ONE_FRAME, aria)
    same, renamed_again = snap.build_table(state, ONE_FRAME, aria, "aria")  # type: ignore[arg-type]
    assert len(scans) == 6 and {ref: same.refs[ref] for ref in same.refs} == expected
    assert renamed_again == renamed == {f"e{n}": f"e{n + 6}" for n in range(1, 7)}
    assert state.memory.issued_max == 12 and state.memory.bases[""] == (6, (2, 1))
    # Only from the numbering the last build left (the only one there is, as long as each
    # build records itself): one moved by anything else builds the rows again.
    state.memory.issued_max = 20
    snap.build_table(state, ONE_FRAME, aria, "aria")  # type: ignore[arg-type]
    assert len(scans) == 7


async def test_a_text_over_the_kept_size_leaves_no_build_in_the_tab(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The tab's last build holds its whole text (and its lines): a tab kept any text,
    however big, and 50 tabs are remembered. A text over ``KEEP_CHARS`` (MCP's limit for
    its kept trees too: one constant) is built as ever and not kept: the next build of
    it scans it afresh."""
    from browserdeck.engine import snapshot as snap
    from browserdeck.engine import snapshot_text as st
    from browserdeck.engine.options import SnapshotOptions

    scans = count_scans(monkeypatch)
    state = table_state()
    aria = SnapshotOptions()
    snap.build_table(state, ONE_FRAME, aria, "aria")  # type: ignore[arg-type]
    assert state.memory.last_build is not None and "\n".join(state.memory.last_build.lines) == ONE_FRAME
    monkeypatch.setattr(st, "KEEP_CHARS", len(ONE_FRAME))
    bigger = ONE_FRAME + '\n- button "More" [ref=e7] [cursor=pointer]'
    big, _ = snap.build_table(state, bigger, aria, "aria")  # type: ignore[arg-type]
    assert state.memory.last_build is None and "e7" in big.refs
    again, _ = snap.build_table(state, bigger, aria, "aria")  # type: ignore[arg-type]
    assert len(scans) == 3 and list(again.refs) == list(big.refs)


async def test_the_ref_table_is_built_while_the_title_is_on_its_way(
    tab: Tab, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The title is read beside Playwright's walk and comes after the text (it waits
    behind the walk in the renderer, and the driver hands it over once it has rendered
    the text): the ref table does not wait for it (issue 14, docs/performance.md). A snapshot
    that fails ends the title's round trip instead of leaving it running."""
    import asyncio

    from browserdeck.engine import snapshot as snap
    from browserdeck.errors import NotFound

    await tab.goto("form.html")
    built = asyncio.Event()
    real_build, real_title = snap.build_table, snap._title

    def build_table(*args: Any, **kw: Any) -> Any:
        built.set()
        return real_build(*args, **kw)

    async def late_title(state: Any) -> str:
        await asyncio.wait_for(built.wait(), 5)  # only once the table is being built
        return await real_title(state)

    monkeypatch.setattr(snap, "build_table", build_table)
    monkeypatch.setattr(snap, "_title", late_title)
    result = await tab.snap()
    assert result["title"] == "Form" and 'button "Send"' in result["snapshot"]

    ended: list[str] = []

    def stuck(what: str) -> Any:
        async def never(state: Any) -> Any:
            try:
                await asyncio.Event().wait()
            finally:
                ended.append(what)

        return never

    monkeypatch.setattr(snap, "_title", stuck("title"))
    monkeypatch.setattr(snap, "_viewport", stuck("viewport"))
    with pytest.raises(NotFound, match="matches no element"):
        await asyncio.wait_for(tab.snap(selector="#nothing-here", viewport=True), 10)
    assert sorted(ended) == ["title", "viewport"]
    # Cancelled while Playwright walks the page: the same.
    ended.clear()
    monkeypatch.setattr(snap, "ai_text", lambda state, opts: stuck("walk")(state))
    call = asyncio.ensure_future(tab.snap(viewport=True))
    await asyncio.sleep(0.05)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert sorted(ended) == ["title", "viewport", "walk"]


async def test_a_title_that_failed_beside_a_failed_snapshot_is_not_logged(
    tab: Tab, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The title's round trip ended in an error before the snapshot failed: the snapshot's
    error is reported, and the title's is retrieved, not logged by asyncio as "Task
    exception was never retrieved" when the task is collected."""
    import asyncio
    import gc

    from browserdeck.engine import snapshot as snap
    from browserdeck.errors import NotFound

    await tab.goto("form.html")

    async def broken_title(state: Any) -> str:
        raise RuntimeError("the title broke")

    monkeypatch.setattr(snap, "_title", broken_title)
    loop = asyncio.get_running_loop()
    logged: list[str] = []
    handler = loop.get_exception_handler()
    loop.set_exception_handler(lambda _loop, context: logged.append(str(context.get("message"))))
    try:
        failed = False
        try:
            await tab.snap(selector="#nothing-here")
        except NotFound:
            failed = True  # not kept: its traceback would keep the title's task alive
        assert failed
        gc.collect()
        await asyncio.sleep(0)
    finally:
        loop.set_exception_handler(handler)
    assert logged == []
