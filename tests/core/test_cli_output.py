"""Item 12 of issue 15: CLI output a person can use (against a real `browserdeck serve`)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.core.test_cli import cli, served  # noqa: F401  (the fixture)


def test_open_evaluate_and_positional_names(
    served: tuple[dict[str, str], subprocess.Popen[str]],  # noqa: F811
) -> None:
    env, _ = served
    opened = cli(env, "open", "data:text/html,<title>Hello CLI</title><p>hi</p>")
    assert opened.returncode == 0, opened.stderr
    # Printed once the page loaded: its real title and URL, not "(untitled)" and "".
    assert "Hello CLI" in opened.stdout and "(untitled)" not in opened.stdout
    assert "data:text/html" in opened.stdout

    # evaluate takes the function as an argument and prints only its result.
    result = cli(env, "evaluate", "() => 6 * 7")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "42"
    old = cli(env, "evaluate", "--fn", "() => 'still' + ' works'")
    assert old.stdout.strip() == '"still works"'

    created = cli(env, "create-profile", "scratch")
    assert created.returncode == 0, created.stderr
    assert "created scratch" in created.stdout
    assert cli(env, "delete-profile", "scratch").returncode == 0
    nameless = cli(env, "create-profile")
    assert nameless.returncode != 0 and "give its name" in nameless.stderr

    status = cli(env, "status")
    assert "((" not in status.stdout and "))" not in status.stdout


def test_paths_lists_tokens_and_screenshots(bd_home: Path) -> None:
    env = dict(os.environ, BROWSERDECK_HOME=str(bd_home))
    env.pop("BROWSERDECK_TOKEN", None)
    out = cli(env, "paths")
    assert out.returncode == 0, out.stderr
    keys = [line.split("  ")[0].strip() for line in out.stdout.splitlines()]
    for key in ("config", "logs", "api token", "relay token", "screenshots"):
        assert key in keys, out.stdout
    assert str(bd_home) in out.stdout
