"""`browserdeck state save|load|list|rm` against a real `serve` (issue 36).

Loading into the user's own Chrome (the extension profile) needs their yes: `serve` has
no one to ask, so the CLI asks at its terminal; without a terminal (a script, an agent's
shell pipe) it is refused.
"""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

from tests.core.test_cli import cli, served

_ = served


def _on_a_terminal(env: dict[str, str], answer: str, *args: str) -> str:
    """The CLI run with a terminal as stdin, ``answer`` typed ahead (the terminal keeps it
    until the CLI asks). Its output: the prompt goes to stdout, a pipe here."""
    main, child = pty.openpty()
    try:
        os.write(main, answer.encode() + b"\n")
        done = subprocess.run(
            [sys.executable, "-m", "browserdeck", *args], env=env, stdin=child,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120,
        )
        return done.stdout
    finally:
        os.close(child)
        os.close(main)


def test_state_commands_round_trip(
    served: tuple[dict[str, str], subprocess.Popen[str]], bd_home: Path
) -> None:
    env, _proc = served
    saved = cli(env, "state", "save", "mine")
    assert saved.returncode == 0, saved.stderr
    assert saved.stdout.startswith("saved mine from agent: ") and "cookies" in saved.stdout
    listed = cli(env, "state", "list")
    assert listed.returncode == 0 and listed.stdout.startswith("mine  (from agent)")
    assert (bd_home / "data" / "auth-states" / "mine.json").exists()
    loaded = cli(env, "state", "load", "mine")  # into a managed profile: nobody is asked
    assert loaded.returncode == 0 and "loaded mine into agent" in loaded.stdout, loaded.stderr

    # The user's own Chrome, from a script: refused, nothing asked.
    refused = subprocess.run(
        [sys.executable, "-m", "browserdeck", "state", "load", "mine", "--profile", "chrome"],
        env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120,
    )
    assert refused.returncode == 1 and "needs the user's yes" in refused.stderr, refused.stderr
    # At a terminal the CLI asks; "n" keeps the refusal, "y" gets past it (the extension is
    # not connected here, so the load then fails for that reason, not for consent).
    said_no = _on_a_terminal(env, "n", "state", "load", "mine", "--profile", "chrome")
    assert "[y/N]" in said_no and "you said no" in said_no, said_no
    said_yes = _on_a_terminal(env, "y", "state", "load", "mine", "--profile", "chrome")
    assert "[y/N]" in said_yes and "needs the user's yes" not in said_yes.split("[y/N]")[1], said_yes

    missing = cli(env, "state", "load")
    assert missing.returncode == 1 and "needs a NAME" in missing.stderr
    gone = cli(env, "state", "rm", "mine")
    assert gone.returncode == 0 and "deleted mine" in gone.stdout
    again = cli(env, "state", "rm", "mine")
    assert again.returncode == 1 and "no saved auth state named 'mine'" in again.stderr
