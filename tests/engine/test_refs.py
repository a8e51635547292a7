"""Refs fail closed: never an action on a different element than the snapshot showed."""

from __future__ import annotations

import re

import pytest

from browserdeck.engine import refs as refs_mod
from browserdeck.errors import Conflict, InvalidInput, NotFound
from tests.engine.conftest import Tab, ref_of

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def test_ref_spellings_normalize() -> None:
    for raw in ("e12", "@e12", "ref=e12", " e12 ", "[ref=e12]", "12"):
        assert refs_mod.normalize(raw) == "e12"
    assert refs_mod.normalize("@f2e7") == "f2e7"
    with pytest.raises(InvalidInput, match="not a ref"):
        refs_mod.normalize("button")
    with pytest.raises(InvalidInput, match="read-only"):
        refs_mod.normalize("ax5")


async def test_all_spellings_work_in_an_action(tab: Tab) -> None:
    await tab.goto("hover.html")
    ref = ref_of((await tab.snap())["snapshot"], 'button "Counter"')
    for spelling in (ref, f"@{ref}", f"ref={ref}"):
        await tab.act(kind="click", ref=spelling)
    assert await tab.text("#cnt") == "3"


async def test_unknown_ref_and_no_snapshot_are_not_found(tab: Tab) -> None:
    await tab.goto("hover.html")
    with pytest.raises(NotFound, match="no snapshot yet"):
        await tab.act(kind="click", ref="e1")
    await tab.snap()
    with pytest.raises(NotFound, match="e999 is not in the latest snapshot") as err:
        await tab.act(kind="click", ref="e999")
    assert "take a new snapshot" in (err.value.hint or "")


async def test_ref_from_before_a_navigation_is_stale(tab: Tab) -> None:
    await tab.goto("dupes.html")
    ref = ref_of((await tab.snap())["snapshot"], 'button "Add row"')
    await tab.goto("hover.html")
    with pytest.raises(Conflict, match=f"ref {ref} is stale: the page navigated") as err:
        await tab.act(kind="click", ref=ref)
    assert err.value.code == "stale_ref"
    assert "new snapshot" in (err.value.hint or "")


async def test_refs_never_repeat_in_a_tab_across_documents(tab: Tab) -> None:
    """Playwright restarts at e1 on every document; an old e5 must not name a new element."""
    await tab.goto("dupes.html")
    first = set(re.findall(r"\[ref=([^\]]+)\]", (await tab.snap())["snapshot"]))
    await tab.goto("dupes.html")  # the same page again: a new document
    second = set(re.findall(r"\[ref=([^\]]+)\]", (await tab.snap())["snapshot"]))
    assert first and second and not first & second
    old = sorted(first)[0]
    with pytest.raises(NotFound, match="not in the latest snapshot"):
        await tab.act(kind="click", ref=old)


async def test_refs_never_repeat_across_documents_no_request_fetched(tab: Tab) -> None:
    """A data: URL's document comes with no request (Playwright's newDocument is an empty
    dict): it is a new document all the same, so its refs are numbered above the last
    document's and an old ref cannot name one of its elements."""
    import urllib.parse

    await tab.goto("dupes.html")
    first = (await tab.snap())["snapshot"]
    old = ref_of(first, 'button "Delete"')  # the first element with a ref there
    for body in ("<button>Other</button>", "<button>Again</button>"):
        await tab.goto("data:text/html," + urllib.parse.quote(body))
        snap = (await tab.snap())["snapshot"]
        refs = set(re.findall(r"\[ref=([^\]]+)\]", snap))
        assert refs and not refs & set(re.findall(r"\[ref=([^\]]+)\]", first)), snap
        with pytest.raises(NotFound, match="not in the latest snapshot"):
            await tab.act(kind="click", ref=old)
        first, old = snap, ref_of(snap, "button")


async def test_refs_are_stable_across_snapshots_of_one_document(tab: Tab) -> None:
    await tab.goto("dupes.html")
    a = (await tab.snap())["snapshot"]
    b = (await tab.snap())["snapshot"]
    assert a == b


async def test_removed_element_fails_closed_fast(tab: Tab) -> None:
    await tab.goto("dupes.html")
    snap = (await tab.snap())["snapshot"]
    alpha_delete = re.findall(r'button "Delete" \[ref=([^\]]+)\]', snap)[0]
    await tab.act(kind="click", ref=ref_of(snap, 'button "Remove first"'))
    with pytest.raises(Conflict, match="no longer on the page"):
        await tab.act(kind="click", ref=alpha_delete, timeoutMs=60000)
    assert await tab.text("#out") == "-"  # nothing else was clicked


async def test_aria_ref_keeps_naming_its_element_when_rows_shift(tab: Tab) -> None:
    """A new row above must not make the ref click a different row (agent-browser #1443)."""
    await tab.goto("dupes.html")
    snap = (await tab.snap())["snapshot"]
    beta = re.findall(r'button "Delete" \[ref=([^\]]+)\]', snap)[1]
    await tab.act(kind="click", ref=ref_of(snap, 'button "Add row"'))
    await tab.act(kind="click", ref=beta)
    assert await tab.text("#out") == "deleted Beta"


async def test_role_ref_fails_closed_when_duplicates_change(tab: Tab) -> None:
    await tab.goto("dupes.html")
    snap = await tab.snap(format="role")
    beta = next(r for r, v in snap["refs"].items() if v.name == "Delete" and v.nth == 1)
    add = next(r for r, v in snap["refs"].items() if v.name == "Add row")
    await tab.act(kind="click", ref=add)  # a new Delete row appears at the top
    # Identity still holds (same Page): the ref still clicks Beta, not the new second row.
    await tab.act(kind="click", ref=beta)
    assert await tab.text("#out") == "deleted Beta"


