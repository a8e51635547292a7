"""The network commands of the CLI against a real `browserdeck serve`, as a user runs
them: route, routes, unroute, network-state, har-start, har-stop, requests, request."""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path

from tests.core.test_cli import cli
from tests.core.test_cli import served as served
from tests.network.site import SECRET, NetSite


def _until(env: dict[str, str], target: str, text: str) -> str:
    deadline = time.monotonic() + 10
    while True:
        snap = cli(env, "snapshot", "-t", target).stdout
        if text in snap or time.monotonic() > deadline:
            assert text in snap, snap
            return snap
        time.sleep(0.1)


def test_the_network_commands(
    served: tuple[dict[str, str], subprocess.Popen[str]], site: NetSite
) -> None:
    env, _ = served
    target = json.loads(cli(env, "open", "about:blank", "--json").stdout)["targetId"]
    added = cli(
        env, "route", "**/api/user", "--body", '{"name": "Cli"}', "--content-type",
        "application/json", "--header", "X-Mock: yes, really", "-t", target,
    )
    assert added.returncode == 0, added.stderr
    assert added.stdout.startswith("route added: **/api/user (status=200"), added.stdout
    assert "headers=X-Mock: yes, really" in added.stdout  # a comma stays in its header
    cli(env, "navigate", site.url("/app.html"), "-t", target)
    _until(env, target, "User: Cli")
    listed = cli(env, "routes", "-t", target)
    assert re.search(r"^1\. \*\*/api/user .* — 1 hit\(s\)$", listed.stdout, re.M), listed.stdout

    assert "recording a HAR of this tab" in cli(env, "har-start", "-t", target).stdout
    cli(env, "navigate", site.url("/delayed.html"), "-t", target)
    _until(env, target, "Got: yes")
    stopped = cli(env, "har-stop", "-t", target)
    path = Path(re.search(r"HAR written: (\S+\.har)", stopped.stdout).group(1))  # type: ignore[union-attr]
    assert path.is_absolute() and SECRET not in path.read_text(encoding="utf-8")

    requests = cli(env, "requests", "--resource-type", "fetch", "-t", target)
    number = re.search(r"^#(\d+) GET 200 \S+/api/slow", requests.stdout, re.M)
    assert number is not None, requests.stdout
    detail = cli(env, "request", number.group(1), "--part", "request-headers", "-t", target)
    assert "Authorization: [redacted]" in detail.stdout, detail.stdout

    offline = cli(env, "network-state", "offline", "-t", target)
    assert offline.stdout.strip() == "network is now offline", offline.stdout
    cli(env, "network-state", "online", "-t", target)
    removed = cli(env, "unroute", "-t", target)
    assert "removed 1 route(s)" in removed.stdout and "no active routes" in removed.stdout
    bad = cli(env, "route", "(", "--regex", "-t", target)
    assert bad.returncode == 1 and "not a regular expression" in bad.stderr
    assert "Traceback" not in bad.stderr
