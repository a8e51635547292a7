"""The CLI against a real `browserdeck serve` process, as a user runs it."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import httpx
import psutil
import pytest

from browserdeck import config
from browserdeck.cli import main as browserdeck_cli
from tests.mcp.site import serve_site
from tests.support.net import free_port
from tests.support.service import service_config


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "browserdeck", *args], env=env,
                          capture_output=True, text=True, timeout=120)


def imported_by(env: dict[str, str], *args: str) -> set[str]:
    """The modules a CLI call imports beyond those the interpreter starts with."""
    code = (
        "import sys\n"
        "before = set(sys.modules)\n"
        "from browserdeck.cli import main as cli\n"
        "code = cli.main(sys.argv[1:])\n"
        "print(' '.join(sorted(set(sys.modules) - before)), file=sys.stderr)\n"
        "sys.exit(code)\n"
    )
    done = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return set(done.stderr.strip().splitlines()[-1].split())


@pytest.fixture
def served(bd_home: Path) -> Iterator[tuple[dict[str, str], subprocess.Popen[str]]]:
    cfg = service_config()
    config.save(cfg)
    env = dict(os.environ, BROWSERDECK_HOME=str(bd_home))
    proc, log = _serve(env, bd_home, cfg.control_port)
    try:
        yield env, proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            proc.wait(30)
        log.close()


def _serve(
    env: dict[str, str], bd_home: Path, port: int | None
) -> tuple[subprocess.Popen[str], IO[str]]:
    """`browserdeck serve --headless` in ``bd_home``, once its API answers."""
    log = (bd_home / "serve.log").open("a")
    proc = subprocess.Popen([sys.executable, "-m", "browserdeck", "serve", "--headless"], env=env,
                            stdout=log, stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90  # generous: a loaded shared machine starts slowly
    while True:
        try:
            if httpx.get(url + "/health", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            proc.wait()
            log.close()
            pytest.fail(f"serve did not come up: {(bd_home / 'serve.log').read_text()}")
        time.sleep(0.1)
    return proc, log


def test_cli_round_trip(served: tuple[dict[str, str], subprocess.Popen[str]]) -> None:
    env, proc = served
    status = cli(env, "status")
    assert status.returncode == 0, status.stderr
    assert "agent (managed, #FF4500): stopped" in status.stdout

    started = cli(env, "start", "--json")
    assert started.returncode == 0, started.stderr
    pid = json.loads(started.stdout)["pid"]

    opened = cli(env, "open", "data:text/html,<title>Hello CLI</title>", "--json")
    target = json.loads(opened.stdout)["targetId"]
    tabs = cli(env, "tabs")
    assert target in tabs.stdout
    # A call over the socket imports what it needs only (issue 14): not argparse nor json
    # (with re and enum: cli_fast, fastjson), socket.py (its enums), URL parsing, pathlib,
    # the token store, the config, nor the modules of the other commands.
    never = {"argparse", "json", "re", "enum", "socket", "shutil", "urllib.parse", "pathlib",
             "typing", "http.client", "keyring", "platformdirs", "browserdeck.config",
             "browserdeck.errors"}
    areas = {f"browserdeck.cli.{area}" for area in browserdeck_cli.AREAS}
    for argv, area in ((["tabs"], None), (["snapshot", "-t", target], "browserdeck.cli.engine")):
        imported = imported_by(env, *argv)
        assert "browserdeck.util.uds" in imported and not imported & never, (argv, imported & never)
        assert imported & areas == ({area} if area else set()), argv

    # The page commands print what the answers hold, read by the keys results.py declares.
    cli(env, "navigate", "data:text/html,<title>Page</title><button>Go</button>", "-t", target)
    snap = cli(env, "snapshot", "-t", target)
    assert snap.returncode == 0 and re.search(r"^# \"Page\" — data:.*\n# \d+ refs, 1 interactive", snap.stdout)
    shot = cli(env, "screenshot", "--labels", "-t", target)
    assert shot.returncode == 0, shot.stderr
    assert re.search(r"^  e\d+: [\d.]+,[\d.]+ [\d.]+x[\d.]+$", shot.stdout, re.M), shot.stdout
    assert "1 labels, 0 refs not shown" in shot.stdout
    alerted = cli(env, "evaluate", "() => { console.warn('from the page'); alert('hi') }", "-t", target)
    assert "alert dialog 'hi' was dismissed (nothing was armed)" in alerted.stdout, alerted.stdout
    console = cli(env, "console", "-t", target)
    assert console.returncode == 0 and "[warning] from the page" in console.stdout
    armed = cli(env, "dialog", "--dismiss", "-t", target)
    assert re.search(r"dismissed \(for [1-9]\d* s\)", armed.stdout), armed.stdout

    assert cli(env, "focus", target[:8]).returncode == 0
    closed = cli(env, "close", target[:8])
    assert closed.returncode == 0 and target in closed.stdout

    bad = cli(env, "create-profile", "--name", "Nope!")
    assert bad.returncode == 1
    assert "invalid profile name 'Nope!'" in bad.stderr and "hint:" in bad.stderr
    assert "Traceback" not in bad.stderr

    missing = cli(env, "tabs", "--profile", "ghost")
    assert missing.returncode == 1 and "profile 'ghost' does not exist" in missing.stderr

    profiles = cli(env, "profiles")
    assert "* agent" in profiles.stdout and "chrome (extension" in profiles.stdout

    # Ids are one path segment: `close ../profiles/x` once became DELETE /profiles/x.
    assert cli(env, "create-profile", "--name", "scratch").returncode == 0
    sneaky = cli(env, "close", "../profiles/scratch")
    assert sneaky.returncode == 1 and "no route DELETE /tabs/../profiles/scratch" in sneaky.stderr
    assert "scratch (managed" in cli(env, "profiles").stdout
    for bad_id in ("", ".."):
        empty = cli(env, "close", bad_id)
        assert empty.returncode == 1 and "is not a valid tab id" in empty.stderr
        assert "Traceback" not in empty.stderr
    gone = cli(env, "delete-profile", "--name", "x/../scratch")
    assert gone.returncode == 1 and "no route DELETE /profiles/x/../scratch" in gone.stderr
    assert "scratch (managed" in cli(env, "profiles").stdout

    # One shutdown path: SIGTERM stops the browser too.
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(30) == 0
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_sigterm_closes_the_browser_cleanly_keeping_cookies_and_leaving_nothing(
    served: tuple[dict[str, str], subprocess.Popen[str]], bd_home: Path
) -> None:
    """The service's stop closes its browser with Browser.close, so Chromium writes its
    cookie store: a persistent cookie set before a SIGTERM is there after a restart.
    And nothing of the service lives on: no Chromium, no Playwright driver."""
    env, proc = served
    with serve_site() as site:
        opened = cli(env, "open", f"{site}/form.html", "--json")
        assert opened.returncode == 0, opened.stderr
        target = json.loads(opened.stdout)["targetId"]
        # A cookie set just now: Chromium holds it in memory until it flushes its store.
        js = "() => { document.cookie = 'kept=yes; max-age=3600; path=/'; return document.cookie }"
        assert "kept=yes" in cli(env, "evaluate", js, "--target", target).stdout
        family = psutil.Process(proc.pid).children(recursive=True)
        assert any("chrom" in p.name().lower() for p in family), [p.name() for p in family]
        assert any("node" in p.name().lower() for p in family), [p.name() for p in family]

        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
        # Helpers exit a moment after the browser's main process; the stop waits for them.
        alive = [p for p in family if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
        assert alive == [], [(p.pid, p.name()) for p in alive]

        again, log = _serve(env, bd_home, config.load().config.control_port)
        try:
            reopened = cli(env, "open", f"{site}/form.html", "--json")
            assert reopened.returncode == 0, reopened.stderr
            target = json.loads(reopened.stdout)["targetId"]
            read = cli(env, "evaluate", "() => document.cookie", "--target", target)
            assert "kept=yes" in read.stdout, read.stdout + read.stderr
        finally:
            again.send_signal(signal.SIGTERM)
            again.wait(30)
            log.close()


def test_cli_says_when_the_service_is_not_running(bd_home: Path) -> None:
    env = dict(os.environ, BROWSERDECK_HOME=str(bd_home),
               BROWSERDECK_URL=f"http://127.0.0.1:{free_port()}")
    result = cli(env, "status")
    assert result.returncode == 3
    assert "browserdeck is not running" in result.stderr
    assert "browserdeck serve" in result.stderr
    for url in ("http://[::1", "notaurl"):
        bad = cli(env, "status", "--url", url)
        assert bad.returncode in (2, 3) and "--url / BROWSERDECK_URL" in bad.stderr, bad.stderr
        assert "Traceback" not in bad.stderr


def test_token_command_prints_the_stored_token(bd_home: Path) -> None:
    env = dict(os.environ, BROWSERDECK_HOME=str(bd_home))
    first = cli(env, "token").stdout.strip()
    assert len(first) >= 43
    assert cli(env, "token").stdout.strip() == first
    assert cli(env, "token", "--relay").stdout.strip() not in ("", first)


def test_pair_and_relay_url_hand_over_the_relay_token(bd_home: Path) -> None:
    env = dict(os.environ, BROWSERDECK_HOME=str(bd_home))
    relay_token = cli(env, "token", "--relay").stdout.strip()
    pair = json.loads(cli(env, "pair", "--json").stdout)
    assert pair["profile"] == "chrome" and pair["port"] == 18792
    assert pair["pairingUrl"].startswith("chrome-extension://")
    assert f"token={relay_token}" in pair["pairingUrl"]
    relay = json.loads(cli(env, "relay-url", "--json").stdout)
    assert relay["cdpUrl"] == "http://127.0.0.1:18792"
    assert relay["headers"]["Authorization"] == f"Bearer {relay_token}"
    wrong = cli(env, "pair", "--profile", "agent")
    assert wrong.returncode != 0 and "not an extension profile" in wrong.stderr


def test_a_closed_pipe_is_not_a_traceback(bd_home: Path) -> None:
    # `browserdeck tabs | head -1`: the reader goes away before the output is written.
    env = dict(os.environ, BROWSERDECK_HOME=str(bd_home))
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        result = subprocess.run([sys.executable, "-m", "browserdeck", "paths"], env=env,
                                stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=60)
    finally:
        os.close(write_end)
    assert "Traceback" not in result.stderr and "BrokenPipeError" not in result.stderr


def test_a_client_command_ends_without_the_teardown_unless_something_waits_for_it(
    served: tuple[dict[str, str], subprocess.Popen[str]],
) -> None:
    # cli.run() skips the interpreter's teardown after a client command (issue 14): the
    # exit code and the output stay, and an atexit handler, if one is there, still runs.
    env = {k: v for k, v in served[0].items() if k != "PYTHONUNBUFFERED"}  # a pipe buffers
    code = (
        "import atexit, sys\n"
        "from browserdeck.cli import main as cli\n"
        "class Witness:\n"
        "    def __del__(self):\n"
        "        print('torn down', flush=True)\n"
        "witness = Witness()\n"
        "if sys.argv.pop() == 'atexit':\n"
        "    atexit.register(print, 'atexit ran')\n"
        "sys.argv[1:] = ['status', '--profile', sys.argv.pop()]\n"
        "cli.run()\n"
    )
    for profile, case, rc in (("agent", "plain", 0), ("agent", "atexit", 0), ("ghost", "plain", 1)):
        done = subprocess.run([sys.executable, "-c", code, profile, case], env=env,
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == rc, done.stderr
        lines = done.stdout.splitlines()
        if case == "atexit":
            assert lines[-2:] == ["atexit ran", "torn down"]
        else:
            assert "torn down" not in lines
        assert ("agent (managed" in done.stdout) == (rc == 0)
    # The output that could not be written (a full disk) is still said, with exit code 1.
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-c", code, "agent", "plain"], env=env,
                              stdout=full, stderr=subprocess.PIPE, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr == "error: the output could not be written: [Errno 28] No space left on device\n"
    # Started with stdout closed (`browserdeck status >&-`, a windowed launcher): Python
    # has no sys.stdout then; the call still succeeds, with no traceback.
    done = subprocess.run([sys.executable, "-c", code, "agent", "plain"], env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          timeout=60, preexec_fn=lambda: os.close(1))
    assert (done.returncode, done.stderr) == (0, "")


def test_local_commands_report_bad_input_without_touching_the_config(bd_home: Path) -> None:
    env = dict(os.environ, BROWSERDECK_HOME=str(bd_home))
    config.save(service_config())
    ghost = cli(env, "pair", "--profile", "ghost")
    assert ghost.returncode == 1 and "profile 'ghost' does not exist" in ghost.stderr
    assert "Traceback" not in ghost.stderr
    # A broken config is reported by relay-url, never moved aside behind the user's back.
    path = bd_home / "config" / "config.json"
    path.write_text('{"profiles": {')
    broken = cli(env, "relay-url")
    assert broken.returncode == 1 and "cannot be used: not valid JSON" in broken.stderr
    assert path.read_text() == '{"profiles": {'
    assert list(path.parent.glob("config.json.bad-*")) == []
    # Privileged and impossible ports are refused before anything listens (root could bind 80).
    for port in ("80", "99999", "x"):
        refused = cli(env, "serve", "--port", port)
        assert refused.returncode == 2 and "argument --port" in refused.stderr


def test_a_closed_terminal_stops_serve_and_its_browser(
    served: tuple[dict[str, str], subprocess.Popen[str]],
) -> None:
    # Closing the terminal sends SIGHUP; the browser (its own process group) got orphaned.
    env, proc = served
    started = cli(env, "start", "--json")
    assert started.returncode == 0, started.stderr
    pid = json.loads(started.stdout)["pid"]
    proc.send_signal(signal.SIGHUP)
    assert proc.wait(30) == 0
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
