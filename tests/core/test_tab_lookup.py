"""A call on a tab the engine holds open goes straight to it (issue 14 target 5): no
listing of the browser's tabs first. A tab that is gone is still said at once."""

from __future__ import annotations

from typing import Any

import pytest

from browserdeck.deck import Caller, Deck
from browserdeck.engine import options as o
from browserdeck.errors import BrowserdeckError
from tests.support.service import running_service

PAGE = "data:text/html,<title>Held</title><button>Go</button>"


async def test_a_held_tab_is_not_looked_up_and_a_closed_one_fails_at_once() -> None:
    async with running_service() as (service, client):
        target = (await client.post("/tabs/open", json={"url": PAGE})).json()["targetId"]
        ctx = service.profile(None)
        listings: list[int] = []
        read_tabs = ctx.read_tabs

        async def counted(*args: Any, **kwargs: Any) -> Any:  # a spy on the real listing
            listings.append(1)
            return await read_tabs(*args, **kwargs)

        ctx.read_tabs = counted  # type: ignore[method-assign]
        deck = Deck(service)
        caller = Caller(client="lookup-test")
        first = await deck.on_tab(caller, o.SnapshotOptions(), target=target)
        assert "button" in first.snapshot
        listings.clear()
        again = await deck.on_tab(caller, o.SnapshotOptions(), target=target)
        assert "button" in again.snapshot and listings == []  # straight to the held tab
        # A prefix still goes through the listing (only a full id of a held tab skips it).
        await deck.on_tab(caller, o.SnapshotOptions(), target=target[:12])
        assert listings == [1]

        await client.delete(f"/tabs/{target}")
        with pytest.raises(BrowserdeckError) as failed:
            await deck.on_tab(caller, o.SnapshotOptions(), target=target)
        assert failed.value.code == "tab_not_found"  # as when the tab is looked up first
