"""Launching, watching and stopping real Chromium through browserdeck's launcher."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from browserdeck.chrome.cdp import CDPClient, CDPError
from browserdeck.chrome.decorate import color_to_skcolor, read_decoration
from browserdeck.chrome.endpoint import fetch_version, list_targets
from browserdeck.chrome.executables import (
    ENV_OVERRIDE,
    HEADLESS_SHELL,
    find_browser,
    headless_shells,
)
from browserdeck.chrome.flags import LaunchOptions, child_env, child_home, chrome_args, has_display
from browserdeck.chrome.launcher import is_cdp_ready, launch
from browserdeck.chrome.process import ChromeProcess
from browserdeck.chrome.procs import kill_port_owner, pid_alive, port_in_use, process_group_members
from browserdeck.chrome.profile_lock import profile_lock_owner
from browserdeck.errors import Conflict, Unavailable
from tests.chrome.conftest import OptionsFactory
from tests.support.browsers import launch_raw_chromium
from tests.support.net import free_port

# -- flags and environment (no browser needed) -------------------------------------


def test_flags(tmp_path: Path) -> None:
    opts = LaunchOptions(
        profile="agent",
        port=18999,
        user_data_dir=tmp_path / "user-data",
        color="#FF4500",
        headless=True,
        no_sandbox=False,
        extra_args=["--disable-features=Foo,Translate", "--enable-features=Bar", "--lang=de"],
        window_size=(1000, 700),
    )
    args = chrome_args(opts, system="Linux", as_root=False)
    # DevTools over fds 3/4, never a port of the browser's own (issue 10 item 2).
    assert "--remote-debugging-pipe" in args
    assert not [a for a in args if a.startswith("--remote-debugging-port")]
    opts.pipe = False  # Windows: the browser's own port, as before
    assert "--remote-debugging-port=18999" in chrome_args(opts, system="Windows", as_root=False)
    opts.pipe = True
    assert f"--user-data-dir={tmp_path / 'user-data'}" in args
    assert "--headless=new" in args
    assert "--window-size=1000,700" in args
    assert "--disable-dev-shm-usage" in args
    assert "--test-type" in args
    assert "--no-sandbox" not in args
    # Chrome honours only the last --disable-features: one merged flag.
    # Headless: without the omnibox popups nobody can see (their preload costs ~1 s of CPU).
    assert [a for a in args if a.startswith("--disable-features=")] == [
        "--disable-features=Translate,MediaRouter,WebUIOmniboxPopup,WebUIOmniboxAimPopup,Foo"
    ]
    # Headless: the network service in the browser process (a process fewer to start).
    assert [a for a in args if a.startswith("--enable-features=")] == [
        "--enable-features=NetworkServiceInProcess2,Bar"
    ]
    assert args[-2:] == ["--lang=de", "about:blank"]

    as_root = chrome_args(opts, system="Linux", as_root=True)
    assert {"--no-sandbox", "--disable-setuid-sandbox"} <= set(as_root)
    opts.no_sandbox, opts.headless = True, False
    mac = chrome_args(opts, system="Darwin", as_root=False)
    assert "--no-sandbox" in mac
    assert "--headless=new" not in mac
    assert "--disable-features=Translate,MediaRouter,Foo" in mac  # a person uses the omnibox
    assert [a for a in mac if a.startswith("--enable-features=")] == ["--enable-features=Bar"]
    # Windows and macOS sandbox the network service: headless keeps it in its own process.
    opts.headless = True
    for system in ("Windows", "Darwin"):
        elsewhere = chrome_args(opts, system=system, as_root=False)
        assert "--headless=new" in elsewhere
        assert [a for a in elsewhere if a.startswith("--enable-features=")] == [
            "--enable-features=Bar"
        ]
    assert "--disable-dev-shm-usage" not in mac


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="HOME isolation is Linux-only")
def test_child_env_moves_home_under_the_profile(tmp_path: Path) -> None:
    real_home = tmp_path / "real-home"
    real_home.mkdir()
    (real_home / ".Xauthority").write_text("cookie")
    opts = LaunchOptions("agent", 1, tmp_path / "agent" / "user-data", "#FF4500", True, False)
    env = child_env(opts, {"HOME": str(real_home), "PATH": "/bin", "XDG_RUNTIME_DIR": "/run/x"})
    assert env["HOME"] == str(tmp_path / "agent" / "home") == str(child_home(opts))
    for key in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"):
        assert env[key].startswith(env["HOME"] + "/")
        assert Path(env[key]).is_dir()
    assert env["XAUTHORITY"] == str(real_home / ".Xauthority")
    assert env["XDG_RUNTIME_DIR"] == "/run/x"
    assert env["PATH"] == "/bin"
    custom = LaunchOptions("x", 1, tmp_path / "elsewhere", "#FF4500", True, False)
    assert child_home(custom) == tmp_path / "elsewhere" / ".home"


def test_has_display(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    assert has_display() is False
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-0")
    assert has_display() is True


def test_stale_profile_locks_are_removed(tmp_path: Path) -> None:
    lock = tmp_path / "SingletonLock"
    os.symlink("some-other-host-4242", lock)
    assert profile_lock_owner(tmp_path) is None
    assert not os.path.lexists(lock)
    # Our own pid is alive but is not a browser using this dir: also stale.
    os.symlink(f"{socket.gethostname()}-{os.getpid()}", lock)
    assert profile_lock_owner(tmp_path) is None
    assert not os.path.lexists(lock)


# -- a real browser ----------------------------------------------------------------


async def live_prefs(browser: ChromeProcess) -> dict[str, Any]:
    """The prefs Chrome has loaded, read from its own chrome://prefs-internals page."""
    async with await CDPClient.connect(browser.ws_url, headers=browser.auth_headers()) as cdp:
        target = (await cdp.send("Target.createTarget", {"url": "chrome://prefs-internals"}))[
            "targetId"
        ]
        session = (await cdp.send("Target.attachToTarget", {"targetId": target, "flatten": True}))[
            "sessionId"
        ]
        # The page fills itself in asynchronously; resolve once its text is the JSON.
        script = """new Promise(resolve => { const poll = () => {
            try { resolve(JSON.stringify(JSON.parse(document.body.innerText))); }
            catch (e) { setTimeout(poll, 20); } }; poll(); })"""
        # The new target commits its first document (about:blank) before the WebUI's: an
        # evaluate caught between the two loses its context (1 run in 8 here); once more.
        for attempt in range(3):
            try:
                result = await cdp.send(
                    "Runtime.evaluate",
                    {"expression": script, "awaitPromise": True, "returnByValue": True},
                    session_id=session,
                )
                break
            except CDPError as exc:
                if "context was destroyed" not in str(exc) or attempt == 2:
                    raise
        await cdp.send("Target.closeTarget", {"targetId": target})
    prefs: dict[str, Any] = json.loads(result["result"]["value"])
    return prefs


