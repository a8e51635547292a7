"""Issue 14 benchmark: start-up and shutdown of `browserdeck mcp` and of CLI calls, beside peers.

MCP, through one client (the official Python SDK over stdio), a fresh server process per
round, the servers interleaved within each round (order alternating):

  * browserdeck, no service running: `browserdeck mcp` starts the headless service
    (which outlives it on purpose, docs/mcp.md); between rounds that service is stopped
    with SIGTERM, and how long it takes to close its browser cleanly (Browser.close,
    cookies kept) is its own row;
  * browserdeck, service running: the same, with a `browserdeck serve --headless`
    started once for the run (its browser stays warm between rounds);
  * Playwright MCP and chrome-devtools-mcp (npm, outside the repo: bench/peers.py), each launching its
    own headless Chromium from the same binary: the one browserdeck launches for a headless
    profile (`headless_browser()`: Debian's headless shell beside Debian's chromium), so
    every side runs the same Chromium; the run prints which.

Measured per round: spawn + initialize (`Client` entered), the first navigate, and
shutdown (the client leaves; until the server process has exited), plus leftovers: the
server's descendant processes still alive 1 s after it exited (a service that outlives
the client on purpose is not counted; it is reported apart).

CLI, whole processes, alternated in one run, with a service and a tab on a 40-element
form: our `tabs`, `snapshot` and `click <ref>` beside agent-browser 0.41.2's `tab list`,
`snapshot` and `click @ref` (its native CLI and daemon). `python -c pass` is the floor.

Peers are installed outside the repo:

    make peers     # npm, into ../peers beside the checkout (BROWSERDECK_PEERS moves it)

    .venv/bin/python bench/bench_startup.py [--rounds 10] [--cli-rounds 30] [--only mcp|cli]

Medians and min-max in ms; read the ratios on a busy machine.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import peers  # noqa: E402
from tests.mcp.site import PAGES, serve_site  # noqa: E402
from tests.support.browsers import find_chromium  # noqa: E402
from tests.support.net import free_port  # noqa: E402

from browserdeck.chrome.executables import find_browser  # noqa: E402
from browserdeck.errors import Unavailable  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402

PEERS = peers.MODULES
AGENT_BROWSER = PEERS / "agent-browser" / "bin" / "agent-browser-linux-x64"
PY = str(ROOT / ".venv" / "bin" / "python")
BD = str(ROOT / ".venv" / "bin" / "browserdeck")

# A 40-element form: 20 labelled fields, 10 checkboxes, 10 buttons.
PAGES["/form40.html"] = (
    "<!doctype html><html><head><meta charset='utf-8'><title>Form 40</title></head><body><form>"
    + "".join(f"<label>Field {i} <input name='f{i}'></label>" for i in range(20))
    + "".join(f"<label><input type='checkbox' name='c{i}'> Option {i}</label>" for i in range(10))
    + "".join(f"<button type='button'>Action {i}</button>" for i in range(10))
    + "</form></body></html>"
)


def ms(samples: list[float]) -> str:
    if not samples:
        return "-"
    return f"{statistics.median(samples) * 1000:.0f} ({min(samples) * 1000:.0f}-{max(samples) * 1000:.0f})"


def med(samples: list[float]) -> float | None:
    return statistics.median(samples) if samples else None


def headless_browser() -> str | None:
    """The binary every side runs headless: ``BROWSERDECK_CHROME`` if set, else what
    browserdeck itself launches for a headless managed profile (Debian's headless shell
    where the search picks Debian's chromium, chrome/executables.py), given to the peers that take a path as well."""
    if os.environ.get("BROWSERDECK_CHROME"):
        return find_chromium()
    try:
        return find_browser(headless=True).path
    except Unavailable:
        return find_chromium()


def write_config(home: Path, chromium: str) -> None:
    """A config on free ports, without the extension profile, via the real config module."""
    code = (
        "import os, sys\n"
        "from browserdeck import config\n"
        "cfg = config.default_config()\n"
        "cfg.control_port = int(sys.argv[1]); cfg.relay_port = int(sys.argv[2])\n"
        "cfg.profiles['agent'].cdp_port = int(sys.argv[3])\n"
        "cfg.profiles.pop('chrome', None)\n"
        "cfg.no_sandbox = os.geteuid() == 0\n"
        "config.save(cfg)\n"
    )
    subprocess.run(
        [PY, "-c", code, str(free_port()), str(free_port()), str(free_port())],
        env=ours_env(home, chromium),
        check=True,
    )


def _running(proc: psutil.Process) -> bool:
    """Alive and not a zombie; one that exits while it is looked at is not."""
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def ours_env(home: Path, chromium: str) -> dict[str, str]:
    return {
        "BROWSERDECK_HOME": str(home),
        "BROWSERDECK_CHROME": chromium,
        "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
    }


def instance_pid(home: Path) -> int | None:
    try:
        return int(json.loads((home / "state" / "instance.json").read_text())["pid"])
    except (OSError, ValueError, KeyError):
        return None


def stop_service(home: Path) -> float | None:
    """SIGTERM the service of ``home``; seconds until it exited (its browser closed)."""
    pid = instance_pid(home)
    if pid is None or not psutil.pid_exists(pid):
        return None
    proc = psutil.Process(pid)
    start = time.perf_counter()
    proc.send_signal(signal.SIGTERM)
    # Until it has exited: a zombie counts. The service's parent (the `browserdeck mcp`
    # that started it) is gone, so init reaps it, and an init that reaps late (1.7 s on a
    # Firecracker VM's) would otherwise be timed as our stop.
    deadline = start + 30
    while time.perf_counter() < deadline:
        try:
            if proc.status() == psutil.STATUS_ZOMBIE:
                break
        except psutil.NoSuchProcess:
            break
        time.sleep(0.002)
    else:
        proc.kill()
        return None
    return time.perf_counter() - start


def start_service(home: Path, chromium: str) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [BD, "serve", "--headless"],
        env=ours_env(home, chromium),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    sock = home / "run" / "api.sock"
    deadline = time.monotonic() + 60
    while not sock.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return proc


class McpSide:
    def __init__(
        self,
        name: str,
        params: StdioServerParameters,
        *,
        before: Callable[[], None] | None = None,
        lingering: Callable[[], int | None] | None = None,
    ) -> None:
        self.name = name
        self.params = params
        self.before = before  # run before each round (ours without a service: stop it)
        self.lingering = lingering  # the pid of a service that outlives the client on purpose
        self.times: dict[str, list[float]] = {}
        self.leftovers: list[int] = []
        self.outliving: list[int] = []

    def add(self, key: str, seconds: float) -> None:
        self.times.setdefault(key, []).append(seconds)


def _new_child(before: set[int]) -> psutil.Process | None:
    me = psutil.Process()
    for child in me.children():
        if child.pid not in before:
            return child
    return None


async def mcp_round(side: McpSide, url: str) -> None:
    if side.before is not None:
        side.before()
    before = {c.pid for c in psutil.Process().children()}
    start = time.perf_counter()
    stack = contextlib.AsyncExitStack()
    client = await stack.enter_async_context(Client(side.params, read_timeout_seconds=120))
    side.add("spawn + initialize", time.perf_counter() - start)
    server = _new_child(before)
    t = time.perf_counter()
    try:
        if side.name == "chrome-devtools-mcp":
            # It names the page in every call: list_pages (which launches the browser) first.
            listed = await client.call_tool("list_pages", {})
            text = "\n".join(c.text for c in listed.content if c.type == "text")
            found = re.search(r"(\d+):", text)
            args = {"pageId": int(found.group(1)) if found else 1, "type": "url", "url": url}
            result = await client.call_tool("navigate_page", args)
        else:
            result = await client.call_tool("browser_navigate", {"url": url})
        side.add("first navigate", time.perf_counter() - t)
        if result.is_error:
            raise RuntimeError(f"{side.name}: navigate failed: {result.content}")
    except BaseException:
        await stack.aclose()  # else the client's task group outlives the round and hangs
        raise
    owned: list[psutil.Process] = []
    if server is not None:
        with contextlib.suppress(psutil.Error):
            owned = server.children(recursive=True)
    keep = side.lingering() if side.lingering else None
    spared: set[int] = set()
    if keep is not None and psutil.pid_exists(keep):
        spared = {keep} | {p.pid for p in psutil.Process(keep).children(recursive=True)}
    t = time.perf_counter()
    await stack.aclose()
    if server is not None:
        with contextlib.suppress(psutil.Error):
            server.wait(30)
    side.add("shutdown", time.perf_counter() - t)
    await asyncio.sleep(1.0)
    alive = [p for p in owned if _running(p)]
    side.leftovers.append(len([p for p in alive if p.pid not in spared]))
    side.outliving.append(len([p for p in alive if p.pid in spared]))
    for p in alive:
        if p.pid not in spared:
            with contextlib.suppress(psutil.Error):
                p.kill()


def peer_params(binary: Path, args: list[str], cwd: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=str(binary),
        args=args,
        cwd=str(cwd),
        env={"PATH": os.environ.get("PATH", ""), "HOME": str(cwd)},
    )


async def run_mcp(rounds: int, chromium: str, site: str, tmp: Path) -> None:
    cold = tmp / "cold"
    warm = tmp / "warm"
    for home in (cold, warm):
        home.mkdir()
        write_config(home, chromium)
    stops: list[float] = []

    def stop_cold() -> None:
        took = stop_service(cold)
        if took is not None:
            stops.append(took)

    work = tmp / "work"
    work.mkdir()
    sides = [
        McpSide(
            "browserdeck, no service",
            StdioServerParameters(
                command=BD, args=["mcp"], env=ours_env(cold, chromium), cwd=str(work)
            ),
            before=stop_cold,
            lingering=lambda: instance_pid(cold),
        ),
        McpSide(
            "browserdeck, service running",
            StdioServerParameters(
                command=BD, args=["mcp"], env=ours_env(warm, chromium), cwd=str(work)
            ),
            lingering=lambda: instance_pid(warm),
        ),
    ]
    pw = PEERS / ".bin" / "playwright-mcp"
    if pw.exists():
        cwd = tmp / "pw"
        cwd.mkdir()
        flags = ["--headless", "--isolated", "--no-sandbox", "--executable-path", chromium]
        sides.append(McpSide("Playwright MCP", peer_params(pw, flags, cwd)))
    else:
        print(f"(Playwright MCP skipped: no {pw})")
    cdt = PEERS / ".bin" / "chrome-devtools-mcp"
    if cdt.exists():
        cwd = tmp / "cdt"
        cwd.mkdir()
        flags = [
            "--headless", "--isolated", "--executablePath", chromium,
            "--chrome-arg=--no-sandbox", "--no-usage-statistics",
        ]  # fmt: skip
        sides.append(McpSide("chrome-devtools-mcp", peer_params(cdt, flags, cwd)))
    else:
        print(f"(chrome-devtools-mcp skipped: no {cdt})")
    service = start_service(warm, chromium)
    try:
        for i in range(rounds + 1):  # round 0 warms disk caches and is not counted
            order = sides if i % 2 else list(reversed(sides))
            for side in order:
                saved = {k: list(v) for k, v in side.times.items()}
                lefts, outs = list(side.leftovers), list(side.outliving)
                await mcp_round(side, f"{site}/form40.html?r={i}")
                if i == 0:
                    side.times, side.leftovers, side.outliving = saved, lefts, outs
            if i == 0:
                stops.clear()
            print(f"  round {i}/{rounds} done", flush=True)
        stop_cold()
    finally:
        stop_service(warm)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(service.pid, signal.SIGKILL)
    pw_side = next((s for s in sides if s.name == "Playwright MCP"), None)
    cdt_side = next((s for s in sides if s.name == "chrome-devtools-mcp"), None)
    print(f"\nMCP over stdio, {rounds} rounds, median (min-max) ms")
    print(f"{'':34}" + "".join(f"{s.name[:26]:>28}" for s in sides))
    for key in ("spawn + initialize", "first navigate", "shutdown"):
        print(f"{key:34}" + "".join(f"{ms(s.times.get(key, [])):>28}" for s in sides))
    print(f"{'leftover processes (max)':34}" + "".join(
        f"{max(s.leftovers, default=0):>28}" for s in sides))  # fmt: skip
    print(f"{'service outliving the client':34}" + "".join(
        f"{max(s.outliving, default=0):>28}" for s in sides))  # fmt: skip
    print(f"service stop incl. Browser.close (no-service side): {ms(stops)}")
    for ref_name, ref in (("Playwright MCP", pw_side), ("chrome-devtools-mcp", cdt_side)):
        if ref is None:
            continue
        for key in ("spawn + initialize", "first navigate", "shutdown"):
            base = med(ref.times.get(key, []))
            cells = []
            for side in sides[:2]:
                value = med(side.times.get(key, []))
                cells.append(f"{side.name}: {value / base:.2f}x" if value and base else "-")
            print(f"  vs {ref_name:20} {key:20} " + "   ".join(cells))


CPU: dict[str, list[float]] = {}


def timed(cmd: list[str], env: dict[str, str], name: str = "") -> tuple[float, str]:
    """Wall time of the whole process; its CPU time (user + system) goes to CPU[name]:
    less bent by a loaded machine than the wall time."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    took = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if name:
        CPU.setdefault(name, []).append(
            after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        )
    if done.returncode != 0:
        raise RuntimeError(f"{cmd[:3]} failed: {done.stderr or done.stdout}")
    return took, done.stdout


def run_cli(rounds: int, chromium: str, site: str, tmp: Path) -> None:
    home = tmp / "cli"
    home.mkdir()
    write_config(home, chromium)
    env = {**ours_env(home, chromium)}
    service = start_service(home, chromium)
    ab_home = tmp / "ab"
    ab_home.mkdir()
    ab_env = {"PATH": os.environ.get("PATH", ""), "HOME": str(ab_home)}
    url = f"{site}/form40.html"
    times: dict[str, list[float]] = {}
    try:
        timed([BD, "open", url], env)
        have_ab = AGENT_BROWSER.exists()
        if have_ab:
            timed([str(AGENT_BROWSER), "open", url, "--executable-path", chromium,
                   "--args", "--no-sandbox"], ab_env)  # fmt: skip
        else:
            print(f"(agent-browser skipped: no {AGENT_BROWSER})")
        for i in range(rounds + 1):
            runs: list[tuple[str, list[str], dict[str, str]]] = [
                ("python -c pass", [PY, "-c", "pass"], env),
                ("browserdeck tabs", [BD, "tabs"], env),
                ("browserdeck snapshot", [BD, "snapshot"], env),
            ]
            if have_ab:
                runs += [
                    ("agent-browser tab list", [str(AGENT_BROWSER), "tab", "list"], ab_env),
                    ("agent-browser snapshot", [str(AGENT_BROWSER), "snapshot"], ab_env),
                ]
            order = runs if i % 2 else list(reversed(runs))
            outs: dict[str, str] = {}
            for name, cmd, e in order:
                took, out = timed(cmd, e, name if i else "")
                outs[name] = out
                if i:
                    times.setdefault(name, []).append(took)
            ours_ref = re.search(r'checkbox "Option 3"[^\n]*\[ref=(\w+)\]', outs["browserdeck snapshot"])
            clicks: list[tuple[str, list[str], dict[str, str]]] = []
            if ours_ref:
                clicks.append(("browserdeck click", [BD, "click", ours_ref.group(1)], env))
            if have_ab:
                m = re.search(r"checkbox[^\n]*Option 3\b[^\n]*ref=@?(\w+)", outs["agent-browser snapshot"])
                if not m:
                    print("(agent-browser: no ref for Option 3 in its snapshot:",
                          outs["agent-browser snapshot"][:400], ")")
                if m:
                    clicks.append(("agent-browser click", [str(AGENT_BROWSER), "click", "@" + m.group(1)], ab_env))
            for name, cmd, e in clicks if i % 2 else list(reversed(clicks)):
                took, _ = timed(cmd, e, name if i else "")
                if i:
                    times.setdefault(name, []).append(took)
    finally:
        if AGENT_BROWSER.exists():
            subprocess.run([str(AGENT_BROWSER), "close", "--all"], env=ab_env,
                           capture_output=True, timeout=60)  # fmt: skip
        stop_service(home)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(service.pid, signal.SIGKILL)
    print(f"\nCLI calls as whole processes, service running, {rounds} rounds, median (min-max) ms")
    print(f"  {'':28} {'wall':>20} {'CPU (user+sys)':>20}")
    for name in sorted(times, key=lambda n: (n.split()[0], n)):
        print(f"  {name:28} {ms(times[name]):>20} {ms(CPU.get(name, [])):>20}")
    for ours, theirs in (("browserdeck tabs", "agent-browser tab list"),
                         ("browserdeck snapshot", "agent-browser snapshot"),
                         ("browserdeck click", "agent-browser click")):  # fmt: skip
        a, b = med(times.get(ours, [])), med(times.get(theirs, []))
        if a and b:
            print(f"  {ours:28} {a / b:.1f}x agent-browser's")


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--cli-rounds", type=int, default=30)
    parser.add_argument("--only", choices=("mcp", "cli"))
    args = parser.parse_args()
    chromium = headless_browser()
    if chromium is None:
        print("no Chromium found", file=sys.stderr)
        return 2
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; every side runs {chromium}")
    # A pip install compiles the package's bytecode; a worktree under PYTHONDONTWRITEBYTECODE
    # would compile every edited module from source on every CLI call instead.
    subprocess.run([PY, "-m", "compileall", "-q", str(ROOT / "app" / "browserdeck")], check=True)
    tmp = Path(tempfile.mkdtemp(prefix="bench-startup-"))
    with serve_site() as site:
        if args.only != "cli":
            await run_mcp(args.rounds, chromium, site, tmp)
        if args.only != "mcp":
            await asyncio.to_thread(run_cli, args.cli_rounds, chromium, site, tmp)
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
