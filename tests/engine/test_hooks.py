"""Arming: dialogs and file choosers; unarmed dialogs never block the page."""

from __future__ import annotations

from pathlib import Path

import pytest

from browserdeck.engine import options
from browserdeck.errors import InvalidInput
from tests.engine.conftest import Tab, ref_of
from tests.support.answers import fields_of

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def arm_dialog(tab: Tab, **kw: object) -> dict[str, object]:
    return fields_of(
        await tab.engine.arm_dialog(
            tab.cdp_url, tab.target_id, None, options.DialogOptions.model_validate(kw)
        )
    )


async def arm_files(tab: Tab, **kw: object) -> dict[str, object]:
    return fields_of(
        await tab.engine.arm_file_chooser(
            tab.cdp_url, tab.target_id, None, options.FileChooserOptions.model_validate(kw)
        )
    )


async def test_unarmed_dialog_is_dismissed_and_reported_once(tab: Tab) -> None:
    await tab.goto("dialogs.html")
    snap = (await tab.snap())["snapshot"]
    clicked = await tab.act(kind="click", ref=ref_of(snap, 'button "Confirm"'))
    # The page is not blocked: the next call works; one of the two reports the dialog.
    waited = await tab.act(kind="wait", text="confirm=false")
    dialogs = clicked.get("dialogs", []) + waited.get("dialogs", [])
    assert len(dialogs) == 1
    assert dialogs[0].type == "confirm" and dialogs[0].message == "Are you sure?"
    assert dialogs[0].action == "dismissed" and dialogs[0].armed is False
    again = await tab.snap()
    assert "dialogs" not in again


async def test_alert_does_not_hang_later_calls(tab: Tab) -> None:
    await tab.goto("dialogs.html")
    snap = (await tab.snap())["snapshot"]
    await tab.act(kind="click", ref=ref_of(snap, 'button "Alert"'))
    await tab.act(kind="wait", text="alert done", timeoutMs=5000)
    assert await tab.text("#r") == "alert done"


async def test_armed_dialog_accepts_prompt_with_text(tab: Tab) -> None:
    await tab.goto("dialogs.html")
    snap = (await tab.snap())["snapshot"]
    armed = await arm_dialog(tab, accept=True, promptText="Ada")
    assert armed["armed"] is True and armed["expiresInMs"] == 120_000
    clicked = await tab.act(kind="click", ref=ref_of(snap, 'button "Prompt"'))
    waited = await tab.act(kind="wait", text="prompt=Ada")
    dialogs = clicked.get("dialogs", []) + waited.get("dialogs", [])
    assert dialogs[0].action == "accepted" and dialogs[0].armed is True
    assert dialogs[0].prompt_text == "Ada" and dialogs[0].default_value == "anon"
    # The arm was used up: the next confirm is dismissed again.
    await tab.act(kind="click", ref=ref_of(snap, 'button "Confirm"'))
    await tab.act(kind="wait", text="confirm=false")


async def test_armed_dialog_can_accept_confirm_and_dismiss(tab: Tab) -> None:
    await tab.goto("dialogs.html")
    snap = (await tab.snap())["snapshot"]
    await arm_dialog(tab, accept=True)
    await tab.act(kind="click", ref=ref_of(snap, 'button "Confirm"'))
    await tab.act(kind="wait", text="confirm=true")
    await arm_dialog(tab, accept=False)
    await tab.act(kind="click", ref=ref_of(snap, 'button "Prompt"'))
    await tab.act(kind="wait", text="prompt=null")


async def test_expired_arm_falls_back_to_dismiss(tab: Tab) -> None:
    await tab.goto("dialogs.html")
    snap = (await tab.snap())["snapshot"]
    await arm_dialog(tab, accept=True, timeoutMs=500)
    waited = await tab.act(kind="wait", timeMs=600)  # the arm expires meanwhile
    assert waited["waited"] == ["timeMs=600"]
    await tab.act(kind="click", ref=ref_of(snap, 'button "Confirm"'))
    await tab.act(kind="wait", text="confirm=false")


async def test_upload_directly_into_an_input_by_ref_and_by_selector(
    tab: Tab, upload_file: Path
) -> None:
    await tab.goto("upload.html")
    snap = (await tab.snap())["snapshot"]
    out = await arm_files(
        tab, paths=[str(upload_file)], inputRef=ref_of(snap, 'button "Attachment"')
    )
    assert out["via"] == "input" and out["files"] == ["hello.txt"]
    assert await tab.text("#names") == "hello.txt:12"
    other = upload_file.with_name("two.txt")
    other.write_text("22")
    await arm_files(tab, paths=[str(upload_file), str(other)], element="#file")
    assert await tab.text("#names") == "hello.txt:12,two.txt:2"


async def test_upload_by_clicking_the_button_that_opens_the_chooser(
    tab: Tab, upload_file: Path
) -> None:
    await tab.goto("upload.html")
    snap = (await tab.snap())["snapshot"]
    out = await arm_files(tab, paths=[str(upload_file)], ref=ref_of(snap, 'button "Choose files"'))
    assert out["via"] == "chooser"
    assert await tab.text("#names") == "hello.txt:12"


async def test_armed_chooser_answers_a_later_click(tab: Tab, upload_file: Path) -> None:
    await tab.goto("upload.html")
    snap = (await tab.snap())["snapshot"]
    armed = await arm_files(tab, paths=[str(upload_file)])
    assert armed["armed"] is True
    clicked = await tab.act(kind="click", ref=ref_of(snap, 'button "Choose files"'))
    waited = await tab.act(kind="wait", text="hello.txt:12")
    dialogs = clicked.get("dialogs", []) + waited.get("dialogs", [])
    assert dialogs and dialogs[0].type == "filechooser"


async def test_upload_refuses_missing_or_relative_paths(tab: Tab, tmp_path: Path) -> None:
    await tab.goto("upload.html")
    with pytest.raises(InvalidInput, match="not a file that exists"):
        await arm_files(tab, paths=[str(tmp_path / "nope.txt")], element="#file")
    with pytest.raises(InvalidInput, match="not absolute"):
        await arm_files(tab, paths=["relative.txt"], element="#file")
