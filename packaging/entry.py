"""Entry point of the PyInstaller bundle: the same `browserdeck` command as the pip install."""

from __future__ import annotations

from browserdeck.cli.main import run

# No multiprocessing.freeze_support(): nothing in browserdeck starts worker processes that
# way, and importing multiprocessing loads threading, socket, re and more on every call,
# which also keeps cli.run from ending a client command without the teardown (issue 14).
if __name__ == "__main__":
    run()
