"""Logins that last: auth states saved from one profile and loaded into another (issue 36).

Real service, real Chromium, a login site on a local server (tests/support/loginsite.py):
after a login in one managed profile, ``POST /states/save`` keeps its cookies and the
site's localStorage, sessionStorage and IndexedDB (0600, in the data folder); loaded
into a fresh managed profile, the site shows it logged in, with its localStorage and
sessionStorage back and its IndexedDB records (a Date and bytes) as they were. A tab that
holds the database open and ignores ``versionchange`` does not hang the load: it ends
within its bound and says which database was not restored. Into the user's own Chrome
(the extension profile) a load needs the user's yes.
"""

from __future__ import annotations

import asyncio
import re
import stat
from typing import Any

import httpx

from browserdeck import config
from browserdeck.master import build_service
from browserdeck.secrets import totp
from browserdeck.util import paths
from tests.support.loginsite import PASSWORD, SEED, USER, serve_login_site
from tests.support.net import free_port
from tests.support.service import api_client, running_service, service_config

# The whole load is bounded; the test's own limit is well above it and far below a hang.
LOAD_LIMIT = 40.0


def _ref(snapshot: str, role: str, name: str) -> str:
    found = re.search(rf'- {role} "{re.escape(name)}"[^\n]*\[ref=([^\]]+)\]', snapshot)
    assert found, snapshot
    return found[1]


async def _text_of(client: httpx.AsyncClient, profile: str, url: str) -> str:
    """The text of ``url`` opened in a new tab of ``profile``, once loaded."""
    tab = (await client.post("/tabs/open", params={"profile": profile}, json={"url": url})).json()
    params = {"profile": profile, "targetId": tab["targetId"]}
    await client.post("/act", params=params, json={"kind": "wait", "loadState": "load"})
    answer = await client.get("/snapshot", params=params)
    assert answer.status_code == 200, answer.text
    return str(answer.json()["snapshot"])


async def _log_in(client: httpx.AsyncClient, site_url: str) -> None:
    tab = (await client.post("/tabs/open", json={"url": f"{site_url}/login.html"})).json()
    target = {"targetId": tab["targetId"]}
    await client.post("/act", params=target, json={"kind": "wait", "loadState": "load"})
    snap = (await client.get("/snapshot", params=target)).json()["snapshot"]
    fields = [
        {"ref": _ref(snap, "textbox", "Username"), "value": USER},
        {"ref": _ref(snap, "textbox", "Password"), "value": PASSWORD},
        {"ref": _ref(snap, "textbox", "One-time code"), "value": totp.parse(SEED).code()},
    ]
    filled = await client.post("/act", params=target, json={"kind": "fill", "fields": fields})
    assert filled.status_code == 200, filled.text
    clicked = await client.post(
        "/act", params=target, json={"kind": "click", "ref": _ref(snap, "button", "Sign in")}
    )
    assert clicked.status_code == 200, clicked.text
    await client.post("/act", params=target, json={"kind": "wait", "text": f"Welcome {USER}"})


def _fresh_profile(cfg: config.Config) -> config.Config:
    cfg.profiles["fresh"] = config.ProfileConfig("fresh", "managed", "#0066CC", cdp_port=free_port())
    return cfg


async def test_a_state_saved_after_login_lands_logged_in_in_a_fresh_profile() -> None:
    with serve_login_site() as site:
        async with running_service(_fresh_profile(service_config())) as (_service, client):
            await _log_in(client, site.url)
            saved = await client.post("/states/save", json={"name": "site-login"})
            assert saved.status_code == 200, saved.text
            summary = saved.json()
            assert summary["cookies"] >= 1 and summary["problems"] == []
            assert site.url in summary["origins"] and site.url in summary["sessionStorage"]
            assert PASSWORD not in saved.text
            # Kept private, in the data folder (not an output folder an agent reads back).
            path = paths.data_dir() / "auth-states" / "site-login.json"
            assert stat.S_IMODE(path.stat().st_mode) == 0o600
            assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700

            # A fresh profile knows nothing of the site yet.
            before = await _text_of(client, "fresh", f"{site.url}/account.html")
            assert "Please log in" in before and "tab: null" in before, before
            loaded = await client.post(
                "/states/load", params={"profile": "fresh"}, json={"name": "site-login"}
            )
            assert loaded.status_code == 200, loaded.text
            assert loaded.json()["loadedInto"] == "fresh" and loaded.json()["problems"] == []
            after = await _text_of(client, "fresh", f"{site.url}/account.html")
            assert f"Welcome {USER}" in after, after
            assert "prefs: dark" in after and "tab: tab-token-7" in after, after

            listed = (await client.get("/states")).json()["states"]
            assert [s["name"] for s in listed] == ["site-login"]
            gone = await client.delete("/states/site-login")
            assert gone.status_code == 200 and not path.exists()
            missing = await client.post(
                "/states/load", params={"profile": "fresh"}, json={"name": "site-login"}
            )
            assert missing.status_code == 404, missing.text
            assert missing.json()["error"]["code"] == "unknown_auth_state"