def pref(prefs: dict[str, Any], dotted: str) -> Any:
    node: Any = prefs
    for key in dotted.split("."):
        node = node[key]
    return node["value"]


async def test_launch_is_ready_and_isolated(
    options: OptionsFactory, launched: list[ChromeProcess]
) -> None:
    opts = options("agent")
    browser = await launch(opts)
    launched.append(browser)
    assert browser.alive() and browser.returncode() is None
    assert browser.cdp_url == f"http://127.0.0.1:{opts.port}"
    version = await fetch_version(browser.cdp_url, headers=browser.auth_headers())
    assert version["webSocketDebuggerUrl"] == browser.ws_url
    assert "Chrome/" in version["Browser"]
    # Without the token the endpoint refuses, so to a stranger nothing is "ready".
    assert not await is_cdp_ready(browser.cdp_url)
    pages = [t for t in await list_targets(browser.cdp_url, headers=browser.auth_headers()) if t["type"] == "page"]
    assert [p["url"] for p in pages] == ["about:blank"]
    # Its own session/process group, and HOME under the profile (Linux).
    assert os.getpgid(browser.pid) == browser.pid
    if sys.platform.startswith("linux"):
        environ = Path(f"/proc/{browser.pid}/environ").read_bytes().split(b"\0")
        assert f"HOME={child_home(opts)}".encode() in environ
    assert browser.executable.path == opts.executable


