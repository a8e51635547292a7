"""What is risky, judged before the action runs, over the API and the CLI.

A real service and Chromium; the person is ``Person``, put where the tray app puts its
window (the asker at the door's approvals: tests/gui/test_approval.py clicks the real
window). The server of the test site records what reached it, so "nothing happened" is
checked where it would have happened.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import httpx

from browserdeck.config import Config
from tests.approval.conftest import tray
from tests.approval.site import Site
from tests.support.asyncsite import ref_in
from tests.support.service import running_service


def _risky(cfg: Config) -> None:
    cfg.profiles["agent"].approval = "risky"


async def _open(client: httpx.AsyncClient, url: str) -> tuple[str, str]:
    target = (await client.post("/tabs/open", json={"url": url})).json()["targetId"]
    return str(target), await _snap(client, target)


async def _snap(client: httpx.AsyncClient, target: str) -> str:
    return str((await client.get("/snapshot", params={"targetId": target})).json()["snapshot"])


async def _act(client: httpx.AsyncClient, target: str, **body: Any) -> httpx.Response:
    return await client.post("/act", json={"targetId": target, **body})


async def test_a_login_form_submitted_by_enter_is_asked(site: Site) -> None:
    async with running_service(tweak=_risky) as (service, client):
        person = tray(service, "deny", "once")
        target, snap = await _open(client, site.page("/login.html"))
        password = ref_in(snap, 'textbox "Password"')
        # Typing is no action on the page's behalf: not asked.
        typed = await _act(client, target, kind="type", ref=password, text="s3cret")
        assert typed.status_code == 200 and person.questions == []
        # Enter in the password field submits the form: asked, denied, nothing sent.
        refused = await _act(client, target, kind="press", key="Enter", ref=password)
        assert refused.status_code == 403, refused.text
        asked = person.questions[-1]
        assert asked.action == 'press Enter in textbox "Password"'
        assert asked.why == "it submits a form holding a password field"
        assert site.done == []
        # type … submit: the same question; allowed, the login reaches the server.
        done = await _act(client, target, kind="type", ref=password, text="s3cret", submit=True)
        assert done.status_code == 200, done.text
        assert person.questions[-1].action == 'type into textbox "Password" and press Enter'
        assert site.done == ["login ada"]


async def test_enter_on_the_focused_field_without_a_ref_is_asked(site: Site) -> None:
    async with running_service(tweak=_risky) as (service, client):
        person = tray(service, "deny")
        target, snap = await _open(client, site.page("/login.html"))
        await _act(client, target, kind="click", ref=ref_in(snap, 'textbox "Password"'))
        assert person.questions == []  # a click into a field is no risk
        refused = await _act(client, target, kind="press", key="Enter")
        assert refused.status_code == 403, refused.text
        assert "submits a form holding a password field" in refused.json()["error"]["message"]
        assert site.done == []


async def test_a_delete_button_inside_a_table_row_is_asked(site: Site) -> None:
    async with running_service(tweak=_risky) as (service, client):
        person = tray(service, "deny", "once")
        target, snap = await _open(client, site.page("/table.html"))
        row = ref_in(snap, 'button "Delete"')
        refused = await _act(client, target, kind="click", ref=row)
        assert refused.status_code == 403
        assert person.questions[-1].why == 'its name says "delete"'
        assert "deleted" not in await _snap(client, target) and site.done == []
        done = await _act(client, target, kind="click", ref=row)
        assert done.status_code == 200, done.text
        await asyncio.sleep(0.3)
        assert site.done == ["delete 1"]


async def test_an_upload_is_asked(site: Site, tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "report.txt").write_text("quarterly numbers")

    def tweak(cfg: Config) -> None:
        _risky(cfg)
        cfg.upload_roots = [str(folder)]

    async with running_service(tweak=tweak) as (service, client):
        person = tray(service, "deny", "once")
        target, snap = await _open(client, site.page("/upload.html"))
        field = ref_in(snap, 'button "Document"')
        body = {"paths": [str(folder / "report.txt")], "inputRef": field, "targetId": target}
        refused = await client.post("/hooks/file-chooser", json=body)
        assert refused.status_code == 403, refused.text
        assert person.questions[-1].action == "upload report.txt"
        assert "nothing sent" in await _snap(client, target) and site.done == []
        done = await client.post("/hooks/file-chooser", json=body)
        assert done.status_code == 200, done.text
        assert site.done and site.done[0].startswith("upload ")


async def test_a_download_link_is_asked_and_a_plain_link_is_not(site: Site) -> None:
    async with running_service(tweak=_risky) as (service, client):
        person = tray(service, "deny")
        target, snap = await _open(client, site.page("/shop.html"))
        refused = await _act(client, target, kind="click", ref=ref_in(snap, 'link "Receipt"'))
        assert refused.status_code == 403
        assert "downloads a file" in person.questions[-1].why
        moved = await _act(client, target, kind="click", ref=ref_in(snap, 'link "Other page"'))
        assert moved.status_code == 200 and len(person.questions) == 1


async def test_a_scripts_click_is_held_and_asked_and_reads_are_free(site: Site) -> None:
    async with running_service(tweak=_risky) as (service, client):
        person = tray(service, "deny", "once")
        target, _ = await _open(client, site.page("/shop.html"))
        read = await _act(client, target, kind="evaluate", fn="() => document.title")
        assert read.json()["result"] == "Checkout" and person.questions == []
        pay = "() => { document.querySelector('#pay').click(); return 'clicked'; }"
        denied = await _act(client, target, kind="evaluate", fn=pay)
        assert denied.status_code == 200, denied.text
        assert "it did not happen" in denied.json()["note"]
        assert person.questions[-1].action == 'click button "Pay $49.00" (by a script)'
        await asyncio.sleep(0.5)
        assert site.done == []  # not paid unasked
        # A wait's function is a script too.
        person.answers = ["deny"]
        waited = await _act(
            client,
            target,
            kind="wait",
            fn="() => { document.querySelector('#pay').click(); return true; }",
        )
        assert waited.status_code == 200 and "it did not happen" in waited.json()["note"]
        # A form submitted without a click, bypassing the submit event: held too.
        submit = "() => { document.querySelector('#order').submit(); return 1; }"
        person.answers = ["deny"]
        held = await _act(client, target, kind="evaluate", fn=submit)
        assert "submit the form" in person.questions[-1].action, person.questions[-1]
        assert "it did not happen" in held.json()["note"]
        await asyncio.sleep(0.5)
        assert site.done == []
        # Allowed: the very click goes on, and the order is placed.
        person.answers = ["once"]
        allowed = await _act(client, target, kind="evaluate", fn=pay)
        assert "it went ahead" in allowed.json()["note"]
        for _ in range(50):
            if site.done:
                break
            await asyncio.sleep(0.1)
        assert site.done == ["order"]


async def test_a_scripts_later_click_is_still_held(site: Site) -> None:
    """The guard stays in the document after the call: a delayed click is asked too."""
    async with running_service(tweak=_risky) as (service, client):
        person = tray(service, "deny")
        target, _ = await _open(client, site.page("/shop.html"))
        later = "() => { setTimeout(() => document.querySelector('#pay').click(), 300); return 1; }"
        assert (await _act(client, target, kind="evaluate", fn=later)).status_code == 200
        await asyncio.wait_for(person.asked.wait(), 10)
        await asyncio.sleep(0.5)
        assert site.done == []
        # The engine's own actions still pass it (asked before they run).
        snap = await _snap(client, target)
        assert (
            await _act(client, target, kind="click", ref=ref_in(snap, 'button "Next"'))
        ).status_code == 200
        assert "step 2" in await _snap(client, target)


async def test_all_asks_every_change_and_nothing_risky_costs_no_question(site: Site) -> None:
    async with running_service(tweak=_risky) as (service, client):
        person = tray(service, "once", "once", "once")
        target, snap = await _open(client, site.page("/safe.html"))
        assert (
            await _act(client, target, kind="click", ref=ref_in(snap, 'button "Count"'))
        ).status_code == 200
        assert person.questions == []  # risky: nothing risky here
        service.config.profiles["agent"].approval = "all"
        assert (
            await _act(client, target, kind="click", ref=ref_in(snap, 'button "Count"'))
        ).status_code == 200
        assert person.questions[-1].why.startswith('approval is "all"')
        await client.post("/navigate", json={"targetId": target, "url": site.page("/safe.html?x")})
        assert person.questions[-1].action.startswith("go to ")
        await _act(client, target, kind="wait", timeMs=10)  # a wait changes nothing
        assert len(person.questions) == 2


async def test_the_cli_is_refused_with_words_that_say_how_to_allow(site: Site) -> None:
    async with running_service(tweak=_risky) as (_service, client):
        target, snap = await _open(client, site.page("/shop.html"))
        pay = ref_in(snap, 'button "Pay $49.00"')
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "browserdeck",
            "click",
            pay,
            "--target",
            target,
            env=dict(os.environ),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(), 60)
        said = (out + err).decode()
        assert proc.returncode != 0, said
        assert "nobody can be asked" in said and "start the browserdeck tray app" in said
        assert site.done == []


async def test_no_api_route_or_tool_answers_a_question(site: Site) -> None:
    """The only ways to say yes are the tray's window and the MCP client's user."""
    async with running_service(tweak=_risky) as (_service, client):
        spec = (await client.get("/openapi.json")).json()
        routes = " ".join(spec["paths"])
        assert "approv" not in routes.lower() and "confirm" not in routes.lower()
        from browserdeck.mcpserver.tools import REGISTRY

        assert not [t for t in REGISTRY if "approv" in t or "confirm" in t or "allow" in t]
        assert json.dumps(spec).count("allowOnce") == 0


async def test_an_agent_cannot_make_a_profile_that_asks_less_unasked(site: Site) -> None:
    """Deleted and made again with approval off, the user's Chrome would be the agent's to
    pay with: a profile created with less asking than it would get is asked about."""
    async with running_service() as (service, client):
        mine = {"name": "mine", "driver": "extension", "approval": "off"}
        refused = await client.post("/profiles/create", json=mine)
        assert refused.status_code == 403, refused.text
        error = refused.json()["error"]
        assert error["code"] == "approval_unavailable"
        assert 'approval "off"' in error["message"] and "No profile was created" in error["message"]
        assert 'without "approval"' in error["hint"]
        assert "mine" not in service.config.profiles

        person = tray(service, "deny", "once")
        denied = await client.post("/profiles/create", json=mine)
        assert denied.json()["error"]["code"] == "denied_by_user", denied.text
        assert 'less than the "risky"' in person.questions[0].why
        allowed = await client.post("/profiles/create", json=mine)
        assert allowed.status_code == 200, allowed.text
        assert service.config.profiles["mine"].approval == "off"

        # As strict as it would be anyway, or stricter: not asked.
        for body in (
            {"name": "fresh", "approval": "off"},
            {"name": "strict", "driver": "extension", "approval": "all"},
        ):
            made = await client.post("/profiles/create", json=body)
            assert made.status_code == 200, made.text
        assert len(person.questions) == 2


async def test_a_hung_tab_says_so_at_once_and_asks_nobody(site: Site) -> None:
    """No action can run on a hung tab: its own error answers, not a question."""
    async with running_service(tweak=_risky) as (service, client):
        person = tray(service, "once")
        target, snap = await _open(client, site.page("/shop.html"))
        pay = ref_in(snap, 'button "Pay $49.00"')
        # chrome://hang hangs the renderer in the browser's own code (engine/hung.py).
        hang = await client.post("/navigate", json={"url": "chrome://hang", "targetId": target})
        assert hang.status_code == 409, hang.text
        refused = await _act(client, target, kind="click", ref=pay)
        assert refused.status_code == 409, refused.text
        assert refused.json()["error"]["code"] == "tab_hung"
        assert person.questions == [] and site.done == []


async def test_a_name_cannot_hide_its_word_or_speak_for_browserdeck(site: Site) -> None:
    """ "P<zero-width space>ay" is a pay button to the person; a quote in a name stays in
    the name (an escape), and a line separator does not start a line of its own."""
    async with running_service(tweak=_risky) as (service, client):
        person = tray(service, "deny")
        target, snap = await _open(client, site.page("/sly.html"))
        sly = await _act(client, target, kind="click", ref=ref_in(snap, "was allowed by"))
        assert sly.status_code == 403, sly.text
        assert len(person.questions) == 1 and person.questions[0].why == 'its name says "pay"'
        action = person.questions[0].action
        assert action.startswith('click button "P') and action.count('"') == 2, action
        assert "\\u0022 was allowed" in action and "\u2028" not in action
        assert "\\u0022 was allowed" in sly.json()["error"]["message"]
        # The in-page catch reads the name the same way.
        said = await _act(
            client, target, kind="evaluate", fn="() => document.querySelector('#sly').click()"
        )
        assert said.status_code == 200 and len(person.questions) == 2, said.text
        assert "it did not happen" in said.json()["note"]
        await asyncio.sleep(0.5)
        assert site.done == []


async def test_a_script_reaches_no_other_tab_unasked(site: Site) -> None:
    """A popup the script opens, and the page that opened the script's tab: a click the
    script makes there is held as in its own tab. (The popup is guarded as it appears, a
    few ms to tens of ms after its page began to load: a click in it before that is not
    held, which docs/approval.md says.)"""
    async with running_service(tweak=_risky) as (service, client):
        person = tray(service, "deny", "deny")
        target, _ = await _open(client, site.page("/shop.html"))
        popup = (
            "async () => { const w = window.open('/shop.html'); await new Promise((ok) => {"
            " const t = setInterval(() => { if (w.document.querySelector('#pay')) {"
            " clearInterval(t); setTimeout(ok, 1000); } }, 5); }); w.document.querySelector('#pay').click();"
            " return 1; }"
        )
        said = await _act(client, target, kind="evaluate", fn=popup)
        assert said.status_code == 200 and "it did not happen" in said.json()["note"], said.text
        await asyncio.sleep(0.5)
        assert site.done == []

        # A tab opened by a click (no script ran on its opener before).
        desk, snap = await _open(client, site.page("/help-desk.html"))
        await _act(client, desk, kind="click", ref=ref_in(snap, 'button "Open help"'))
        for _ in range(50):
            tabs = (await client.get("/tabs")).json()["tabs"]
            helps = [t["targetId"] for t in tabs if t["url"].endswith("/safe.html")]
            if helps:
                break
            await asyncio.sleep(0.1)
        reach = "() => { window.opener.document.querySelector('#pay').click(); return 1; }"
        said = await _act(client, helps[0], kind="evaluate", fn=reach)
        assert said.status_code == 200 and "it did not happen" in said.json()["note"], said.text
        await asyncio.sleep(0.5)
        assert site.done == [] and len(person.questions) == 2
