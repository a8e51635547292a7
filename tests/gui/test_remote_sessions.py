"""Issue 16 item 4: the tray and panel show a remote profile's sessions, which agent holds
which browser, and the service's health — with a real Browserless from npm."""

from __future__ import annotations

from typing import Any

import httpx
from tests.gui.conftest import running_tray, wait_for
from tests.remote.browserless import Browserless
from tests.remote.conftest import browserless, browserless_dir  # noqa: F401 (fixtures)


def _menu_lines(app: Any, name: str) -> list[str]:
    return [a.text() for a in app.tray.profile_menus[name].menu.actions() if a.text()]


async def test_tray_and_panel_show_who_holds_which_remote_browser(
    qapp: Any,
    saved_config: Any,
    browserless: Browserless,  # noqa: F811
) -> None:
    async with running_tray(qapp) as app:
        service = app.service
        await service.create_profile("farm", cdpUrl=browserless.ws_url(), pool=True)
        for session in ("agent-a", "agent-b"):
            async with httpx.AsyncClient(
                base_url=service.url,
                trust_env=False,
                timeout=60,
                headers={
                    "Authorization": f"Bearer {service.api_token}",
                    "X-Browserdeck-Client": "claude",
                    "X-Browserdeck-Session": session,
                },
            ) as agent:
                r = await agent.get("/tabs", params={"profile": "farm"})
                assert r.status_code == 200, r.text
        await app.model.refresh_now()
        await wait_for(lambda: "farm" in app.tray.profile_menus, what="the farm menu")

        def tray_shows() -> bool:
            app.tray.rebuild()
            lines = _menu_lines(app, "farm")
            return (
                "pool · 2 browsers held" in lines
                and any(line.startswith("claude agent-a:") for line in lines)
                and any(line.startswith("claude agent-b:") for line in lines)
                and any(line.startswith("service ") and "busy" in line for line in lines)
            )

        await wait_for(tray_shows, what=f"the tray's farm lines: {_menu_lines(app, 'farm')}")
        panel = app.show_panel()
        for i in range(panel.profile_list.count()):
            if panel.profile_list.item(i).data(0x0100) == "farm":  # NAME_ROLE
                panel.profile_list.setCurrentRow(i)
        await wait_for(lambda: panel.selected_profile == "farm", what="farm selected")
        text = panel.detail_label.text()
        assert "pool · 2 browsers held" in text and "claude agent-a:" in text, text
        assert "busy" in text, text
        # Stop all agents gives the browsers back: nobody holds one any more.
        await service.stop_all_agents()
        await app.model.refresh_now()
        await wait_for(
            lambda: (
                app.tray.rebuild(),
                not any(line.startswith("claude agent-") for line in _menu_lines(app, "farm")),
            )[1],
            what=f"no agent holding a browser after Stop all: {_menu_lines(app, 'farm')}",
        )
        assert browserless.token not in " ".join(_menu_lines(app, "farm"))
