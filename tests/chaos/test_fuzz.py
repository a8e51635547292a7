"""The CI fuzz: schemathesis, every phase and every check, >= 300 cases, 0 findings (the full
run: make fuzz)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.chaos.fuzz import cases_run, run


@pytest.mark.timeout(900)
async def test_fuzz_the_api_finds_nothing(tmp_path: Path) -> None:
    code, out = await run(300, tmp_path / "reports")
    assert cases_run(out) >= 300, out[-3000:]
    assert code == 0, out[-20000:]
