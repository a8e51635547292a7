"""Run every benchmark in bench/ in turn (each prints its own side-by-side table).

.venv/bin/python bench/run_all.py [name ...]     # e.g. core engine relay mcp truth gui
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ORDER = ("core", "chrome", "engine", "relay", "mcp", "truth", "widgets", "gui", "remote", "secrets")


def main(argv: list[str]) -> int:
    names = argv or [n for n in ORDER if (HERE / f"bench_{n}.py").exists()]
    failed = []
    for name in names:
        script = HERE / f"bench_{name}.py"
        print(f"\n=== bench/{script.name} ===", flush=True)
        if subprocess.run([sys.executable, str(script)], check=False).returncode != 0:
            failed.append(name)
    if failed:
        print(f"\nfailed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