async def test_a_headless_browser_starts_without_the_omnibox_popups(
    options: OptionsFactory, launched: list[ChromeProcess]
) -> None:
    """Chromium preloads the omnibox popup WebUIs at start (~1 s of CPU, issue 14); a
    headless one is launched without them. They appear within ~0.5 s of the first tab
    when enabled, so watching for 2 s after it is a bound, not a race."""
    opts = options("agent", headless=True)
    browser = await launch(opts)
    launched.append(browser)
    async with await CDPClient.connect(browser.ws_url, headers=browser.auth_headers()) as cdp:
        deadline = asyncio.get_running_loop().time() + 2.0
        urls: list[str] = []
        while asyncio.get_running_loop().time() < deadline:
            infos = (await cdp.send("Target.getTargets", {"filter": [{}]}))["targetInfos"]
            urls = [t["url"] for t in infos]
            assert "about:blank" in urls
            assert not [u for u in urls if u.startswith("chrome://omnibox-popup")], urls
            await asyncio.sleep(0.1)


async def test_a_headless_browser_runs_its_network_service_in_its_own_process(
    options: OptionsFactory, launched: list[ChromeProcess]
) -> None:
    """A headless browser starts no utility process for the network service (a process
    fewer to start, issue 14), and its pages still load over the network."""
    import psutil

    from tests.mcp.site import serve_site

    opts = options("agent", headless=True)
    browser = await launch(opts)
    launched.append(browser)
    kinds = [
        " ".join(a for a in child.cmdline() if a.startswith("--utility-sub-type="))
        for child in psutil.Process(browser.pid).children(recursive=True)
    ]
    assert not [k for k in kinds if "NetworkService" in k], kinds
    with serve_site() as site:
        url = f"{site}/form.html"
        async with await CDPClient.connect(browser.ws_url, headers=browser.auth_headers()) as cdp:
            target = (await cdp.send("Target.createTarget", {"url": url}))["targetId"]
            for _ in range(100):  # "no hang": up to 10 s
                infos = (await cdp.send("Target.getTargets"))["targetInfos"]
                if any(t["targetId"] == target and t["title"] == "Form" for t in infos):
                    break
                await asyncio.sleep(0.1)
            else:
                raise AssertionError(f"the page did not load: {infos}")


def debians_shell() -> str | None:
    """The headless shell a search without a set browser runs here, if any."""
    if os.environ.get(ENV_OVERRIDE):
        return None
    try:
        shell = headless_shells().get(find_browser().path)
    except Unavailable:
        return None
    return shell if shell and os.access(shell, os.X_OK) else None


@pytest.mark.skipif(
    debians_shell() is None,
    reason="the browser found is not Debian's chromium with chromium-headless-shell beside it "
    "(`make browser` installs both as root)",
)
async def test_a_headless_launch_without_a_set_browser_runs_the_headless_shell(
    options: OptionsFactory, launched: list[ChromeProcess], monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the service's headless default profile runs (issue 14: it starts on about half
    the CPU): the real binary, not /usr/bin's wrapper script, and a working DevTools."""
    monkeypatch.delenv(ENV_OVERRIDE, raising=False)
    opts = options("agent", headless=True, executable=None)
    browser = await launch(opts)
    launched.append(browser)
    assert browser.executable.kind == HEADLESS_SHELL
    assert os.readlink(f"/proc/{browser.pid}/exe") == debians_shell()
    version = await fetch_version(browser.cdp_url, headers=browser.auth_headers())
    assert "HeadlessChrome/" in version["Browser"]
    # It keeps no profile lock of its own: the launcher writes Chromium's for it, so a
    # second browser on the profile is refused as with Chromium, and a stop removes it.
    assert profile_lock_owner(opts.user_data_dir) == browser.pid
    with pytest.raises(Conflict) as err:
        await launch(options("agent", headless=True, user_data_dir=opts.user_data_dir))
    assert err.value.code == "profile_locked"
    await browser.stop()
    assert not os.path.lexists(opts.user_data_dir / "SingletonLock")


