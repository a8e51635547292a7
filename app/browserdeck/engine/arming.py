"""Arming a tab for what comes next: the next file chooser (or files set now) and the
next dialog's answer."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from playwright.async_api import Error as PlaywrightError

from browserdeck.engine import options as o
from browserdeck.engine.errors import playwright_errors
from browserdeck.engine.refs import resolve
from browserdeck.engine.state import DialogArm, PageState
from browserdeck.errors import InvalidInput
from browserdeck.results import DialogEntry
from browserdeck.util import aio


def _check_files(raw_paths: list[str]) -> list[str]:
    out = []
    for raw in raw_paths:
        path = Path(raw).expanduser()
        if not path.is_absolute():
            raise InvalidInput(
                f"upload path {raw!r} is not absolute",
                hint="give absolute paths of files on this machine",
            )
        if not path.is_file():
            raise InvalidInput(
                f"upload path {raw!r} is not a file that exists", hint="check the path"
            )
        out.append(str(path))
    return out


async def arm_file_chooser(state: PageState, opts: o.FileChooserOptions) -> dict[str, Any]:
    files = _check_files(opts.paths)
    page = state.page
    arm_ms = o.arm_timeout(opts.timeout_ms)
    act_ms = o.action_timeout(None)
    names = [Path(f).name for f in files]
    if opts.input_ref or opts.element:
        if opts.input_ref:
            r = await resolve(state, opts.input_ref, "upload into")
            locator, what = r.locator, r.what("upload into")
        else:
            locator, what = page.locator(opts.element or ""), f"upload into {opts.element!r}"
        with playwright_errors(what, act_ms):
            await locator.set_input_files(files, timeout=act_ms)
        return {"ok": True, "targetId": state.target_id, "files": names, "via": "input"}
    if opts.ref:
        r = await resolve(state, opts.ref, "click")
        with playwright_errors(r.what("click to upload with"), act_ms):
            async with page.expect_file_chooser(timeout=act_ms) as chooser_info:
                await r.locator.click(timeout=act_ms)
            chooser = await chooser_info.value
            await chooser.set_files(files)
        return {
            "ok": True,
            "targetId": state.target_id,
            "files": names,
            "via": "chooser",
            "ref": r.ref,
        }
    if state.chooser_arm is not None:
        state.chooser_arm.cancel()
    state.chooser_arm = aio.create_task(
        _await_chooser(state, files, arm_ms), name=f"file-chooser-{state.target_id[:8]}"
    )
    return {
        "ok": True,
        "targetId": state.target_id,
        "armed": True,
        "files": names,
        "expiresInMs": arm_ms,
        "hint": "now click the element that opens the file chooser",
    }


async def _await_chooser(state: PageState, files: list[str], arm_ms: int) -> None:
    me = asyncio.current_task()
    try:
        chooser = await state.page.wait_for_event("filechooser", timeout=arm_ms)
        # Recorded first: the response that sees the page react must carry it.
        record = DialogEntry(
            type="filechooser",
            action="files set",
            files=[Path(f).name for f in files],
            armed=True,
            time=time.time(),
        )
        state.unreported_dialogs.append(record)
        try:
            await chooser.set_files(files)
        except PlaywrightError as exc:
            record.action = f"failed: {str(exc).splitlines()[0]}"
    except PlaywrightError:
        pass  # expired, or the tab closed: nothing to set
    finally:
        if state.chooser_arm is me:
            state.chooser_arm = None


def arm_dialog(state: PageState, opts: o.DialogOptions) -> dict[str, Any]:
    arm_ms = o.arm_timeout(opts.timeout_ms)
    state.dialog_arm = DialogArm(opts.accept, opts.prompt_text, time.monotonic() + arm_ms / 1000)
    return {
        "ok": True,
        "targetId": state.target_id,
        "armed": True,
        "accept": opts.accept,
        "expiresInMs": arm_ms,
        "hint": "now do the action that opens the dialog; the next response reports it",
    }
