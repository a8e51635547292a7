"""Fuzz the control API with schemathesis against a real service (issue 11, item 9).

A real Service (API socket, headless Chromium started, one tab open so calls without a
targetId have a tab to aim at) in this process; the schemathesis CLI in a subprocess
against its ``/openapi.json``, with every phase (the stateful one follows the spec's
links) and every check (``--checks all``); the schema's own formats are taught by
``tests/chaos/fuzz_hooks.py``.

    python -m tests.chaos.fuzz 5000      # the full run (make fuzz)

``tests/chaos/test_fuzz.py`` runs a short one (>= 300 cases) in ``make test``.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

# Every check schemathesis has: server errors, conformance of statuses, content types,
# headers and bodies, and that what the schema allows is accepted and what it forbids is
# refused (positive_data_acceptance, negative_data_rejection).
CHECKS = "all"
REPO = Path(__file__).resolve().parents[2]
# Calls that would end the run's own service or make it pointless: deleting the default
# profile is refused anyway; reset-profile kills the browser under every later case;
# take-over holds every later call on the browser for takeOverWaitSeconds.
EXCLUDE_PATH_REGEX = r"^/(mcp|reset-profile|take-over)"
# 502 (the page could not be loaded), 503 (the browser is gone) and 504 (a wait or an
# action ran out of time) are the browser's answers, documented on every operation with
# the error body; a 500 (a browserdeck bug) is still a finding.
# max_response_time: a call may take as long as its documented deadline
# (docs/reliability.md), which for a wait or a navigation is longer than schemathesis's
# default 10 s; within the request timeout it is an answer, not a finding.
CONFIG = """
[checks.not_a_server_error]
expected-statuses = ["2xx", "3xx", "4xx", "502", "503", "504"]

[checks]
max_response_time = 90
"""
# max-examples is per operation and per phase; the coverage phase adds its own cases on
# top, and small operations run out of distinct cases early: cases // 25 examples each
# gives a little more than ``cases`` (measured).
EXAMPLES_DIVISOR = 25


def _st() -> str:
    exe = Path(sys.executable).with_name("st")
    found = str(exe) if exe.exists() else shutil.which("st")
    if not found:
        raise SystemExit("schemathesis is not installed: run `make .venv/.installed`")
    return found


async def run(cases: int, report_dir: Path) -> tuple[int, str]:
    """Start a service, fuzz it with about ``cases`` cases; (exit code, output)."""
    from tests.support.service import running_service

    per_op = max(1, cases // EXAMPLES_DIVISOR)
    async with running_service() as (service, http):
        started = await http.post("/start")
        assert started.status_code == 200, started.text
        opened = await http.post("/tabs/open", json={"url": "data:text/html,<button>b</button>"})
        assert opened.status_code == 200, opened.text
        report_dir.mkdir(parents=True, exist_ok=True)
        config = report_dir / "schemathesis.toml"
        config.write_text(CONFIG, encoding="utf-8")
        proc = await asyncio.create_subprocess_exec(
            _st(), "--config-file", str(config), "run", f"{service.url}/openapi.json",
            "--checks", CHECKS,
            "--phases", "examples,coverage,fuzzing,stateful",
            "--max-examples", str(per_op),
            "--exclude-path-regex", EXCLUDE_PATH_REGEX,
            "-H", f"Authorization: Bearer {service.api_token}",
            "--request-timeout", "120",
            "--workers", "1",
            "--seed", os.environ.get("FUZZ_SEED", "1"),
            "--report-dir", str(report_dir),
            "--no-color",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            env={
                **os.environ,
                "NO_COLOR": "1",
                # The schema's own formats (css-selector, javascript-function), taught.
                "SCHEMATHESIS_HOOKS": "tests.chaos.fuzz_hooks",
                "PYTHONPATH": str(REPO),
            },
            cwd=report_dir,  # its .schemathesis cache goes there, not into the repo
        )
        out, _ = await proc.communicate()
        return proc.returncode or 0, out.decode(errors="replace")


def cases_run(output: str) -> int:
    """How many test cases the run generated (from its summary)."""
    found = re.findall(r"(\d[\d,]*) generated", output)
    return int(found[-1].replace(",", "")) if found else 0


def main() -> None:
    cases = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    home = tempfile.mkdtemp(prefix="bd-fuzz-")
    os.environ["BROWSERDECK_HOME"] = home
    os.environ.setdefault("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    code, out = asyncio.run(run(cases, Path(home) / "reports"))
    print(out)
    print(f"cases generated: {cases_run(out)}; exit code {code}")
    shutil.rmtree(home, ignore_errors=True)
    raise SystemExit(code)


if __name__ == "__main__":
    main()
