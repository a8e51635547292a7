"""Start the built bundle far enough to answer /health: as `serve` and as the tray app.

    python packaging/smoke_package.py dist/browserdeck

The tray run uses Qt's offscreen platform (CI has no display), which proves the Qt
libraries and plugins made it into the bundle; the panel opens as the main window
there. Each run gets a temp BROWSERDECK_HOME and a free port, and is stopped with
SIGTERM, which must end it cleanly (exit code 0).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.request import Request, urlopen


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def health(port: int) -> dict[str, object] | None:
    try:
        with urlopen(f"http://127.0.0.1:{port}/health", timeout=1) as resp:
            return dict(json.loads(resp.read()))
    except OSError:
        return None


def mcp_initialize(exe: Path, env: dict[str, str], port: int) -> str:
    """The bundle's own MCP server answers (the SDK is not in the bundle: issue 14)."""
    token = subprocess.run(
        [str(exe), "token"], env=env, capture_output=True, text=True, timeout=60, check=True
    ).stdout.strip()
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "smoke", "version": "1"},
        },
    }
    request = Request(
        f"http://127.0.0.1:{port}/mcp",
        data=json.dumps(body).encode(),
        headers={
            "Authorization": f"Bearer {token}",
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
        },
    )
    with urlopen(request, timeout=30) as resp:
        events = [line[6:] for line in resp.read().decode().splitlines() if line.startswith("data: ")]
    server = json.loads(events[0])["result"]["serverInfo"]
    if server.get("name") != "browserdeck":
        raise SystemExit(f"/mcp initialize answered {server!r}")
    return f"{server['name']} {server['version']}"


def run(exe: Path, args: list[str], env: dict[str, str], port: int) -> None:
    label = " ".join(["browserdeck", *args])
    proc = subprocess.Popen(
        [str(exe), *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        deadline = time.monotonic() + 60
        while (answer := health(port)) is None:
            if proc.poll() is not None:
                raise SystemExit(f"{label} exited with {proc.returncode}:\n{proc.stdout.read()}")
            if time.monotonic() > deadline:
                raise SystemExit(f"{label}: no /health answer within 60 s")
            time.sleep(0.2)
        print(f"ok: {label} answers /health: {answer}")
        if args == ["serve"]:
            print(f"ok: {label} answers /mcp initialize: {mcp_initialize(exe, env, port)}")
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise SystemExit(f"{label} did not exit within 30 s of SIGTERM") from None
        output = proc.stdout.read() if proc.stdout else ""
        if proc.stdout:
            proc.stdout.close()
        if code != 0:
            raise SystemExit(f"{label} exited with {code} after SIGTERM:\n{output}")


def main() -> int:
    bundle = Path(sys.argv[1] if len(sys.argv) > 1 else "dist/browserdeck")
    exe = bundle / ("browserdeck.exe" if os.name == "nt" else "browserdeck")
    if not exe.exists():
        raise SystemExit(f"no bundle at {exe}: run `make package` first")
    version = subprocess.run(
        [str(exe), "--version"], capture_output=True, text=True, timeout=60, check=True
    ).stdout.strip()
    print(f"ok: {version}")
    with tempfile.TemporaryDirectory(prefix="bd-smoke-") as home:
        env = {
            **os.environ,
            "BROWSERDECK_HOME": home,
            "QT_QPA_PLATFORM": "offscreen",
            "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
        }
        for args in (["serve"], ["tray"]):
            port = free_port()
            # Every listener on a free port: never the defaults, which a real browserdeck
            # on this machine may hold.
            config = Path(home) / "config" / "config.json"
            config.parent.mkdir(parents=True, exist_ok=True)
            config.write_text(
                json.dumps(
                    {
                        "controlPort": port,
                        "relayPort": free_port(),
                        "profiles": {
                            "agent": {"driver": "managed", "cdpPort": free_port()},
                            "chrome": {"driver": "extension", "color": "#00AA00"},
                        },
                    }
                )
            )
            run(exe, args, env, port)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
