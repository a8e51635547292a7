"""Approval over MCP: the official SDK client, whose elicitation callback is the person.

A shop served on loopback: "Next" is not asked, "Pay $49.00" is; the client's user
declines (the order is not placed) or accepts (it is); the agent's call waits meanwhile
and hears progress; a client that cannot ask, with no tray, is refused at once in words
that say how to allow it; a script's click on "Pay" is asked too; the stdio bridge
carries the question; two agents asking at once are each asked in their own client.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
from mcp.client.streamable_http import streamable_http_client

from browserdeck.master import build_service
from browserdeck.service import Service
from mcp import Client
from tests.approval.site import Site
from tests.mcp.harness import call, call_error, mcp_config, ref_of, stdio_params, text


class ClientUser:
    """The MCP client's user: answers each elicitation as told, and keeps what it saw."""

    def __init__(self, *actions: str) -> None:
        self.actions = list(actions)
        self.messages: list[str] = []
        self.asked = asyncio.Event()

    async def __call__(self, context: Any, params: Any) -> types.ElicitResult:
        self.messages.append(params.message)
        self.asked.set()
        action = self.actions.pop(0) if self.actions else "decline"
        if action == "wait":
            await asyncio.sleep(3600)
        return types.ElicitResult(action=action)  # type: ignore[arg-type]


@asynccontextmanager
async def service_with(
    home: Path, approval: str = "risky", timeout: int = 60, **settings: object
) -> AsyncIterator[Service]:
    mcp_config(home, approval=approval, approval_timeout_seconds=timeout, **settings)
    service = build_service(force_headless=True)
    await service.start()
    try:
        yield service
    finally:
        await service.stop()


@asynccontextmanager
async def agent(
    service: Service,
    user: ClientUser | None,
    name: str = "agent-a",
    tools: str = "core",
    *,
    mode: str = "legacy",
    session: str | None = None,
) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {service.api_token}"}
    if session is not None:
        headers["X-Browserdeck-Session"] = session
    async with (
        httpx2.AsyncClient(headers=headers, timeout=90) as http,
        Client(
            streamable_http_client(f"{service.url}/mcp?tools={tools}", http_client=http),
            mode=mode,
            read_timeout_seconds=90,
            elicitation_callback=user,
            client_info=types.Implementation(name=name, version="1"),
        ) as client,
    ):
        yield client


async def _shop(client: Client, site: Site) -> str:
    await call(client, "browser_navigate", {"url": site.page("/shop.html")})
    return await call(client, "browser_snapshot")


async def _held_once(client: Client, user: ClientUser, tool: str, args: dict[str, Any]) -> None:
    """The script's click was held, asked (the first question) and denied."""
    said = await call(client, tool, args)
    assert len(user.messages) == 1 and "(by a script)" in user.messages[0]
    assert "it did not happen" in said


async def test_next_is_not_asked_pay_is_and_the_users_answer_decides(
    bd_home: Path, site: Site
) -> None:
    async with service_with(bd_home) as service:
        user = ClientUser("decline", "accept")
        async with agent(service, user) as client:
            snap = await _shop(client, site)
            await call(client, "browser_click", {"ref": ref_of(snap, "button", "Next")})
            assert user.messages == []  # "Next" (type=button) is not risky for its form
            pay = ref_of(snap, "button", "Pay $49.00")
            refused = await call_error(client, "browser_click", {"ref": pay})
            assert len(user.messages) == 1
            assert 'click button "Pay $49.00" on 127.0.0.1' in user.messages[0]
            assert "$49.00" in user.messages[0] and 'its name says "pay"' in user.messages[0]
            assert "denied" in refused and "Nothing was done on the page" in refused
            assert site.done == []  # the order was not placed
            done = await call(client, "browser_click", {"ref": pay})
            assert site.done == ["order"]
            assert "approval: allowed once" in done


async def test_the_call_waits_and_hears_progress(bd_home: Path, site: Site) -> None:
    async with service_with(bd_home) as service:
        user = ClientUser("accept")
        progress: list[str] = []

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            progress.append(message or "")

        async def slow_user(context: Any, params: Any) -> types.ElicitResult:
            await asyncio.sleep(6)  # the person reads before answering
            return await user(context, params)

        async with agent(service, slow_user) as client:  # type: ignore[arg-type]
            snap = await _shop(client, site)
            pay = ref_of(snap, "button", "Pay $49.00")
            result = await client.call_tool(
                "browser_click", {"ref": pay}, progress_callback=on_progress
            )
            assert not result.is_error, text(result)
        assert progress and "waiting for the user's approval" in progress[0], progress
        assert site.done == ["order"]


async def test_no_channel_is_an_immediate_clear_refusal(bd_home: Path, site: Site) -> None:
    async with service_with(bd_home) as service, agent(service, None) as client:
        snap = await _shop(client, site)
        started = time.monotonic()
        refused = await call_error(
            client, "browser_click", {"ref": ref_of(snap, "button", "Pay $49.00")}
        )
        assert time.monotonic() - started < 5
        assert "nobody can be asked" in refused
        assert "start the browserdeck tray app" in refused and '"approval" to "off"' in refused
        assert site.done == []


async def test_no_answer_in_time_is_a_denial(bd_home: Path, site: Site) -> None:
    async with service_with(bd_home, timeout=5) as service:
        user = ClientUser("wait")
        async with agent(service, user) as client:
            snap = await _shop(client, site)
            refused = await call_error(
                client, "browser_click", {"ref": ref_of(snap, "button", "Pay $49.00")}
            )
        assert "did not answer within 5 s" in refused
        assert site.done == []


