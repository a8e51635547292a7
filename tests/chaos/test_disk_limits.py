"""Saved files stay under the disk limits from the settings (issue 11, item 12)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from browserdeck import artifacts, config
from browserdeck.engine.actions import write_artifact
from browserdeck.mcpserver import output
from browserdeck.util import logsetup, paths


@pytest.fixture(autouse=True)
def _limits() -> object:
    saved = artifacts.Limits(artifacts.LIMITS.max_bytes, artifacts.LIMITS.max_age_seconds)
    yield
    artifacts.LIMITS.max_bytes, artifacts.LIMITS.max_age_seconds = (
        saved.max_bytes,
        saved.max_age_seconds,
    )


def test_screenshots_and_pdfs_keep_under_the_size_limit() -> None:
    artifacts.configure(max_mb=10, max_age_days=7)
    chunk = b"x" * (3 * 2**20)
    written = [write_artifact("screenshots", "ABCDEF0123", "png", chunk) for _ in range(6)]
    folder = paths.artifacts_dir("screenshots")
    left = sorted(folder.iterdir())
    assert sum(p.stat().st_size for p in left) <= 10 * 2**20
    assert written[-1] in left  # the newest (just written) always stays
    assert written[0] not in left  # the oldest went first


def test_old_files_go_after_the_age_limit() -> None:
    artifacts.configure(max_mb=500, max_age_days=1)
    folder = paths.artifacts_dir("pdf")
    old = folder / "old.pdf"
    old.write_bytes(b"%PDF old")
    two_days_ago = time.time() - 2 * 86400
    os.utime(old, (two_days_ago, two_days_ago))
    new = write_artifact("pdf", "ABCDEF0123", "pdf", b"%PDF new")
    assert not old.exists() and new.exists()


def test_mcp_output_uses_the_same_limits() -> None:
    artifacts.configure(max_mb=10, max_age_days=7)
    first = output.offload("a" * (6 * 2**20), "browser_snapshot")
    output.offload("b" * (6 * 2**20), "browser_snapshot")
    output.offload("c" * 10, "browser_snapshot")  # pruning runs before each write
    assert not first.exists()


def test_the_limits_are_settings_in_the_one_schema(tmp_path: Path) -> None:
    keys = {s.key for s in config.SETTINGS}
    assert {"artifactsMaxMb", "artifactsMaxAgeDays", "logMaxMb"} <= keys
    cfg = config.default_config()
    assert (cfg.artifacts_max_mb, cfg.artifacts_max_age_days, cfg.log_max_mb) == (500, 7, 20)
    logsetup.set_max_mb(8)  # no handler in tests: must not fail
