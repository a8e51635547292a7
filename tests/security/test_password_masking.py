"""Issue 10 item 8: text typed into password fields (and fill values for them) is masked.

Real service and Chromium: after type and fill into an <input type=password>, neither
the action results, the snapshots (ai and role formats print a textbox's value), the
activity events the tray lists, nor the log files contain the secret; a plain text box
keeps its value (only passwords are masked).
"""

from __future__ import annotations

import re
from typing import Any

from browserdeck.util import paths
from tests.support.service import running_service

PAGE = "data:text/html,<input type=password aria-label=Pin><input aria-label=Name>"


async def test_password_text_is_masked_everywhere() -> None:
    async with running_service() as (service, client):
        seen: list[dict[str, Any]] = []
        service.events.api_call.connect(lambda **kw: seen.append(kw))
        target = (await client.post("/tabs/open", json={"url": PAGE})).json()["targetId"]
        snap = (await client.get("/snapshot", params={"targetId": target})).json()["snapshot"]
        pin = re.search(r'textbox "Pin" \[ref=(e\d+)\]', snap)
        name = re.search(r'textbox "Name" \[ref=(e\d+)\]', snap)
        assert pin and name, snap
        answers = [
            await client.post(
                "/act",
                json={"kind": "type", "ref": pin[1], "text": "typedSECRET", "targetId": target},
            ),
            await client.post(
                "/act",
                json={
                    "kind": "fill",
                    "targetId": target,
                    "fields": [
                        {"ref": pin[1], "value": "filledSECRET"},
                        {"ref": name[1], "value": "visible-name"},
                    ],
                },
            ),
        ]
        for answer in answers:
            assert answer.status_code == 200, answer.text
            assert "SECRET" not in answer.text
        assert "visible-name" in answers[1].text  # only password fields are masked
        for fmt in ("ai", "role"):
            shot = await client.get("/snapshot", params={"targetId": target, "format": fmt})
            assert shot.status_code == 200
            assert "SECRET" not in shot.text, shot.text
            assert "••••" in shot.text and "visible-name" in shot.text
        assert seen and not any("SECRET" in str(entry) for entry in seen)
    for log in paths.log_dir().rglob("*"):
        if log.is_file():
            assert "SECRET" not in log.read_text(errors="replace"), log
