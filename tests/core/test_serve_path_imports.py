"""What a service started for an MCP client does not import before it answers (issue 14).

Each check runs in a fresh interpreter (this test process has imported everything).
The modules are those the service imports on its way to answering ``/mcp``, as in
bench/boot_timeline.py.
"""

from __future__ import annotations

from pathlib import Path

from tests.support.imports import ENGINE_PATH, SERVE_PATH, loaded_after


def test_the_serve_path_leaves_the_engine_for_after_it_answers() -> None:
    # The request models and the engine's errors come without Playwright's client: the
    # engine (~90 ms of imports) is imported once the API listens (service.py), while
    # the driver it takes is already starting (engine/pwdriver.py).
    loaded = loaded_after(SERVE_PATH)
    assert "browserdeck.engine.options" in loaded
    assert not {"browserdeck.engine.engine", "playwright.async_api"} & loaded


def test_the_serve_path_leaves_the_browser_launcher_for_the_launch() -> None:
    # Launching Chromium (the launcher, its CDP gateway, the raw CDP client: websockets)
    # is work for after the API listens (Service.start's prelaunch), not for `initialize`.
    loaded = loaded_after(SERVE_PATH)
    assert {"browserdeck.chrome.procs", "browserdeck.profiles"} <= loaded
    assert not {"browserdeck.chrome.launcher", "browserdeck.chrome.cdp", "websockets"} & loaded


def test_the_engines_errors_are_playwrights_public_classes() -> None:
    # engine/errors.py takes them from where they are defined, not the public module.
    from playwright import async_api

    from browserdeck.engine import errors

    assert errors.PlaywrightError is async_api.Error
    assert errors.PlaywrightTimeoutError is async_api.TimeoutError


def test_the_serve_path_leaves_the_relay_server_and_filelock_for_later() -> None:
    loaded = loaded_after(ENGINE_PATH)
    assert "browserdeck.relay.slot" in loaded  # the engine's, for extension profiles
    # The relay server and its session model come with a relay's start, filelock with
    # the first tab claim.
    assert not {"browserdeck.relay.server", "browserdeck.relay.model", "filelock"} & loaded


def test_a_tab_claim_still_locks_the_claims_file(tmp_path: Path) -> None:
    code = (
        "import pathlib, sys\n"
        "from browserdeck.mcpserver import claims\n"
        f"lock = claims._locked(pathlib.Path({str(tmp_path)!r}) / 'claims.json')\n"
        "with lock:\n"
        "    assert lock.is_locked\n"
    )
    assert "filelock" in loaded_after(code)


def test_the_serve_path_leaves_the_websocket_client_for_a_connection() -> None:
    # ... nor the launcher that the prelaunch imports once the API listens.
    loaded = loaded_after(ENGINE_PATH + "\nimport browserdeck.chrome.launcher")
    assert "websockets.asyncio.server" in loaded  # the managed browser's CDP gateway
    # The raw CDP client's half comes with its first connection (chrome/cdp.py).
    assert not {"websockets.asyncio.client", "websockets.client"} & loaded


def test_the_serve_path_builds_no_model_validator_a_first_call_does_not_need() -> None:
    # Answers and tabs build their validators on first use (defer_build), and the union
    # of every act on the first act (acts.act_of). The requests are built at import:
    # FastAPI's route for a single deferred model failed its OpenAPI (docs/performance.md).
    code = (
        SERVE_PATH + "\n"
        "from browserdeck import results, tabs\n"
        "from browserdeck.engine import acts, options\n"
        "assert not results.Navigated.__pydantic_complete__\n"
        "assert not results.Snapshot.__pydantic_complete__\n"
        "assert not tabs.Tab.__pydantic_complete__\n"
        "assert options.NavigateOptions.__pydantic_complete__\n"
        "assert acts._act_adapter.cache_info().currsize == 0\n"
    )
    loaded_after(code)


def test_a_deferred_model_validates_and_refuses_as_before() -> None:
    code = (
        "from browserdeck import results, tabs\n"
        "from browserdeck.engine.acts import act_of\n"
        "from browserdeck.errors import InvalidInput\n"
        "tab = tabs.Tab('T1', 'title', 'https://example.com/')\n"
        "assert tab.target_id == 'T1'\n"
        "assert results.Navigated(target_id='T1', status=200).wire() == {'targetId': 'T1', 'status': 200}\n"
        "assert act_of({'kind': 'click', 'ref': 'e1'}).ref == 'e1'\n"
        "try:\n"
        "    act_of({'kind': 'click', 'ref': 1})\n"
        "except InvalidInput as exc:\n"
        "    assert 'ref' in exc.message, exc.message\n"
        "else:\n"
        "    raise AssertionError('an int ref was accepted')\n"
    )
    loaded_after(code)


def test_the_serve_path_leaves_the_mcp_tools_for_the_first_tools_call() -> None:
    # MCP initialize needs no tool; the tools and their schemas come with the first
    # tools/list or tools/call (mcpserver/server.py all_tools).
    loaded = loaded_after(SERVE_PATH)
    assert "browserdeck.mcpserver.server" in loaded
    assert not {m for m in loaded if m.startswith("browserdeck.mcpserver.tools")}
