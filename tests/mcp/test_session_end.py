"""Agent sessions clean up after themselves (sessions.py): what a session opened ends
with it, whichever way it ends; what it reused is given back; what the user kept stays.

Real parts throughout: the official MCP SDK client, over streamable HTTP and through
the real `browserdeck mcp` bridge (a process of its own), the real CLI, a real
service in this process (its events say when a session's clean-up is done) and real
Chromium.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from browserdeck import config
from browserdeck.deck import Deck
from browserdeck.mcpserver.claims import read_claims
from browserdeck.service import Service
from browserdeck.session import EndReason, Session
from mcp import Client, MCPError
from tests.mcp.harness import call, call_error, http_client, mcp_config, stdio_params
from tests.support.service import running_service
from tests.support.sessions import SessionEnds


def opened_id(answer: str) -> str:
    found = re.search(r"opened tab (\w+)", answer)
    assert found is not None, answer
    return found.group(1)


async def open_ids(service: Service, profile: str = "agent") -> set[str]:
    return {t.target_id for t in await service.profile(profile).list_tabs()}


def full_id(ids: set[str], prefix: str) -> str:
    found = [t for t in ids if t.startswith(prefix)]
    assert len(found) == 1, (prefix, ids)
    return found[0]


def bridge_pid(service: Service) -> int:
    """The pid of the one `browserdeck mcp` bridge the service knows a session of."""
    pids = {s.pid for s in service.sessions.live.values() if s.pid is not None}
    assert len(pids) == 1, pids
    return pids.pop()


@pytest.mark.parametrize("ending", ["delete", "bridge_exit", "bridge_killed"])
async def test_a_session_that_ends_closes_the_tabs_it_opened(
    bd_home: Path, chromium_path: str, site: str, ending: str
) -> None:
    async with running_service(mcp_config(bd_home)) as (service, _):
        ends = SessionEnds(service)
        users = (await service.profile("agent").open_tab(f"{site}/form.html")).target_id
        if ending == "delete":
            opener = http_client(f"{service.url}/mcp", service.api_token)
        else:
            opener = Client(stdio_params(bd_home, chromium_path), read_timeout_seconds=90)
        async with opener as client:
            await call(client, "browser_navigate", {"url": f"{site}/shop.html"})
            second = opened_id(await call(client, "browser_tabs", {"action": "new"}))
            third = opened_id(await call(client, "browser_tabs", {"action": "new"}))
            before = await open_ids(service)
            # The browser's first tab (blank, nobody's: taken by the navigate) and two new.
            mine = before - {users}
            assert len(mine) == 3 and {full_id(before, second), full_id(before, third)} <= mine
            if ending == "bridge_killed":
                # Killed: no DELETE on the way out; the kernel tells the service.
                os.kill(bridge_pid(service), signal.SIGKILL)
                (ended,) = await ends.wait()
                assert ended.reason.code == "process_exited", ended
        if ending != "bridge_killed":
            (ended,) = await ends.wait()
            assert ended.reason.code == "client_ended", ended
        assert ended.closed_tabs == 3, ended
        assert await open_ids(service) == {users}, f"the session's tabs are still open ({ending})"
        assert read_claims("agent") == []
        assert not service.sessions.live


async def test_a_browsers_last_tab_is_never_closed(bd_home: Path, site: str) -> None:
    """A headed Chromium quits with its last window: a blank tab is left for the next
    agent, one of the session's if it shows nothing, else a new one."""
    async with running_service(mcp_config(bd_home)) as (service, _):
        ends = SessionEnds(service)
        for left_blank in (True, False):
            async with http_client(f"{service.url}/mcp", service.api_token) as agent:
                await call(agent, "browser_navigate", {"url": f"{site}/shop.html"})
                url = "about:blank" if left_blank else f"{site}/form.html"
                spare = opened_id(await call(agent, "browser_tabs", {"action": "new", "url": url}))
                mine = await open_ids(service)
            await ends.wait(count=2 if not left_blank else 1)
            tabs = await service.profile("agent").list_tabs()
            assert [t.url for t in tabs] == ["about:blank"], tabs
            assert (tabs[0].target_id.startswith(spare)) is left_blank, (tabs, spare)
            assert (tabs[0].target_id in mine) is left_blank


