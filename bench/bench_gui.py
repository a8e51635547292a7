"""Issue 5 benchmark: the tray app's launch time and idle memory, next to `browserdeck serve`.

Under Xvfb with trayer as the system tray (both started here on a free display):
  * launch -> tray icon embedded in the tray (the app's ``tray-visible`` trace event,
    emitted once the icon has a geometry in the tray), median of --runs;
  * launch -> first paint of the status panel (``browserdeck tray --panel``);
  * launch -> service ready, tray app vs `browserdeck serve` (its "serving" line);
  * idle memory after --idle seconds with one managed profile running: RSS of the app
    process and of its Playwright driver (node), tray app vs `browserdeck serve` run at
    the same time; the difference is the GUI's share (target: under 120 MB).

Each app runs as a separate process, as users run it, with BROWSERDECK_HOME in a temp
dir and free ports. Prints one table.

    .venv/bin/python bench/bench_gui.py [--runs 5] [--idle 300]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.gui.xdisplay import missing_tools, xvfb_with_tray  # noqa: E402
from tests.support.browsers import find_chromium  # noqa: E402
from tests.support.net import free_port  # noqa: E402


def write_config(home: Path, *, start_default: bool) -> int:
    """A config on free ports in ``home``; returns the control port."""
    from browserdeck import config

    cfg = config.default_config()
    cfg.control_port = free_port()
    cfg.relay_port = free_port()
    cfg.profiles["agent"].cdp_port = free_port()
    cfg.start_default_profile = start_default
    cfg.headless = True  # the browser's own memory is not what this measures
    cfg.no_sandbox = os.geteuid() == 0
    config.save(cfg, home / "config" / "config.json")
    return cfg.control_port


class Proc:
    """A browserdeck process whose stdout lines are timestamped as they arrive."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self.t0 = time.time()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "browserdeck", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        self.lines: list[tuple[float, str]] = []
        self.cond = threading.Condition()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            with self.cond:
                self.lines.append((time.time(), line.strip()))
                self.cond.notify_all()
        with self.cond:
            self.lines.append((time.time(), "<eof>"))
            self.cond.notify_all()

    def wait_for(self, match: Callable[[str], bool], timeout: float = 60.0) -> float:
        """Seconds from launch to the first stdout line that matches."""
        deadline = time.time() + timeout
        with self.cond:
            while True:
                for stamp, line in self.lines:
                    if match(line):
                        return stamp - self.t0
                    if line == "<eof>":
                        raise RuntimeError(f"process exited early: {self.lines[-10:]}")
                left = deadline - time.time()
                if left <= 0:
                    raise TimeoutError(f"nothing matched within {timeout} s: {self.lines[-10:]}")
                self.cond.wait(left)

    def event(self, name: str, timeout: float = 60.0) -> float:
        def match(line: str) -> bool:
            if not line.startswith("{"):
                return False
            try:
                return bool(json.loads(line).get("event") == name)
            except ValueError:
                return False

        return self.wait_for(match, timeout)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def driver_pids(parent: int) -> list[int]:
    """Playwright's driver: a node child process of the app."""
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == parent and ("node" in cmdline or "playwright" in cmdline):
            out.append(int(entry.name))
    return out


def launch_runs(env: dict[str, str], home: Path, runs: int) -> dict[str, list[float]]:
    results: dict[str, list[float]] = {"tray": [], "tray_ready": [], "panel": [], "serve": []}
    for _ in range(runs):
        write_config(home, start_default=False)
        app = Proc(["tray"], env)
        try:
            results["tray"].append(app.event("tray-visible"))
            results["tray_ready"].append(app.event("service-started"))
        finally:
            app.stop()
        app = Proc(["tray", "--panel"], env)
        try:
            results["panel"].append(app.event("panel-painted"))
            app.event("service-started")
        finally:
            app.stop()
        serve = Proc(["serve"], env)
        try:
            results["serve"].append(serve.wait_for(lambda line: "serving" in line))
        finally:
            serve.stop()
    return results