async def test_role_ref_fails_closed_when_its_name_changes(tab: Tab) -> None:
    await tab.goto("dupes.html")
    snap = await tab.snap(format="role")
    rename = next(r for r, v in snap["refs"].items() if v.name == "Rename me")
    await tab.act(kind="click", ref=rename)  # the button is now "Renamed"
    with pytest.raises(Conflict, match='no longer button "Rename me"'):
        await tab.act(kind="click", ref=rename)


async def test_scoped_snapshot_replaces_the_ref_map(tab: Tab) -> None:
    """Playwright resolves aria-ref against the latest snapshot of the frame; so do we."""
    await tab.goto("dupes.html")
    full = (await tab.snap())["snapshot"]
    add = ref_of(full, 'button "Add row"')
    beta = re.findall(r'button "Delete" \[ref=([^\]]+)\]', full)[1]
    scoped = (await tab.snap(selector="#rows"))["snapshot"]
    assert beta in scoped and add not in scoped
    with pytest.raises(NotFound, match="limited to selector='#rows'"):
        await tab.act(kind="click", ref=add)
    await tab.act(kind="click", ref=beta)  # inside the scope: still the same element
    assert await tab.text("#out") == "deleted Beta"


async def test_labelled_screenshot_does_not_disturb_refs(tab: Tab) -> None:
    await tab.goto("dupes.html")
    full = (await tab.snap())["snapshot"]
    gamma = re.findall(r'button "Delete" \[ref=([^\]]+)\]', full)[2]
    shot = await tab.shot(labels=True)
    assert any(label.ref == gamma for label in shot["labels"])
    await tab.act(kind="click", ref=gamma)
    assert await tab.text("#out") == "deleted Gamma"


async def test_spa_route_change_keeps_surviving_elements_and_fails_removed_ones(tab: Tab) -> None:
    await tab.goto("spa/home")
    snap = (await tab.snap())["snapshot"]
    home_action = ref_of(snap, 'button "Home action"')
    about_link = ref_of(snap, 'link "About"')
    await tab.act(kind="click", ref=about_link)
    assert (await tab.js("location.pathname")) == "/spa/about"
    # Same document: the nav link is the same element and still works ...
    await tab.act(kind="click", ref=ref_of(snap, 'link "Home"'))
    assert (await tab.js("location.pathname")) == "/spa/home"
    # ... but the Home action button was replaced by a new one: its old ref fails closed.
    with pytest.raises(Conflict, match="no longer on the page"):
        await tab.act(kind="click", ref=home_action)
    assert await tab.text("#s") == "-"


async def test_iframe_navigation_makes_its_refs_stale(tab: Tab) -> None:
    await tab.goto("frames.html")
    await tab.act(
        kind="wait", fn="() => document.getElementById('same').contentDocument?.getElementById('b')"
    )
    snap = (await tab.snap())["snapshot"]
    frame_ref = re.findall(r'button "Frame button" \[ref=(f\d+e\d+)\]', snap)[0]
    main_ref = ref_of(snap, 'button "Main button"')
    await tab.js("document.getElementById('same').src = '/inner.html?who=again'")
    await tab.act(
        kind="wait",
        fn="() => document.getElementById('same').contentWindow.location.search === '?who=again'",
    )
    with pytest.raises(Conflict, match="iframe it is in navigated"):
        await tab.act(kind="click", ref=frame_ref)
    await tab.act(kind="click", ref=main_ref)  # main-frame refs are unaffected
    assert await tab.text("#m") == "main clicked"


async def test_after_reconnect_role_refs_resolve_by_role_and_aria_refs_fail_closed(
    tab: Tab,
) -> None:
    from tests.engine.conftest import _http

    await tab.goto("dupes.html")
    role = await tab.snap(format="role")
    gamma = next(r for r, v in role["refs"].items() if v.name == "Delete" and v.nth == 2)
    # Drop the engine's connection: the browser and the tab must survive it.
    await tab.engine.drop(tab.cdp_url)
    assert any(t["id"] == tab.target_id for t in _http(f"{tab.cdp_url}/json/list"))
    # A new connection hands back a new Page; role refs come back from the LRU.
    await tab.act(kind="click", ref=gamma)
    assert await tab.text("#out") == "deleted Gamma"

    aria = (await tab.snap())["snapshot"]
    beta = re.findall(r'button "Delete" \[ref=([^\]]+)\]', aria)[1]
    await tab.engine.drop(tab.cdp_url)
    with pytest.raises(Conflict, match="re-established"):
        await tab.act(kind="click", ref=beta)


async def test_after_reconnect_role_ref_refuses_when_duplicates_changed(tab: Tab) -> None:
    await tab.goto("dupes.html")
    role = await tab.snap(format="role")
    beta = next(r for r, v in role["refs"].items() if v.name == "Delete" and v.nth == 1)
    add = next(r for r, v in role["refs"].items() if v.name == "Add row")
    await tab.engine.drop(tab.cdp_url)
    await tab.act(kind="click", ref=add)  # restored, unique: fine; now 4 Delete buttons
    with pytest.raises(Conflict, match='has 4 button "Delete" where the snapshot had 3'):
        await tab.act(kind="click", ref=beta)
    assert await tab.text("#out") == "-"


async def test_after_reconnect_new_snapshot_numbers_continue(tab: Tab) -> None:
    await tab.goto("dupes.html")
    before = set(re.findall(r"\[ref=([^\]]+)\]", (await tab.snap())["snapshot"]))
    await tab.engine.drop(tab.cdp_url)
    after = set(re.findall(r"\[ref=([^\]]+)\]", (await tab.snap())["snapshot"]))
    assert before and after and not before & after