async def test_decoration_is_loaded_by_chrome_and_reapplied_on_relaunch(
    options: OptionsFactory,
) -> None:
    opts = options("work", color="#0066CC")
    browser = await launch(opts)
    try:
        prefs = await live_prefs(browser)
        assert pref(prefs, "profile.name") == "work"
        assert pref(prefs, "browser.theme.user_color2") == color_to_skcolor("#0066CC")
    finally:
        await browser.stop()
    after_first = read_decoration(opts.user_data_dir)
    assert after_first["name"] == "work"
    assert after_first["color"] == "#0066CC"
    assert after_first["exit_type"] == "Normal"
    chrome_keys = set(json.loads((opts.user_data_dir / "Default" / "Preferences").read_text()))

    # Relaunch on another port with a new colour: decoration is re-applied, Chrome's own
    # prefs from the first run survive it.
    opts.port = free_port()
    opts.color = "#00AA00"
    browser = await launch(opts)
    try:
        prefs = await live_prefs(browser)
        assert pref(prefs, "profile.name") == "work"
        assert pref(prefs, "browser.theme.user_color2") == color_to_skcolor("#00AA00")
    finally:
        await browser.stop()
    assert read_decoration(opts.user_data_dir)["color"] == "#00AA00"
    keys = set(json.loads((opts.user_data_dir / "Default" / "Preferences").read_text()))
    assert chrome_keys <= keys


async def test_stop_leaves_nothing_behind(options: OptionsFactory) -> None:
    browser = await launch(options())
    helpers = process_group_members(browser.pid)
    assert browser.pid in helpers and len(helpers) > 1  # renderers, GPU, zygotes
    await browser.stop()
    assert not browser.alive()
    assert browser.returncode() == 0  # Browser.close: a clean exit, not a signal
    assert not pid_alive(browser.pid)
    assert process_group_members(browser.pid) == []
    assert not port_in_use(browser.port)
    await browser.stop()  # idempotent
    assert await browser.wait_exit() == 0
    assert read_decoration(browser.user_data_dir)["exit_type"] == "Normal"


async def test_a_killed_browser_is_noticed(options: OptionsFactory) -> None:
    browser = await launch(options())
    cdp = await CDPClient.connect(browser.ws_url, headers=browser.auth_headers())
    try:
        target = (await cdp.send("Target.createTarget", {"url": "about:blank"}))["targetId"]
        session = (await cdp.send("Target.attachToTarget", {"targetId": target, "flatten": True}))[
            "sessionId"
        ]
        pending = asyncio.create_task(
            cdp.send(
                "Runtime.evaluate",
                {"expression": "new Promise(() => {})", "awaitPromise": True},
                session_id=session,
                timeout=60,
            )
        )
        os.kill(browser.pid, signal.SIGKILL)
        assert await asyncio.wait_for(browser.wait_exit(), 10) == -signal.SIGKILL
        assert not browser.alive()
        assert browser.returncode() == -signal.SIGKILL
        # The in-flight call fails as soon as the socket drops (well before its 60 s).
        with pytest.raises(Unavailable) as err:
            await asyncio.wait_for(pending, 10)
        assert err.value.code == "cdp_closed"
    finally:
        await cdp.close()
        await browser.stop()  # still cleans up the orphaned helpers
    assert process_group_members(browser.pid) == []
    assert not port_in_use(browser.port)


async def test_port_held_by_another_program(options: OptionsFactory) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        with pytest.raises(Conflict) as err:
            await launch(options("busy", port=port))
    assert err.value.code == "port_in_use"
    assert f"127.0.0.1:{port}" in err.value.message
    assert "and it is not a browser" in err.value.message
    assert "DevTools" not in err.value.message and "cdpPort" not in err.value.message
    assert f"pid {os.getpid()}" in err.value.message


