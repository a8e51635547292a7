"""Issue 11: `serve` SIGKILLed in the middle of saving, then started again.

Saves (profile creations, each an atomic write of config.json) run from several
threads while `serve` is killed. What was acknowledged must still be there, the file
must parse (never a reset config), a saved screenshot must survive, no half-written
temp file may stay behind, and the profile must start at once.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import httpx

from browserdeck import config
from browserdeck.secrets import tokens as secrets
from browserdeck.util import files, paths
from tests.chaos.test_orphan_browser import Serve, serve  # noqa: F401 (the fixture)


def _client(runner: Serve) -> httpx.Client:
    token = secrets.get_token("api", create=False)
    return httpx.Client(
        base_url=runner.url,
        headers={"Authorization": f"Bearer {token}"},
        timeout=60,
        trust_env=False,
    )


def _temp_files(path: Path) -> list[Path]:
    return [*files.stale_temp_files(path, older_than=0), *path.parent.glob(".config-*.tmp")]


def test_serve_killed_mid_save_keeps_config_and_artifacts(serve: Serve) -> None:  # noqa: F811
    first = serve.start()
    with _client(serve) as http:
        assert http.post("/start").status_code == 200
        opened = http.post("/tabs/open", json={"url": "data:text/html,<title>keep</title>"})
        assert opened.status_code == 200, opened.text
        shot = http.post("/screenshot", json={"targetId": opened.json()["targetId"]})
        assert shot.status_code == 200, shot.text
    saved = Path(shot.json()["path"])
    saved_bytes = saved.read_bytes()

    acknowledged: list[str] = []
    stop = threading.Event()

    def save_loop(worker: int) -> None:
        with _client(serve) as http:
            for i in range(1000):
                if stop.is_set():
                    return
                name = f"w{worker}-{i}"
                try:
                    resp = http.post("/profiles/create", json={"name": name})
                except httpx.HTTPError:
                    return  # serve is gone
                if resp.status_code == 200:
                    acknowledged.append(name)

    workers = [threading.Thread(target=save_loop, args=(w,)) for w in range(4)]
    for t in workers:
        t.start()
    config_file = paths.config_file()
    deadline = time.monotonic() + 30
    while len(acknowledged) < 12:  # well into the saves
        assert time.monotonic() < deadline, serve.logs()
        time.sleep(0.01)
    # Mid-save for real: SIGKILL the moment a save's temp file exists (no handler runs;
    # whatever was being written stays as it is). Else at the deadline, between saves.
    deadline = time.monotonic() + 10
    while not _temp_files(config_file) and time.monotonic() < deadline:
        pass
    first.kill()
    first.wait()
    left_by_the_kill = _temp_files(config_file)
    stop.set()
    for t in workers:
        t.join(30)

    # Everything acknowledged is on disk, in a file that parses.
    loaded = config.load()
    assert loaded.problem is None, loaded.problem
    missing = set(acknowledged) - set(loaded.config.profiles)
    assert not missing, f"acknowledged, then lost: {sorted(missing)}"
    assert saved.read_bytes() == saved_bytes, "the saved screenshot did not survive"

    serve.start()
    with _client(serve) as http:
        started: Any = http.post("/start")
        assert started.status_code == 200, started.text + serve.logs()
        assert started.json()["running"] is True
        listed = http.get("/profiles").json()
    names = {p["profile"] for p in listed["profiles"]}
    assert set(acknowledged) <= names, listed
    # No half-written temp file stays behind (young ones go a few seconds later).
    deadline = time.monotonic() + config.TEMP_FILE_GRACE + 10
    while _temp_files(config_file):
        assert time.monotonic() < deadline, (
            f"left behind: {_temp_files(config_file)} (the kill left {left_by_the_kill})"
        )
        time.sleep(0.2)
    assert config.load().problem is None