async def test_a_kept_tab_outlives_its_session_and_the_rest_close(
    bd_home: Path, site: str
) -> None:
    async with running_service(mcp_config(bd_home)) as (service, api):
        ends = SessionEnds(service)
        async with http_client(f"{service.url}/mcp", service.api_token) as agent:
            keep = opened_id(await call(agent, "browser_tabs", {"action": "new"}))
            drop = opened_id(await call(agent, "browser_tabs", {"action": "new"}))
            # The user marks one to keep (the panel's context menu calls the same door).
            r = await api.post("/tabs/keep", json={"targetId": keep})
            assert r.status_code == 200 and r.json()["kept"] is True, r.text
            kept_id = r.json()["targetId"]
            assert service.sessions.kept("agent") == {kept_id}
        (ended,) = await ends.wait()
        assert (ended.closed_tabs, ended.kept_tabs) == (1, 1), ended
        left = await open_ids(service)
        assert kept_id in left, "the kept tab was closed with its session"
        assert not any(t.startswith(drop) for t in left)
        # Unmarked, and a tab that is not there, are said plainly.
        r = await api.post("/tabs/keep", json={"targetId": kept_id, "keep": False})
        assert r.status_code == 200 and r.json()["kept"] is False
        r = await api.post("/tabs/keep", json={"targetId": "NOSUCHTAB"})
        assert r.status_code == 404 and r.json()["error"]["code"] == "tab_not_found", r.text
        for bad in ({"targetId": ""}, {"targetId": kept_id, "keep": 0}):
            r = await api.post("/tabs/keep", json=bad)
            assert r.status_code == 400, (bad, r.text)


async def test_a_reused_tab_is_given_back_open_and_unlabelled(bd_home: Path, site: str) -> None:
    async with running_service(mcp_config(bd_home)) as (service, _):
        ends = SessionEnds(service)
        deck = Deck(service)  # the door the panel reads its Agent column from
        # The user's own tab (opened in the panel's way: no agent opened it).
        users = (await service.profile("agent").open_tab(f"{site}/form.html")).target_id
        async with http_client(f"{service.url}/mcp", service.api_token) as agent:
            picked = await call(agent, "browser_tabs", {"action": "select", "targetId": users})
            assert "current tab is now" in picked, picked
            await call(agent, "browser_snapshot")
            label = deck.tab_holders("agent").get(users, "")
            assert re.search(r"\(http, pid \d+\)", label), deck.tab_holders("agent")
        (ended,) = await ends.wait()
        assert ended.given_back == 1 and ended.closed_tabs == 0, ended
        assert users in await open_ids(service), "a tab the agent only reused was closed"
        assert users not in deck.tab_holders("agent"), "its agent label stayed"
        assert read_claims("agent") == []


async def test_an_idle_named_cli_client_is_ended_and_told_once(
    bd_home: Path, site: str
) -> None:
    async with running_service(mcp_config(bd_home)) as (service, _):
        ends = SessionEnds(service)
        env = {**os.environ, "BROWSERDECK_HOME": str(bd_home), "BROWSERDECK_CLIENT": "bob"}

        def cli(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [sys.executable, "-m", "browserdeck", *args],
                env=env, capture_output=True, text=True, timeout=60,
            )

        done = await asyncio.to_thread(cli, "open", f"{site}/shop.html")
        assert done.returncode == 0, done.stderr
        bobs = set(service.sessions.live["cli:bob"].opened["agent"])
        assert len(bobs) == 1 and bobs <= await open_ids(service)
        # The clock cannot be waited out here: bob's last call is made 6 minutes old,
        # then the user lowers agentIdleMinutes to 5, which the service applies at once.
        service.sessions.live["cli:bob"].last_used -= 6 * 60
        await service.apply_config(config.updated(service.config, _idle_five))
        (ended,) = await ends.wait()
        assert ended.session == "cli:bob" and ended.reason.code == "idle", ended
        assert not bobs & await open_ids(service), "the idle client's tab is still open"
        # Its next call is told why, once; the one after goes on in a new session.
        told = await asyncio.to_thread(cli, "tabs")
        assert told.returncode != 0
        assert "was ended: it made no call for 5 minutes (the agentIdleMinutes setting)" in (
            told.stderr
        ), told.stderr
        again = await asyncio.to_thread(cli, "tabs")
        assert again.returncode == 0, again.stderr


def _idle_five(c: config.Config) -> None:
    c.agent_idle_minutes = 5


async def test_max_tabs_counts_live_work_and_names_who_holds_the_rest(
    bd_home: Path, site: str
) -> None:
    cfg = mcp_config(bd_home, max_tabs=4)
    async with running_service(cfg) as (service, api):
        ends = SessionEnds(service)
        named = {"X-Browserdeck-Session": "nightly-report", "X-Browserdeck-Client": "reporter"}
        async with http_client(f"{service.url}/mcp", service.api_token) as agent:
            await call(agent, "browser_tabs", {"action": "new"})
            await call(agent, "browser_tabs", {"action": "new"})
            r = await api.post("/tabs/open", json={"url": "about:blank"}, headers=named)
            assert r.status_code == 200, r.text
            listed = await open_ids(service)
            assert len(listed) == 4, listed  # the browser's first tab, and three
            refused = await call_error(agent, "browser_tabs", {"action": "new"})
            assert "already has 4 tabs open; the limit is 4 (maxTabs)" in refused, refused
            assert re.search(r"\(http, pid \d+\) holds 2", refused), refused
            assert "reporter (nightly-report) holds 1" in refused, refused
            assert "1 is held by no agent session" in refused, refused
            # The named client goes quiet past its limit: its tab is not live work, so the
            # next open ends it (its tab closes) rather than being refused.
            service.sessions.live["nightly-report"].last_used -= 31 * 60
            await call(agent, "browser_tabs", {"action": "new"})
            (ended,) = await ends.wait(lambda e: e.session == "nightly-report")
            assert ended.reason.code == "idle" and ended.closed_tabs == 1