async def test_port_held_by_an_orphan_browser_then_reset(
    options: OptionsFactory, chromium_path: str, tmp_path: Path
) -> None:
    orphan = await launch_raw_chromium(chromium_path, tmp_path / "orphan")
    try:
        with pytest.raises(Conflict) as err:
            await launch(options("agent", port=orphan.port))
        assert err.value.code == "port_in_use"
        assert "a browser (" in err.value.message and "already answers" in err.value.message
        assert err.value.hint is not None and "reset-profile" in err.value.hint

        killed = await asyncio.to_thread(kill_port_owner, orphan.port)
        assert killed == [orphan.proc.pid]
        assert await asyncio.to_thread(orphan.proc.wait, 10) is not None
        assert process_group_members(orphan.proc.pid) == []
        assert not port_in_use(orphan.port)
        assert await asyncio.to_thread(kill_port_owner, orphan.port) == []
    finally:
        await orphan.close()


async def test_profile_in_use_by_another_browser(
    options: OptionsFactory, launched: list[ChromeProcess]
) -> None:
    first = options("agent")
    browser = await launch(first)
    launched.append(browser)
    with pytest.raises(Conflict) as err:
        await launch(options("agent", user_data_dir=first.user_data_dir))
    assert err.value.code == "profile_locked"
    assert f"pid {browser.pid}" in err.value.message
    assert str(first.user_data_dir) in err.value.message
    assert browser.alive()


def write_script(path: Path, body: str) -> str:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


async def test_a_browser_that_dies_at_once_reports_code_and_output(
    options: OptionsFactory, tmp_path: Path
) -> None:
    with pytest.raises(Unavailable) as err:
        await launch(options("agent", executable="/bin/false"))
    assert err.value.code == "launch_failed"
    assert "exited with code 1" in err.value.message

    broken = write_script(
        tmp_path / "broken-chrome",
        'echo "FATAL: libnss3.so: cannot open shared object" >&2\nexit 127\n',
    )
    with pytest.raises(Unavailable) as err:
        await launch(options("agent", executable=broken))
    assert err.value.code == "launch_failed"
    assert "exited with code 127" in err.value.message
    assert "FATAL: libnss3.so: cannot open shared object" in err.value.message


async def test_a_browser_that_never_gets_ready_is_killed(
    options: OptionsFactory, tmp_path: Path
) -> None:
    pid_file = tmp_path / "pid"
    hang = write_script(
        tmp_path / "hanging-chrome", f'echo $$ > {pid_file}\necho "starting..."\nexec sleep 60\n'
    )
    with pytest.raises(Unavailable) as err:
        await launch(options("agent", executable=hang, ready_timeout=1.5))
    assert err.value.code == "launch_failed"
    assert "did not get ready" in err.value.message
    assert "starting..." in err.value.message
    pid = int(pid_file.read_text())
    assert process_group_members(pid) == []


async def test_missing_browser(options: OptionsFactory, tmp_path: Path) -> None:
    with pytest.raises(Unavailable) as err:
        await launch(options("agent", executable=str(tmp_path / "no-such-chrome")))
    assert err.value.code == "no_browser"


async def test_two_browsers_at_once(options: OptionsFactory) -> None:
    a, b = await asyncio.gather(launch(options("one")), launch(options("two", color="#00AA00")))
    try:
        assert a.pid != b.pid and a.port != b.port
        va, vb = await asyncio.gather(fetch_version(a.cdp_url, headers=a.auth_headers()), fetch_version(b.cdp_url, headers=b.auth_headers()))
        assert va["webSocketDebuggerUrl"] == a.ws_url
        assert vb["webSocketDebuggerUrl"] == b.ws_url
        assert a.ws_url != b.ws_url
    finally:
        await asyncio.gather(a.stop(), b.stop())
    assert not a.alive() and not b.alive()
    assert read_decoration(a.user_data_dir)["color"] == "#FF4500"
    assert read_decoration(b.user_data_dir)["color"] == "#00AA00"
