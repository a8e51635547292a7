"""Third-party Node CDP clients (puppeteer-core, playwright-core) for tests.

``make node-clients`` (part of ``make test``) installs the versions pinned in
tests/node/package.json from npm into ``.cache/node-clients`` (gitignored). Tests ask
here for the ``node_modules`` folder and run a script with ``run_node``:

    modules = node_modules()          # skips (fails in CI) when they are not installed
    result = await run_node(script, modules, env={"WS": url}, timeout=60)

A machine without npm gets a skip that says so; in CI (``CI`` set) a missing install is a
failure, because the clients must run there.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
NODE_CLIENTS = REPO / ".cache" / "node-clients"
PACKAGES = ("puppeteer-core", "playwright-core")


def _missing(why: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{why} (CI must run the Node clients: `make node-clients`)")
    pytest.skip(why)


def node_modules() -> Path:
    """The node_modules folder holding puppeteer-core and playwright-core, or skip/fail."""
    override = os.environ.get("BROWSERDECK_NODE_MODULES")
    folder = Path(override) if override else NODE_CLIENTS / "node_modules"
    if shutil.which("node") is None:
        _missing("node is not installed, so the Puppeteer/Playwright-for-Node tests cannot run")
    for package in PACKAGES:
        if not (folder / package / "package.json").is_file():
            if shutil.which("npm") is None:
                _missing(f"npm is not installed, so {package} could not be installed")
            _missing(f"{package} is not installed in {folder}: run `make node-clients`")
    return folder


async def run_node(
    script: str,
    modules: Path,
    *,
    env: dict[str, str] | None = None,
    timeout: float = 90.0,
) -> Any:
    """Run ``script`` (an ES module body) with ``modules`` on NODE_PATH.

    The script reports by printing one JSON line starting with ``RESULT `` (its value is
    returned); anything on stderr or a non-zero exit is raised with the output.
    """
    full_env = {**os.environ, **(env or {}), "NODE_PATH": str(modules)}
    proc = await asyncio.create_subprocess_exec(
        "node",
        "--input-type=commonjs",
        "-e",
        script,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=full_env,
        start_new_session=True,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        proc.kill()
        out, err = await proc.communicate()
        raise AssertionError(
            f"the node script did not finish within {timeout:g} s (a hang)\n"
            f"stdout:\n{out.decode(errors='replace')[-4000:]}\n"
            f"stderr:\n{err.decode(errors='replace')[-4000:]}"
        ) from None
    text = out.decode(errors="replace")
    if proc.returncode != 0:
        raise AssertionError(
            f"node exited with {proc.returncode}\nstdout:\n{text[-4000:]}\n"
            f"stderr:\n{err.decode(errors='replace')[-4000:]}"
        )
    for line in reversed(text.splitlines()):
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT ") :])
    raise AssertionError(f"the node script printed no RESULT line\nstdout:\n{text[-4000:]}")


__all__ = ["NODE_CLIENTS", "node_modules", "run_node"]