async def test_indexeddb_comes_back_and_a_page_holding_it_open_does_not_hang_the_load() -> None:
    cfg = _fresh_profile(service_config())
    cfg.profiles["third"] = config.ProfileConfig("third", "managed", "#00AA00", cdp_port=free_port())
    with serve_login_site() as site:
        async with running_service(cfg) as (_service, client):
            held = await _text_of(client, "agent", f"{site.url}/idb.html?v=2")
            assert "held v2" in held or "opening" in held
            await _text_of(client, "agent", f"{site.url}/idbread.html")  # the records are there
            saved = await client.post("/states/save", json={"name": "idb"})
            assert saved.status_code == 200 and saved.json()["indexedDb"] == [site.url], saved.text

            # No tab of the site in "third": restored in a helper tab, every record as it was.
            loaded = await client.post("/states/load", params={"profile": "third"}, json={"name": "idb"})
            assert loaded.status_code == 200 and loaded.json()["problems"] == [], loaded.text
            read = await _text_of(client, "third", f"{site.url}/idbread.html")
            assert "items: v2 1970 3" in read, read

            # "fresh" holds database "app" open at version 1 and ignores versionchange: the
            # upgrade to version 2 cannot happen. The load says so, and does not hang.
            holder = await _text_of(client, "fresh", f"{site.url}/idb.html?v=1")
            assert "v1" in holder or "opening" in holder
            started = asyncio.get_running_loop().time()
            loaded = await asyncio.wait_for(
                client.post("/states/load", params={"profile": "fresh"}, json={"name": "idb"}),
                LOAD_LIMIT,
            )
            took = asyncio.get_running_loop().time() - started
            assert loaded.status_code == 200, loaded.text
            problems = loaded.json()["problems"]
            assert any('IndexedDB "app"' in p and "holds it open" in p for p in problems), problems
            assert took < LOAD_LIMIT


async def test_loading_into_the_users_own_chrome_needs_their_yes() -> None:
    cfg = service_config()
    assert config.SETTINGS and cfg.profiles["chrome"].driver == "extension"
    async with running_service(cfg) as (_service, client):
        assert (await client.post("/states/save", json={"name": "mine"})).status_code == 200
        # `serve` has no one to ask: refused before anything reaches the browser.
        refused = await client.post("/states/load", params={"profile": "chrome"}, json={"name": "mine"})
        assert refused.status_code == 403, refused.text
        assert refused.json()["error"]["code"] == "needs_user_consent"
        # The CLI's "the user said yes at my terminal" is believed over the Unix socket only.
        forged = await client.post(
            "/states/load",
            params={"profile": "chrome"},
            json={"name": "mine"},
            headers={"X-Browserdeck-Client": "browserdeck-cli", "X-Browserdeck-Confirmed": "state-load"},
        )
        assert forged.status_code == 403, forged.text
        socket = paths.api_socket_path()
        assert socket is not None
        transport = httpx.AsyncHTTPTransport(uds=socket)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as cli:
            asked = await cli.post(
                "/states/load",
                params={"profile": "chrome"},
                json={"name": "mine"},
                headers={"X-Browserdeck-Client": "browserdeck-cli", "X-Browserdeck-Confirmed": "state-load"},
            )
        # Past the consent: now it fails on the absent extension, not on the user's yes.
        assert asked.json()["error"]["code"] != "needs_user_consent", asked.text
        assert asked.status_code != 200


async def test_the_trays_question_decides(bd_home: Any) -> None:
    answers: list[bool] = []
    questions: list[str] = []

    async def ask(question: str) -> bool:
        questions.append(question)
        return answers.pop(0)

    config.save(service_config())
    service = build_service(force_headless=True, ask_user=ask)
    await service.start()
    try:
        async with api_client(service) as client:
            assert (await client.post("/states/save", json={"name": "mine"})).status_code == 200
            answers[:] = [False, True]
            said_no = await client.post("/states/load", params={"profile": "chrome"}, json={"name": "mine"})
            assert said_no.status_code == 403 and "did not allow" in said_no.text, said_no.text
            said_yes = await client.post("/states/load", params={"profile": "chrome"}, json={"name": "mine"})
            assert said_yes.json()["error"]["code"] != "needs_user_consent", said_yes.text
            assert len(questions) == 2 and "'mine'" in questions[0] and "chrome" in questions[0]
            # A managed profile's logins are the agent's own: nobody is asked.
            mine = await client.post("/states/load", params={"profile": "agent"}, json={"name": "mine"})
            assert mine.status_code == 200 and len(questions) == 2, mine.text
    finally:
        await service.stop()
