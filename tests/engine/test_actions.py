"""Every /act kind, each proving its effect on the page (read back over raw CDP)."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from browserdeck.api.errors import status_of
from browserdeck.errors import ActionTimeout, InvalidInput
from browserdeck.results import Size
from tests.engine.conftest import Tab, ref_of

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def form(tab: Tab) -> str:
    await tab.goto("form.html")
    return str((await tab.snap())["snapshot"])


async def submitted(tab: Tab) -> dict[str, object]:
    await tab.js("show('check')")
    return dict(json.loads(await tab.text("#out")))


async def test_click_single_double_right_and_modifiers(tab: Tab) -> None:
    await tab.goto("hover.html")
    snap = (await tab.snap())["snapshot"]
    counter = ref_of(snap, 'button "Counter"')
    out = await tab.act(kind="click", ref=counter)
    assert out["ok"] and out["ref"] == counter and out["url"].endswith("hover.html")
    assert await tab.text("#cnt") == "1"
    await tab.act(kind="click", ref=counter, doubleClick=True)
    assert await tab.text("#dbl") == "double"
    await tab.act(kind="click", ref=counter, button="right")
    assert await tab.text("#dbl") == "right"
    await tab.act(
        kind="click", ref=ref_of(snap, 'link "Modifier link"'), modifiers=["Shift", "Alt"]
    )
    assert await tab.text("#mods") == "shift+alt"


async def test_type_fill_slowly_and_submit(tab: Tab) -> None:
    snap = await form(tab)
    await tab.act(kind="type", ref=ref_of(snap, 'textbox "Text"'), text="hello")
    await tab.act(kind="type", ref=ref_of(snap, 'textbox "Notes"'), text="line", slowly=True)
    await tab.act(kind="type", ref=ref_of(snap, 'textbox "Bio"'), text="about me")
    data = await submitted(tab)
    assert data["text"] == "hello" and data["notes"] == "line" and data["bio"] == "about me"
    assert "l i n e" in await tab.text("#keys")  # slowly: real key events
    await tab.act(kind="type", ref=ref_of(snap, 'textbox "Email"'), text="a@b.c", submit=True)
    assert json.loads(await tab.text("#out"))["how"] == "submitted"


async def test_type_into_a_button_is_a_clear_error(tab: Tab) -> None:
    snap = await form(tab)
    with pytest.raises(InvalidInput, match="not a text field"):
        await tab.act(kind="type", ref=ref_of(snap, 'button "Send"'), text="x", timeoutMs=1000)


async def test_press_on_page_and_on_element(tab: Tab) -> None:
    snap = await form(tab)
    await tab.act(kind="press", key="Escape")
    await tab.act(kind="type", ref=ref_of(snap, 'textbox "Text"'), text="abc")
    await tab.act(kind="press", key="Backspace", ref=ref_of(snap, 'textbox "Text"'))
    assert "Escape" in await tab.text("#keys")
    assert (await submitted(tab))["text"] == "ab"
    # Refused as the request is read (the key names are published as a pattern).
    with pytest.raises(ValidationError, match="unknown key"):
        await tab.act(kind="press", key="NoSuchKey")


async def test_every_published_key_is_one_playwright_presses(tab: Tab) -> None:
    # The pattern the schema publishes for press keys is Playwright's own key set: each
    # name and character presses (none is an "Unknown key"), as does a modifier chord.
    from browserdeck.engine.fields import KEY_CODES

    await tab.goto("data:text/html,<p>keys</p>")
    printable = [chr(c) for c in range(0x20, 0x7F)]
    for key in [*KEY_CODES, *printable, "Shift++", "ControlOrMeta+Shift+KeyZ", "\n"]:
        if key in ("F5", "Control+R"):  # keys that would leave the page
            continue
        await tab.act(kind="press", key=key)


async def test_hover(tab: Tab) -> None:
    await tab.goto("hover.html")
    await tab.act(kind="hover", ref=ref_of((await tab.snap())["snapshot"], 'button "Hover me"'))
    assert await tab.text("#tip") == "tooltip shown"


async def test_drag_and_drop(tab: Tab) -> None:
    await tab.goto("dnd.html")
    snap = (await tab.snap())["snapshot"]
    await tab.act(
        kind="drag",
        startRef=ref_of(snap, 'button "Card"'),
        endRef=ref_of(snap, 'region "Drop zone"'),
    )
    assert await tab.text("#result") == "dropped card"


async def test_select_single_and_multiple(tab: Tab) -> None:
    snap = await form(tab)
    fruit = ref_of(snap, 'combobox "Fruit"')
    out = await tab.act(kind="select", ref=fruit, values=["Pear"])
    assert out["selected"] == ["pear"]
    await tab.act(kind="select", ref=ref_of(snap, 'listbox "Colours"'), values=["red", "blue"])
    data = await submitted(tab)
    assert data["fruit"] == "pear" and data["colours"] == ["red", "blue"]
    with pytest.raises(InvalidInput, match="not options"):
        await tab.act(kind="select", ref=fruit, values=["banana"], timeoutMs=1000)


async def test_fill_many_fields_with_checkbox_radio_select_and_every_input_type(tab: Tab) -> None:
    snap = await form(tab)
    values = {
        'textbox "Text"': "Ada",
        'textbox "Email"': "ada@example.com",
        'textbox "Password"': "s3cret",
        'spinbutton "Number"': "42",
        'searchbox "Search"': "q",
        'textbox "Phone"': "+1 555",
        'textbox "Website"': "https://x.y",
        'textbox "Date"': "2024-05-06",
        'textbox "Time"': "13:45",
        'textbox "Local"': "2024-05-06T07:08",
        'textbox "Month"': "2024-05",
        'textbox "Week"': "2024-W19",
        'textbox "Notes"': "multi\nline",
    }
    fields: list[dict[str, object]] = []
    for line, value in values.items():
        try:
            fields.append({"ref": ref_of(snap, line), "value": value})
        except AssertionError:
            pytest.fail(f"{line} missing from the snapshot:\n{snap}")
    fields += [
        {"ref": ref_of(snap, 'checkbox "Agree"'), "value": True},
        {"ref": ref_of(snap, 'checkbox "Newsletter"'), "value": "false"},
        {"ref": ref_of(snap, 'radio "Medium"'), "value": True},
        {"ref": ref_of(snap, 'combobox "Fruit"'), "value": "plum"},
        {"ref": ref_of(snap, 'slider "Volume"'), "value": "7"},
    ]
    out = await tab.act(kind="fill", fields=fields)
    assert len(out["filled"]) == len(fields)
    filled = {f.ref: f for f in out["filled"]}
    assert filled[fields[-5]["ref"]].checked is True and filled[fields[-4]["ref"]].checked is False
    assert filled[fields[-2]["ref"]].selected == ["plum"]
    assert filled[fields[-1]["ref"]].value == "7"
    data = await submitted(tab)
    assert data == {
        "how": "check",
        "text": "Ada",
        "email": "ada@example.com",
        "password": "s3cret",
        "number": "42",
        "search": "q",
        "tel": "+1 555",
        "url": "https://x.y",
        "date": "2024-05-06",
        "time": "13:45",
        "local": "2024-05-06T07:08",
        "month": "2024-05",
        "week": "2024-W19",
        "color": "#000000",
        "range": "7",
        "notes": "multi\nline",
        "agree": True,
        "news": False,
        "size": "m",
        "fruit": "plum",
        "colours": [],
        "bio": "",
    }


async def test_fill_rejects_a_non_boolean_checkbox_value(tab: Tab) -> None:
    snap = await form(tab)
    with pytest.raises(InvalidInput, match="not a checkbox/radio value"):
        await tab.act(
            kind="fill", fields=[{"ref": ref_of(snap, 'checkbox "Agree"'), "value": "maybe"}]
        )


async def test_resize_changes_the_viewport(tab: Tab) -> None:
    await tab.goto("hover.html")
    out = await tab.act(kind="resize", width=640, height=480)
    assert out["viewport"] == Size(width=640, height=480)
    assert await tab.js("[innerWidth, innerHeight]") == [640, 480]


async def test_wait_for_text_selector_fn_url_and_gone(tab: Tab) -> None:
    await tab.goto("hover.html")
    snap = (await tab.snap())["snapshot"]
    await tab.act(kind="click", ref=ref_of(snap, 'button "Make later"'))
    out = await tab.act(kind="wait", text="Appeared")
    assert out["waited"] == ["text"]
    await tab.act(
        kind="wait",
        selector="button:nth-of-type(4)",
        fn="() => document.title === 'Hover'",
        loadState="load",
        url="**/hover.html",
    )
    await tab.js("setTimeout(() => document.getElementById('tip').textContent = 'bye', 200)")
    await tab.js("document.getElementById('tip').textContent = 'going'")
    await tab.act(kind="wait", textGone="going")
    assert await tab.text("#tip") == "bye"
    with pytest.raises(ActionTimeout, match="timed out after 500 ms"):
        await tab.act(kind="wait", text="Never there", timeoutMs=100)  # clamped up to 500
    with pytest.raises(InvalidInput, match="wait needs one of"):
        await tab.act(kind="wait")


async def test_evaluate_page_and_element_and_errors(tab: Tab) -> None:
    snap = await form(tab)
    assert (await tab.act(kind="evaluate", fn="() => document.title"))["result"] == "Form"
    assert (await tab.act(kind="evaluate", fn="1 + 2"))["result"] == 3
    out = await tab.act(
        kind="evaluate", fn="(el) => el.textContent", ref=ref_of(snap, 'button "Send"')
    )
    assert out["result"] == "Send"
    with pytest.raises(InvalidInput, match="the script threw"):
        await tab.act(kind="evaluate", fn="() => { throw new Error('nope') }")
    with pytest.raises(ActionTimeout, match="did not finish"):
        await tab.act(kind="evaluate", fn="() => new Promise(() => {})", timeoutMs=500)
    # Bad input, not a browserdeck bug (these were 500s).
    with pytest.raises(InvalidInput, match="refers to itself"):
        await tab.act(kind="evaluate", fn="() => { const a = {}; a.a = a; return a }")
    with pytest.raises(InvalidInput, match="invalid CSS selector") as err:
        await tab.act(kind="wait", selector=">>>", timeoutMs=500)
    assert status_of(err.value) == 400


async def test_scroll_into_view(tab: Tab) -> None:
    await tab.goto("long.html")
    snap = (await tab.snap())["snapshot"]
    assert await tab.js("scrollY") == 0
    await tab.act(kind="scrollIntoView", ref=ref_of(snap, 'button "Button 100"'))
    assert await tab.js("scrollY") > 10000


async def test_close_closes_the_tab(tab: Tab) -> None:
    from tests.engine.conftest import _http

    await tab.goto("hover.html")
    out = await tab.act(kind="close")
    assert out["closed"] is True
    assert all(t["id"] != tab.target_id for t in _http(f"{tab.cdp_url}/json/list"))


async def test_click_that_navigates_reports_it(tab: Tab) -> None:
    await tab.goto(f"data:text/html,<a href='{tab.site.url('hover.html')}'>go</a>")
    out = await tab.act(kind="click", ref=ref_of((await tab.snap())["snapshot"], 'link "go"'))
    await tab.act(kind="wait", url="**/hover.html")
    assert out["ok"]


async def test_click_on_a_covered_element_times_out_with_the_reason(tab: Tab) -> None:
    await tab.goto("hover.html")
    snap = (await tab.snap())["snapshot"]
    await tab.js(
        "const d = document.createElement('div'); d.id = 'cover'; d.style.cssText = "
        "'position:fixed;inset:0;background:rgba(0,0,0,.1)'; document.body.append(d)"
    )
    with pytest.raises(ActionTimeout, match="another element covers it") as err:
        await tab.act(kind="click", ref=ref_of(snap, 'button "Counter"'), timeoutMs=700)
    assert "close it first" in (err.value.hint or "")
    assert await tab.text("#cnt") == "0"


async def test_disabled_button_times_out_saying_so(tab: Tab) -> None:
    snap = await form(tab)
    with pytest.raises(ActionTimeout, match="disabled"):
        await tab.act(kind="click", ref=ref_of(snap, 'button "Disabled"'), timeoutMs=600)