async def test_stop_all_agents_tells_each_agent_the_user_stopped_it(
    bd_home: Path, chromium_path: str, site: str
) -> None:
    async with running_service(mcp_config(bd_home)) as (service, _):
        ends = SessionEnds(service)
        users = (await service.profile("agent").open_tab(f"{site}/form.html")).target_id
        async with (
            http_client(f"{service.url}/mcp", service.api_token) as over_http,
            Client(stdio_params(bd_home, chromium_path), read_timeout_seconds=90) as bridged,
        ):
            opened = opened_id(await call(over_http, "browser_tabs", {"action": "new"}))
            await call(bridged, "browser_tabs", {"action": "select", "targetId": users})
            await call(bridged, "browser_snapshot")
            done = await service.stop_all_agents()
            assert done["sessions"] == 2 and done["closedTabs"] >= 1, done
            assert done["givenBackTabs"] == 1, done
            for client in (over_http, bridged):
                with pytest.raises(MCPError) as stopped:
                    await asyncio.wait_for(client.call_tool("browser_snapshot", {}), 10)
                assert "stopped by you (the user)" in str(stopped.value), stopped.value
        left = await open_ids(service)
        assert users in left and not any(t.startswith(opened) for t in left)
        assert {e.reason.code for e in ends.ended} >= {"stopped_by_user"}


async def test_twenty_sessions_in_a_row_leave_no_tabs_behind(
    bd_home: Path, chromium_path: str, site: str
) -> None:
    """Each through the real bridge, each opening a tab of its own and going away the way
    clients do; maxTabs is 5, so a tab left behind by each would be refused by the sixth."""
    async with running_service(mcp_config(bd_home, max_tabs=5)) as (service, _):
        ends = SessionEnds(service)
        params = stdio_params(bd_home, chromium_path)
        for n in range(20):
            async with Client(params, read_timeout_seconds=90) as client:
                await call(client, "browser_navigate", {"url": f"{site}/shop.html?run={n}"})
                await call(client, "browser_tabs", {"action": "new"})
            await ends.wait(count=n + 1)
        assert len(await open_ids(service)) <= 5
        assert not service.sessions.live


async def test_a_stateless_client_naming_its_session_is_told_once_then_begins_anew(
    bd_home: Path,
) -> None:
    """The 2026 protocol has no session to end: a client that names its own with
    X-Browserdeck-Session gets its next call refused once with the reason."""
    async with running_service(mcp_config(bd_home)) as (service, _):
        named = {"X-Browserdeck-Session": "agent-42"}
        async with http_client(
            f"{service.url}/mcp", service.api_token, mode="2026-07-28", headers=named
        ) as agent:
            opened = opened_id(await call(agent, "browser_tabs", {"action": "new"}))
            done = await service.stop_all_agents()
            assert done["sessions"] == 1 and done["closedTabs"] == 1, done
            told = await call_error(agent, "browser_tabs", {"action": "list"})
            assert "was ended: stopped by you (the user) with Stop all agents" in told, told
            listing = await call(agent, "browser_tabs", {"action": "list"})
            assert opened not in listing


async def test_a_feature_registers_its_own_clean_up_and_a_failing_one_stops_nothing(
    bd_home: Path,
) -> None:
    """The hook point later features (routes, recordings, approvals) use."""
    async with running_service(mcp_config(bd_home)) as (service, _):
        ends = SessionEnds(service)
        seen: list[tuple[str, str, set[str]]] = []

        async def recordings(session: Session, reason: EndReason) -> None:
            seen.append((session.id, reason.code, set(session.opened.get("agent", set()))))

        def broken(session: Session, reason: EndReason) -> None:
            raise RuntimeError("a feature's clean-up that fails")

        service.sessions.on_end("broken feature", broken)
        unregister = service.sessions.on_end("recordings", recordings)
        async with http_client(f"{service.url}/mcp", service.api_token) as agent:
            opened = opened_id(await call(agent, "browser_tabs", {"action": "new"}))
        (ended,) = await ends.wait()
        assert ended.closed_tabs == 1, "a failing hook kept the tabs from closing"
        ((session_id, code, tabs),) = seen
        assert session_id == ended.session and code == "client_ended"
        assert any(t.startswith(opened) for t in tabs), "the hook ran after the tabs closed"
        unregister()
        async with http_client(f"{service.url}/mcp", service.api_token) as agent:
            await call(agent, "browser_tabs", {"action": "new"})
        await ends.wait(count=2)
        assert len(seen) == 1, "an unregistered hook still ran"
