"""What a service started for an MCP client does not import before it answers (issue 14).

Each check runs in a fresh interpreter (this test process has imported everything).
The modules are those the service imports on its way to answering ``/mcp``, as in
bench/boot_timeline.py.
"""

from __future__ import annotations

from pathlib import Path

from tests.support.imports import SERVE_PATH, loaded_after


def test_the_serve_path_leaves_the_relay_server_and_filelock_for_later() -> None:
    loaded = loaded_after(SERVE_PATH)
    assert "browserdeck.relay.slot" in loaded  # the engine's, for extension profiles
    # The relay server comes with a relay's start, filelock with the first tab claim.
    assert not {"browserdeck.relay.server", "filelock"} & loaded


def test_a_tab_claim_still_locks_the_claims_file(tmp_path: Path) -> None:
    code = (
        "import pathlib, sys\n"
        "from browserdeck.mcpserver import claims\n"
        f"lock = claims._locked(pathlib.Path({str(tmp_path)!r}) / 'claims.json')\n"
        "with lock:\n"
        "    assert lock.is_locked\n"
    )
    assert "filelock" in loaded_after(code)
