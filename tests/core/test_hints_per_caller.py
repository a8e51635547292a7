"""Admin errors say what to do next in each caller's words (issue 13).

An HTTP client reads a route, a CLI user a command, an MCP client a tool (or, for a
step no tool does, the command its user runs). These errors once carried one caller's
words for everyone: "POST /reset-profile", "`browserdeck stop --profile x`" …
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
from pathlib import Path

from browserdeck import config, errors
from browserdeck.chrome.procs import process_cmdline
from browserdeck.client import CLIENT_NAME as CLI
from browserdeck.errors import BrowserdeckError
from browserdeck.master import build_service
from tests.core.test_cli import cli
from tests.mcp.harness import call_error, http_client, mcp_config
from tests.support.service import api_client


async def _holding(udd: Path) -> subprocess.Popen[bytes]:
    """A live process of ours that holds ``udd`` as a browser would (its SingletonLock
    names it and its argv has --user-data-dir): the launcher must refuse the profile."""
    udd.mkdir(parents=True, exist_ok=True)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(120)", f"--user-data-dir={udd}"]
    )
    for _ in range(200):  # its argv is readable once exec() is done
        if f"--user-data-dir={udd}" in (process_cmdline(holder.pid) or []):
            break
        await asyncio.sleep(0.02)
    os.symlink(f"{socket.gethostname()}-{holder.pid}", udd / "SingletonLock")
    return holder


async def test_a_locked_profile_is_said_to_api_cli_and_mcp_in_their_words(bd_home: Path) -> None:
    mcp_config(bd_home)
    service = build_service(force_headless=True)
    await service.start()
    holder = None
    try:
        udd = service.config.user_data_dir_of(service.config.profiles["agent"])
        holder = await _holding(Path(udd))
        async with api_client(service) as http:
            api = (await http.post("/start", params={"profile": "agent"})).json()["error"]
            via_cli = (
                await http.post(
                    "/start", params={"profile": "agent"}, headers={"X-Browserdeck-Client": CLI}
                )
            ).json()["error"]
        assert api["code"] == via_cli["code"] == "profile_locked", api
        assert "stop that browser first (POST /stop?profile=agent, or `kill" in api["hint"]
        assert "`browserdeck stop --profile agent`" in via_cli["hint"], via_cli
        assert "POST /stop" not in via_cli["hint"]

        # The real CLI, over the service's socket, prints the command.
        env = dict(os.environ, BROWSERDECK_HOME=str(bd_home))
        done = await asyncio.to_thread(cli, env, "start", "--profile", "agent")
        assert done.returncode != 0
        assert "hint: stop that browser first (`browserdeck stop --profile agent`" in done.stderr

        async with http_client(f"{service.url}/mcp", service.api_token) as client:
            error = await call_error(
                client, "browser_profiles", {"action": "start", "name": "agent"}
            )
        assert "(browser_profiles action=stop name=agent, or `kill" in error, error
        assert "POST /stop" not in error and "browserdeck stop" not in error
    finally:
        if holder is not None:
            holder.kill()
            holder.wait()
        await service.stop()


def test_ports_exhausted_names_the_delete_step_per_caller() -> None:
    cfg = config.default_config()
    taken = list(config.MANAGED_PORT_RANGE)
    try:
        config.allocate_cdp_port(cfg, reserved=taken)
    except BrowserdeckError as exc:
        error = exc
    else:
        raise AssertionError("every port was reserved: allocation must fail")
    assert error.code == "ports_exhausted"
    assert error.hint_for("api") == "delete a profile you no longer need (DELETE /profiles/{name})"
    assert error.hint_for("cli") == (
        "delete a profile you no longer need (`browserdeck delete-profile NAME`)"
    )
    # No MCP tool deletes profiles: the agent is told the command its user can run.
    assert error.hint_for("mcp") == error.hint_for("cli")


def test_a_step_about_one_profile_names_it_in_each_callers_words() -> None:
    reset = errors.RESET_PROFILE.of(profile="work")
    assert reset.say("api") == "POST /reset-profile?profile=work"
    assert reset.say("cli") == reset.say("mcp") == "`browserdeck reset-profile --profile work`"
    token = errors.REMOTE_TOKEN.of(profile="farm")
    assert token.say("api") == 'POST /profiles/token?profile=farm {"token": "…"}'
    assert token.say("cli") == "`browserdeck remote-token --profile farm`"
    start = errors.START_OF.of(profile="work")
    assert [start.say(v) for v in ("api", "cli", "mcp")] == [
        "POST /start?profile=work",
        "`browserdeck start --profile work`",
        "browser_profiles action=start name=work",
    ]


def test_a_refused_upload_says_where_files_go_in_each_callers_words(tmp_path: Path) -> None:
    from browserdeck.policy import confine

    secret = tmp_path / ".hidden" / "key.txt"
    secret.parent.mkdir()
    secret.write_text("x")
    try:
        confine.readable_file(str(secret), [tmp_path])
    except BrowserdeckError as exc:
        error = exc
    else:
        raise AssertionError("a file in a dot-folder must be refused")
    assert error.code == "path_not_allowed"
    assert error.hint_for("api") == (
        'put the file in a folder the request names in "roots", or add its folder to '
        '"uploadRoots" in Settings'
    )
    assert error.hint_for("cli") is not None and "the current directory" in error.hint_for("cli")
    assert "the MCP client's workspace" in (error.hint_for("mcp") or "")
    assert "MCP" not in (error.hint_for("api") or "") + (error.hint_for("cli") or "")
