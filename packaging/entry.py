"""Entry point of the PyInstaller bundle: the same `browserdeck` command as the pip install."""

from __future__ import annotations

import multiprocessing

from browserdeck.cli import run

if __name__ == "__main__":
    multiprocessing.freeze_support()  # harmless when unused; required if anything forks workers
    run()