async def test_a_scripts_click_on_pay_is_asked(bd_home: Path, site: Site) -> None:
    async with service_with(bd_home) as service:
        user = ClientUser("decline")
        async with agent(service, user) as client:
            await _shop(client, site)
            await _held_once(
                client,
                user,
                "browser_evaluate",
                {"function": "() => { document.querySelector('#pay').click(); return 'clicked'; }"},
            )
            await asyncio.sleep(0.5)
            assert site.done == []  # not paid unasked, nor after the denial
            title = await call(client, "browser_evaluate", {"function": "() => document.title"})
            assert "Checkout" in title  # reads are free


async def test_two_agents_asking_at_once_are_each_asked(bd_home: Path, site: Site) -> None:
    async with service_with(bd_home) as service:
        first, second = ClientUser("decline"), ClientUser("accept")
        async with agent(service, first, "agent-a") as a, agent(service, second, "agent-b") as b:
            pay_a = ref_of(await _shop(a, site), "button", "Pay $49.00")
            pay_b = ref_of(await _shop(b, site), "button", "Pay $49.00")
            denied, allowed = await asyncio.gather(
                a.call_tool("browser_click", {"ref": pay_a}),
                b.call_tool("browser_click", {"ref": pay_b}),
            )
        assert denied.is_error and not allowed.is_error, (text(denied), text(allowed))
        assert "agent-a" in first.messages[0] and "agent-b" in second.messages[0]
        assert site.done == ["order"]


async def test_the_stdio_bridge_carries_the_question(
    bd_home: Path, site: Site, chromium_path: str
) -> None:
    mcp_config(bd_home, approval="risky")
    user = ClientUser("decline", "accept")
    async with Client(
        stdio_params(bd_home, chromium_path), read_timeout_seconds=90, elicitation_callback=user
    ) as client:
        snap = await _shop(client, site)
        pay = ref_of(snap, "button", "Pay $49.00")
        refused = await call_error(client, "browser_click", {"ref": pay})
        assert "denied" in refused and site.done == []
        await call(client, "browser_click", {"ref": pay})
        assert site.done == ["order"] and len(user.messages) == 2


async def test_run_code_clicking_pay_is_asked(bd_home: Path, site: Site) -> None:
    async with service_with(bd_home, mcp_run_code=True) as service:
        user = ClientUser("decline")
        async with agent(service, user, tools="all") as client:
            await _shop(client, site)
            await _held_once(
                client,
                user,
                "browser_run_code",
                {"code": "await page.click('#pay', timeout=3000)\nreturn await page.title()"},
            )
            # The code opens a tab of its own and pays there: held too.
            user.actions = ["decline"]
            said = await call(
                client,
                "browser_run_code",
                {
                    "code": f"p = await context.new_page()\nawait p.goto({site.page('/shop.html')!r})\n"
                    "await p.click('#pay', timeout=3000)\nreturn 'done'"
                },
            )
            assert len(user.messages) == 2, said
            await asyncio.sleep(0.5)
            assert site.done == []


async def test_a_pending_question_and_the_sessions_grants_end_with_the_session(
    bd_home: Path, site: Site
) -> None:
    from browserdeck.door.approval import hub_of
    from tests.approval.conftest import Person

    async with service_with(bd_home) as service:
        hub = hub_of(service.addons)
        assert hub is not None
        person = Person("site", None)  # allows on the site, then never answers again
        hub.set_tray(person)
        async with agent(service, None) as client:
            snap = await _shop(client, site)
            await call(client, "browser_click", {"ref": ref_of(snap, "link", "Receipt")})
            granted = (person.questions[0].agent_key, person.questions[0].origin)
            assert hub.granted(*granted)
        # The session ends as its client leaves (in the background): its grants go with it.
        for _ in range(100):
            if not hub.granted(*granted):
                break
            await asyncio.sleep(0.05)
        assert not hub.granted(*granted)

        async with agent(service, None) as client:
            snap = await _shop(client, site)
            person.asked.clear()
            paying = asyncio.ensure_future(
                client.call_tool("browser_click", {"ref": ref_of(snap, "button", "Pay $49.00")})
            )
            await asyncio.wait_for(person.asked.wait(), 30)
            assert len(hub.pending) == 1
            paying.cancel()
        for _ in range(100):  # the client left: its session's call and question end
            if not hub.pending:
                break
            await asyncio.sleep(0.05)
        assert hub.pending == {}
        assert site.done == []


async def test_the_stateless_protocol_asks_in_a_round_of_its_own(bd_home: Path, site: Site) -> None:
    """2026-07-28: the call answers input_required with the question; the SDK client asks
    its user and calls again with the answer (SEP-2322)."""
    async with service_with(bd_home) as service:
        user = ClientUser("decline", "accept")
        async with agent(service, user, mode="2026-07-28", session="modern-agent") as client:
            snap = await _shop(client, site)
            await call(client, "browser_click", {"ref": ref_of(snap, "button", "Next")})
            assert user.messages == []
            pay = ref_of(snap, "button", "Pay $49.00")
            refused = await call_error(client, "browser_click", {"ref": pay})
            assert len(user.messages) == 1 and 'click button "Pay $49.00"' in user.messages[0]
            assert "the user denied" in refused and site.done == []
            done = await call(client, "browser_click", {"ref": pay})
            assert "allowed once" in done
            assert site.done == ["order"] and len(user.messages) == 2
