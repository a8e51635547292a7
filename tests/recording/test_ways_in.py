"""Recorded sessions through the API and the CLI: listed, read, exported to a path."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

from browserdeck.recording.store import Store
from tests.support.service import running_service

NAMED = {"X-Browserdeck-Client": "report-bot", "X-Browserdeck-Session": "bot-run-7"}


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "browserdeck", *args], env=dict(os.environ),
                          capture_output=True, text=True, timeout=120)


async def test_sessions_are_listed_read_and_exported_by_the_api_and_the_cli(
    bd_home: Path, site: str
) -> None:
    async with running_service() as (service, api):
        opened = await api.post("/tabs/open", json={"url": f"{site}/login.html"}, headers=NAMED)
        assert opened.status_code == 200, opened.text
        target = opened.json()["targetId"]
        snap = await api.get("/snapshot", params={"targetId": target}, headers=NAMED)
        ref = snap.json()["snapshot"].split('button "Sign in" [ref=')[1].split("]")[0]
        done = await api.post("/act", json={"kind": "click", "ref": ref, "targetId": target},
                              headers=NAMED)
        assert done.status_code == 200, done.text
        # The user's own calls (no name, or the CLI's) are no agent session.
        assert (await api.get("/tabs")).status_code == 200

        listed = (await api.get("/sessions")).json()["sessions"]
        assert [(s["agent"], s["key"], s["calls"]) for s in listed] == [
            ("report-bot", "bot-run-7", 3)
        ]
        sid = listed[0]["id"]
        timeline = (await api.get(f"/sessions/{sid}")).json()
        assert [s["op"] for s in timeline["steps"]] == ["open-tab", "snapshot", "act"]
        click = timeline["steps"][2]
        assert click["title"].startswith(f"click {ref}") and click["targetId"] == target

        exported = await api.post(f"/sessions/{sid}/export", json={"format": "trace"})
        assert exported.status_code == 200, exported.text
        path = Path(exported.json()["path"])
        assert path.is_absolute() and path.suffix == ".zip" and path.is_file()
        default = (await api.post(f"/sessions/{sid}/export")).json()
        assert default["format"] == "html" and default["path"].endswith(".html")
        # Readable by this user only, as every file browserdeck saves from a page: the
        # exports and the recording itself (its rows, summary and images).
        written = [path, Path(default["path"]), *(Store().root / sid).iterdir()]
        assert {p.name: stat.S_IMODE(p.stat().st_mode) for p in written} == dict.fromkeys(
            (p.name for p in written), 0o600
        )

        bad = await api.post(f"/sessions/{sid}/export", json={"format": "gif"})
        assert bad.status_code == 400 and "format" in bad.json()["error"]["message"]
        missing = await api.get("/sessions/no-such-session")
        assert missing.status_code == 404
        assert missing.json()["error"]["code"] == "session_not_found"
        assert "GET /sessions" in missing.json()["error"]["hint"]

        # The CLI, over the API's socket, as a person runs it.
        shown = await asyncio.to_thread(cli, "sessions")
        assert shown.returncode == 0, shown.stderr
        assert sid in shown.stdout and "report-bot" in shown.stdout and "3 calls" in shown.stdout
        steps = await asyncio.to_thread(cli, "sessions", "show", sid)
        assert steps.returncode == 0 and f"click {ref}" in steps.stdout
        written = await asyncio.to_thread(cli, "sessions", "export", sid, "--format", "trace")
        assert written.returncode == 0, written.stderr
        assert Path(written.stdout.strip()) == path and path.is_file()
        as_json = await asyncio.to_thread(cli, "sessions", "--json")
        assert json.loads(as_json.stdout)["sessions"][0]["id"] == sid
        unknown = await asyncio.to_thread(cli, "sessions", "export", "nope", "--format", "html")
        assert unknown.returncode != 0 and "no recorded session 'nope'" in unknown.stderr
        assert "browserdeck sessions" in unknown.stderr
        assert service.started
