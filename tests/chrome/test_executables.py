"""Browser discovery: search order, overrides and the error when nothing is installed.

Fake "browsers" here are empty executable files on disk: discovery only looks at
the file system, so this tests the real code path without running anything.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from browserdeck.chrome.executables import (
    ENV_OVERRIDE,
    HEADLESS_SHELL,
    KINDS,
    BrowserExecutable,
    candidate_paths,
    find_browser,
    headless_shells,
)
from browserdeck.errors import Unavailable


@pytest.fixture(autouse=True)
def _no_env_override(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_OVERRIDE, raising=False)


def fake_executable(path: Path, executable: bool = True) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(0o755 if executable else 0o644)
    return str(path)


def first_index_of_kinds(pairs: list[tuple[str, str]]) -> list[str]:
    seen: list[str] = []
    for kind, _ in pairs:
        if kind not in seen:
            seen.append(kind)
    return seen


@pytest.mark.parametrize("system", ["Linux", "Darwin", "Windows"])
def test_candidates_follow_canary_chromium_chrome_brave_edge(system: str) -> None:
    pairs = candidate_paths(system)
    assert first_index_of_kinds(pairs) == list(KINDS)
    kinds = [kind for kind, _ in pairs]
    # Grouped: once a kind is left behind it never comes back.
    assert kinds == sorted(kinds, key=KINDS.index)


def test_linux_prefers_the_real_chromium_binary_over_the_wrapper() -> None:
    paths = [path for _, path in candidate_paths("Linux")]
    assert paths.index("/usr/lib/chromium/chromium") < paths.index("/usr/bin/chromium")


def test_windows_and_mac_paths_look_like_their_platform() -> None:
    assert all(path.endswith(".exe") for _, path in candidate_paths("Windows"))
    assert all(".app/Contents/MacOS/" in path for _, path in candidate_paths("Darwin"))


def test_first_installed_kind_wins_whatever_the_list_order(tmp_path: Path) -> None:
    edge = fake_executable(tmp_path / "edge")
    chrome = fake_executable(tmp_path / "chrome")
    chromium = fake_executable(tmp_path / "chromium")
    found = find_browser(
        candidates=[("edge", edge), ("chrome", chrome), ("chromium", chromium)], names=[]
    )
    assert found == BrowserExecutable("chromium", chromium)


def test_missing_non_executable_and_directories_are_skipped(tmp_path: Path) -> None:
    (tmp_path / "canary-dir").mkdir()
    not_exec = fake_executable(tmp_path / "chromium", executable=False)
    chrome = fake_executable(tmp_path / "chrome")
    found = find_browser(
        candidates=[
            ("chrome-canary", str(tmp_path / "canary-dir")),
            ("chrome-canary", str(tmp_path / "missing")),
            ("chromium", not_exec),
            ("chrome", chrome),
        ],
        names=[],
    )
    assert found == BrowserExecutable("chrome", chrome)


def test_path_names_are_searched_within_their_kind(tmp_path: Path) -> None:
    bindir = tmp_path / "bin"
    on_path = fake_executable(bindir / "chromium")
    brave = fake_executable(tmp_path / "brave")
    found = find_browser(
        candidates=[("brave", brave)],
        names=[("chromium", "chromium")],
        search_path=str(bindir),
    )
    assert found == BrowserExecutable("chromium", on_path)


def test_override_beats_env_and_search(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    override = fake_executable(tmp_path / "my-browser")
    from_env = fake_executable(tmp_path / "env-browser")
    chromium = fake_executable(tmp_path / "chromium")
    monkeypatch.setenv(ENV_OVERRIDE, from_env)
    assert find_browser(override, candidates=[("chromium", chromium)]) == BrowserExecutable(
        "custom", override
    )
    assert find_browser(None, candidates=[("chromium", chromium)]) == BrowserExecutable(
        "custom", from_env
    )


def test_override_may_be_a_command_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    exe = fake_executable(tmp_path / "bin" / "my-chrome")
    monkeypatch.setenv("PATH", str(tmp_path / "bin") + os.pathsep + os.environ.get("PATH", ""))
    assert find_browser("my-chrome") == BrowserExecutable("custom", exe)


def test_wrong_override_is_an_error_not_a_silent_fallback(tmp_path: Path) -> None:
    chromium = fake_executable(tmp_path / "chromium")
    with pytest.raises(Unavailable) as missing:
        find_browser(str(tmp_path / "nope" / "chrome"), candidates=[("chromium", chromium)])
    assert missing.value.code == "no_browser"
    assert "does not exist" in missing.value.message
    assert "executablePath" in missing.value.message

    not_exec = fake_executable(tmp_path / "plain-file", executable=False)
    with pytest.raises(Unavailable) as plain:
        find_browser(not_exec)
    assert "is not an executable file" in plain.value.message


@pytest.mark.parametrize(
    ("system", "advice"),
    [("Linux", "apt-get install chromium"), ("Darwin", "/Applications"), ("Windows", "Chrome")],
)
def test_nothing_installed_says_what_to_install(system: str, advice: str) -> None:
    with pytest.raises(Unavailable) as err:
        find_browser(candidates=[], names=[], shells={}, system=system)
    assert err.value.code == "no_browser"
    assert "no Chrome or Chromium found" in err.value.message
    assert err.value.hint is not None
    assert advice in err.value.hint
    assert "executablePath" in err.value.hint


def test_this_machine_finds_a_real_browser() -> None:
    found = find_browser()
    assert found.kind in KINDS
    assert os.access(found.path, os.X_OK)
    if os.access("/usr/lib/chromium/chromium", os.X_OK) and found.kind == "chromium":
        assert found.path == "/usr/lib/chromium/chromium"


def test_a_headless_browser_prefers_the_headless_shell(tmp_path: Path) -> None:
    """The shell starts on about half the CPU (docs/performance.md); headed browsers keep Chromium."""
    shell = fake_executable(tmp_path / "chromium-headless-shell")
    chromium = fake_executable(tmp_path / "chromium")
    both = {"candidates": [("chromium", chromium)], "names": [], "shells": {chromium: shell}}
    assert find_browser(headless=True, **both) == BrowserExecutable(HEADLESS_SHELL, shell)  # type: ignore[arg-type]
    assert find_browser(headless=False, **both) == BrowserExecutable("chromium", chromium)  # type: ignore[arg-type]
    # Not installed: the ordinary search.
    missing = {**both, "shells": {chromium: str(tmp_path / "missing")}}
    assert find_browser(headless=True, **missing) == BrowserExecutable("chromium", chromium)  # type: ignore[arg-type]


def test_the_headless_shell_runs_only_in_place_of_its_own_browser(tmp_path: Path) -> None:
    """One managed profile folder must not be opened alternately by two Chromium builds (a
    newer one migrates it, an older one then refuses or misreads it): the shell runs only
    where the headed search picks the browser it is packaged with at the same version."""
    chromium = str(tmp_path / "lib" / "chromium")
    shell = fake_executable(tmp_path / "lib" / "chromium-headless-shell")
    canary = fake_executable(tmp_path / "canary" / "chrome")
    shells = {chromium: shell}
    # A Canary comes first in the search: it runs headless, not the shell beside Chromium.
    fake_executable(Path(chromium))
    search = [("chrome-canary", canary), ("chromium", chromium)]
    picked = find_browser(headless=True, shells=shells, candidates=search, names=[])
    assert picked == BrowserExecutable("chrome-canary", canary)
    # `apt remove chromium` leaves the shell (a package of its own): it stays unused, and
    # the next browser in the search runs headless.
    os.remove(chromium)
    chrome = fake_executable(tmp_path / "chrome" / "chrome")
    search = [("chromium", chromium), ("chrome", chrome)]
    picked = find_browser(headless=True, shells=shells, candidates=search, names=[])
    assert picked == BrowserExecutable("chrome", chrome)


def test_a_headless_shell_installed_alone_runs_headless_browsers(tmp_path: Path) -> None:
    """Slim containers install chromium-headless-shell without chromium: with no other
    browser there is no second version to open a profile, so headless runs the shell;
    a headed browser is an error that says why and what to do."""
    chromium = str(tmp_path / "lib" / "chromium")  # not installed
    shell = fake_executable(tmp_path / "lib" / "chromium-headless-shell")
    alone = {
        "shells": {chromium: shell},
        "candidates": [("chromium", chromium)],
        "names": [("chromium", "chromium")],
        "search_path": str(tmp_path / "bin"),
        "system": "Linux",
    }
    assert find_browser(headless=True, **alone) == BrowserExecutable(HEADLESS_SHELL, shell)  # type: ignore[arg-type]
    with pytest.raises(Unavailable) as err:
        find_browser(headless=False, **alone)  # type: ignore[arg-type]
    assert err.value.code == "no_browser"
    assert f"only the headless shell {shell} is installed" in err.value.message
    assert err.value.hint is not None
    assert "executablePath" in err.value.hint and "headless" in err.value.hint
    # No shell either: the plain error, headless or not.
    os.remove(shell)
    for headless in (True, False):
        with pytest.raises(Unavailable) as none:
            find_browser(headless=headless, **alone)  # type: ignore[arg-type]
        assert "looked for Chrome Canary" in none.value.message


def test_an_explicit_browser_beats_the_headless_shell(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """executablePath / BROWSERDECK_CHROME are how a user opts out of the shell."""
    shell = fake_executable(tmp_path / "chromium-headless-shell")
    mine = fake_executable(tmp_path / "my-chrome")
    shells = {mine: shell}
    assert find_browser(mine, headless=True, shells=shells) == BrowserExecutable("custom", mine)
    monkeypatch.setenv(ENV_OVERRIDE, mine)
    assert find_browser(headless=True, shells=shells) == BrowserExecutable("custom", mine)


def test_the_headless_shell_is_debians_beside_debians_chromium_on_linux_only() -> None:
    # The real binaries: /usr/bin's are shell scripts that run the binary as their child,
    # and our signals would reach the script, not the browser. Both packages pin one
    # chromium-common, so the pair is always one version.
    assert headless_shells("Linux") == {
        "/usr/lib/chromium/chromium": "/usr/lib/chromium/chromium-headless-shell"
    }
    assert headless_shells("Darwin") == headless_shells("Windows") == {}


def test_a_set_path_to_a_headless_shell_is_known_as_one(tmp_path: Path) -> None:
    """It writes no profile lock of its own either (launcher.claim_profile)."""
    shell = fake_executable(tmp_path / "chromium-headless-shell")
    assert find_browser(shell) == BrowserExecutable(HEADLESS_SHELL, shell)