def idle_memory(
    env_tray: dict[str, str], env_serve: dict[str, str], homes: tuple[Path, Path], idle: float
) -> dict[str, float]:
    from browserdeck.secrets import tokens as secrets  # noqa: F401  (tokens are created by the apps themselves)

    write_config(homes[0], start_default=True)
    write_config(homes[1], start_default=True)
    tray = Proc(["tray"], env_tray)
    serve = Proc(["serve"], env_serve)
    try:
        tray.event("service-started")
        serve.wait_for(lambda line: "serving" in line)
        # startDefaultProfile: wait until each has its managed browser and its driver.
        deadline = time.time() + 60
        while time.time() < deadline and not (
            driver_pids(tray.proc.pid) and driver_pids(serve.proc.pid)
        ):
            time.sleep(0.2)
        time.sleep(idle)
        out = {
            "tray_app": rss_mb(tray.proc.pid),
            "tray_driver": sum(rss_mb(p) for p in driver_pids(tray.proc.pid)),
            "serve_app": rss_mb(serve.proc.pid),
            "serve_driver": sum(rss_mb(p) for p in driver_pids(serve.proc.pid)),
        }
    finally:
        tray.stop()
        serve.stop()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--idle",
        type=float,
        default=300.0,
        help="seconds of idling before memory is read (default 300)",
    )
    args = parser.parse_args()
    if missing_tools():
        print(f"needs {', '.join(missing_tools())} (make system-deps)", file=sys.stderr)
        return 2
    chrome = find_chromium()
    if chrome is None:
        print("no Chromium found", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="bench-gui-") as tmp, xvfb_with_tray() as x:
        base = {
            **os.environ,
            **x.env(),
            "BROWSERDECK_GUI_TRACE": "1",
            "PYTHONUNBUFFERED": "1",
            "BROWSERDECK_CHROME": chrome,
            "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
        }
        base.pop("BROWSERDECK_TOKEN", None)
        homes = [Path(tmp) / name for name in ("launch", "tray", "serve")]
        envs = [{**base, "BROWSERDECK_HOME": str(h)} for h in homes]
        launch = launch_runs(envs[0], homes[0], args.runs)
        memory = idle_memory(envs[1], envs[2], (homes[1], homes[2]), args.idle)

    def med(key: str) -> float:
        return statistics.median(launch[key])

    gui_share = memory["tray_app"] - memory["serve_app"]
    rows = [
        ("launch → tray icon embedded", f"{med('tray'):.2f} s", "—", ""),
        ("launch → first panel paint", f"{med('panel'):.2f} s", "—", ""),
        (
            "launch → service ready",
            f"{med('tray_ready'):.2f} s",
            f"{med('serve'):.2f} s",
            f"{med('tray_ready') / med('serve'):.2f}×",
        ),
        (
            f"idle RSS after {args.idle:.0f} s: app process",
            f"{memory['tray_app']:.0f} MB",
            f"{memory['serve_app']:.0f} MB",
            f"+{gui_share:.0f} MB (GUI share)",
        ),
        (
            "idle RSS: Playwright driver (node)",
            f"{memory['tray_driver']:.0f} MB",
            f"{memory['serve_driver']:.0f} MB",
            "",
        ),
        (
            "idle RSS: app + driver",
            f"{memory['tray_app'] + memory['tray_driver']:.0f} MB",
            f"{memory['serve_app'] + memory['serve_driver']:.0f} MB",
            "",
        ),
    ]
    print(
        f"\nbrowserdeck tray app vs `browserdeck serve` — Xvfb + trayer, one managed profile "
        f"running (headless), medians of {args.runs} launches\n"
    )
    widths = [
        max(len(r[i]) for r in [*rows, ("metric", "tray app", "serve", "difference")])
        for i in range(4)
    ]
    header = ("metric", "tray app", "serve (no GUI)", "difference")
    widths = [max(w, len(h)) for w, h in zip(widths, header, strict=True)]
    print("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)))
    verdict = "OK" if gui_share < 120 else "OVER"
    print(f"\nGUI share of idle memory: {gui_share:.0f} MB (target < 120 MB): {verdict}")
    print("samples (s): " + json.dumps({k: [round(v, 3) for v in vs] for k, vs in launch.items()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
