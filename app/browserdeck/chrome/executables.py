"""Which Chrome/Chromium to run.

Search order on every platform: Chrome Canary → Chromium → Chrome → Brave → Edge
(Canary and Chromium first because they look different from the user's everyday
Chrome, which makes the agent's window easy to tell apart).  An explicit path
(config ``executablePath``, then env ``BROWSERDECK_CHROME``) always wins, and a
wrong explicit path is an error rather than a silent fallback to something else.

A headless browser with no explicit path runs Chromium's headless shell instead of
the browser the search picks only when that pick is Debian's ``chromium``
(``/usr/lib/chromium/chromium``) and ``chromium-headless-shell`` sits beside it: the
two packages come from one source package at one version (both pin
``chromium-common``), so a managed profile folder is never opened alternately by two
Chromium versions (a newer one migrates the profile, an older one then refuses it or
misreads it). A shell next to a Canary the search prefers, or left behind by ``apt
remove chromium`` while another browser is installed, is not used: the headed pick runs
headless as before. Where the search finds no browser at all (slim containers install
the shell alone) a headless browser runs the shell, there being no second version to
open its profiles; a headed one is an error that says only the shell is there. The shell
(Playwright's own default for headless) starts without the full browser's UI (~0.3 s
of the ~0.6 s of CPU a headless Chromium spends in its first seconds here, measured
in docs/performance.md), and a headless managed profile uses none of that UI. It has no
extensions, so headed browsers and the extension relay keep full Chrome. Setting
``executablePath`` (or ``BROWSERDECK_CHROME``) opts out.
"""

from __future__ import annotations

import ntpath
import os
import platform
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from browserdeck.errors import Unavailable

__all__ = [
    "ENV_OVERRIDE",
    "HEADLESS_SHELL",
    "KINDS",
    "BrowserExecutable",
    "candidate_paths",
    "find_browser",
    "headless_shells",
    "path_names",
]

ENV_OVERRIDE = "BROWSERDECK_CHROME"
KINDS = ("chrome-canary", "chromium", "chrome", "brave", "edge")
HEADLESS_SHELL = "chromium-headless-shell"


@dataclass(frozen=True)
class BrowserExecutable:
    # "chrome-canary" | "chromium" | "chrome" | "brave" | "edge" | "custom"
    # | "chromium-headless-shell"
    kind: str
    path: str


def _system(system: str | None) -> str:
    return system or platform.system()


def candidate_paths(system: str | None = None) -> list[tuple[str, str]]:
    """``(kind, absolute path)`` in search order for ``Linux``/``Darwin``/``Windows``."""
    system = _system(system)
    if system == "Darwin":
        return _mac_paths()
    if system == "Windows":
        return _windows_paths()
    return _linux_paths()


def _linux_paths() -> list[tuple[str, str]]:
    return [
        ("chrome-canary", "/opt/google/chrome-canary/chrome"),
        ("chrome-canary", "/usr/bin/google-chrome-canary"),
        # Distro Chromium: the real binary before the /usr/bin wrapper script. Debian's
        # wrapper adds /etc/chromium.d flags, among them an empty --load-extension=.
        ("chromium", "/usr/lib/chromium/chromium"),
        ("chromium", "/usr/lib/chromium-browser/chromium-browser"),
        ("chromium", "/usr/lib64/chromium-browser/chromium-browser"),
        ("chromium", "/usr/bin/chromium"),
        ("chromium", "/usr/bin/chromium-browser"),
        # Snap confinement blocks --user-data-dir outside $HOME/snap; last resort only.
        ("chromium", "/snap/bin/chromium"),
        ("chrome", "/opt/google/chrome/chrome"),
        ("chrome", "/usr/bin/google-chrome-stable"),
        ("chrome", "/usr/bin/google-chrome"),
        ("brave", "/opt/brave.com/brave/brave"),
        ("brave", "/usr/bin/brave-browser"),
        ("brave", "/usr/bin/brave"),
        ("brave", "/snap/bin/brave"),
        ("edge", "/opt/microsoft/msedge/msedge"),
        ("edge", "/usr/bin/microsoft-edge-stable"),
        ("edge", "/usr/bin/microsoft-edge"),
    ]


def _mac_paths() -> list[tuple[str, str]]:
    apps = [
        ("chrome-canary", "Google Chrome Canary.app/Contents/MacOS/Google Chrome Canary"),
        ("chromium", "Chromium.app/Contents/MacOS/Chromium"),
        ("chrome", "Google Chrome.app/Contents/MacOS/Google Chrome"),
        ("brave", "Brave Browser.app/Contents/MacOS/Brave Browser"),
        ("edge", "Microsoft Edge.app/Contents/MacOS/Microsoft Edge"),
    ]
    user_apps = str(Path("~/Applications").expanduser())
    found: list[tuple[str, str]] = []
    for kind, bundle in apps:
        found.append((kind, f"/Applications/{bundle}"))
        found.append((kind, f"{user_apps}/{bundle}"))
    return found


def _windows_paths() -> list[tuple[str, str]]:
    local = os.environ.get("LOCALAPPDATA") or ntpath.join(
        os.environ.get("USERPROFILE", r"C:\Users\Default"), "AppData", "Local"
    )
    program_files = os.environ.get("PROGRAMFILES", r"C:\Program Files")
    program_files_x86 = os.environ.get("PROGRAMFILES(X86)", r"C:\Program Files (x86)")
    roots = (program_files, program_files_x86, local)
    table = [
        ("chrome-canary", (local,), r"Google\Chrome SxS\Application\chrome.exe"),
        ("chromium", (local, program_files), r"Chromium\Application\chrome.exe"),
        ("chrome", roots, r"Google\Chrome\Application\chrome.exe"),
        ("brave", roots, r"BraveSoftware\Brave-Browser\Application\brave.exe"),
        (
            "edge",
            (program_files_x86, program_files, local),
            r"Microsoft\Edge\Application\msedge.exe",
        ),
    ]
    return [(kind, ntpath.join(root, rel)) for kind, where, rel in table for root in where]


def headless_shells(system: str | None = None) -> dict[str, str]:
    """``{headed binary: its headless shell}`` for browsers whose shell is packaged at the
    same version as the browser (Debian's ``chromium`` and ``chromium-headless-shell``,
    both pinned to one ``chromium-common``).  The real binary, not the /usr/bin
    wrapper, a shell script that would stand between our signals and the browser."""
    if _system(system) != "Linux":
        return {}
    return {"/usr/lib/chromium/chromium": "/usr/lib/chromium/chromium-headless-shell"}


def path_names(system: str | None = None) -> list[tuple[str, str]]:
    """``(kind, command name)`` looked up on ``PATH`` after a kind's fixed paths."""
    if _system(system) == "Windows":
        return [("chrome", "chrome.exe"), ("brave", "brave.exe"), ("edge", "msedge.exe")]
    if _system(system) == "Darwin":
        return []
    return [
        ("chrome-canary", "google-chrome-canary"),
        ("chromium", "chromium"),
        ("chromium", "chromium-browser"),
        ("chrome", "google-chrome-stable"),
        ("chrome", "google-chrome"),
        ("brave", "brave-browser"),
        ("edge", "microsoft-edge"),
    ]


def _is_executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def _install_hint(system: str) -> str:
    if system == "Linux":
        how = "install Chromium (`sudo apt-get install chromium` on Debian/Ubuntu) or Google Chrome"
    elif system == "Darwin":
        how = "install Google Chrome (or Chromium) into /Applications"
    else:
        how = "install Google Chrome (or Edge/Brave)"
    return f"{how}, or set executablePath in settings (or BROWSERDECK_CHROME) to a browser binary"


# The headless shell's names (Debian's package, Chrome for Testing's download): a set
# path to one is still a browser without a process singleton (launcher.claim_profile).
_SHELL_NAMES = ("chromium-headless-shell", "chrome-headless-shell", "headless_shell")


def _explicit_kind(path: str) -> str:
    return HEADLESS_SHELL if os.path.basename(path) in _SHELL_NAMES else "custom"


def _explicit(path: str, source: str) -> BrowserExecutable:
    expanded = os.path.expanduser(path)
    if os.sep not in expanded and (os.altsep is None or os.altsep not in expanded):
        on_path = shutil.which(expanded)  # a bare command name such as "chromium"
        if on_path:
            return BrowserExecutable(_explicit_kind(on_path), on_path)
    if _is_executable(expanded):
        return BrowserExecutable(_explicit_kind(expanded), os.path.abspath(expanded))
    why = "does not exist" if not os.path.exists(expanded) else "is not an executable file"
    raise Unavailable(
        f"the browser set in {source} ({path}) {why}",
        hint=f"fix or clear {source}; without it browserdeck searches for Chrome/Chromium itself",
        code="no_browser",
    )


def find_browser(
    override: str | None = None,
    *,
    headless: bool = False,
    shells: Mapping[str, str] | None = None,
    candidates: Iterable[tuple[str, str]] | None = None,
    names: Iterable[tuple[str, str]] | None = None,
    search_path: str | None = None,
    system: str | None = None,
) -> BrowserExecutable:
    """The browser to launch.

    ``override`` (config ``executablePath``) first, then env ``BROWSERDECK_CHROME``,
    then ``candidates`` (default: ``candidate_paths()``) kind by kind, each kind's
    fixed paths before its ``PATH`` names.  For a ``headless`` browser the pick is
    swapped for its headless shell where ``shells`` (default: ``headless_shells()``)
    pairs that very binary with an installed one; where the search finds no browser
    at all, a headless browser is an installed shell of ``shells``.  Raises
    ``Unavailable(code="no_browser")`` (for a headed browser where only a shell is
    installed, saying so).
    """
    if override:
        return _explicit(override, "executablePath")
    env = os.environ.get(ENV_OVERRIDE)
    if env:
        return _explicit(env, ENV_OVERRIDE)
    pairs = headless_shells(system) if shells is None else shells
    headed = _search(candidates, names, search_path, system)
    if headed is None:
        # Only the shell installed (slim containers install chromium-headless-shell
        # alone): no second Chromium here to open a profile at another version.
        installed = [shell for shell in pairs.values() if _is_executable(shell)]
        if headless and installed:
            return BrowserExecutable(HEADLESS_SHELL, installed[0])
        raise _no_browser(_system(system), installed)
    if headless:
        shell = pairs.get(headed.path)
        if shell is not None and _is_executable(shell):
            return BrowserExecutable(HEADLESS_SHELL, shell)
    return headed


def _no_browser(sys_name: str, shells: list[str]) -> Unavailable:
    if shells:  # a headed browser asked for where only the headless shell is installed
        return Unavailable(
            f"no Chrome or Chromium that opens a window found on this {sys_name} "
            f"machine: only the headless shell {shells[0]} is installed, and it runs "
            "headless profiles only",
            hint=f"{_install_hint(sys_name)}; or run this profile headless (the "
            "installed headless shell runs it)",
            code="no_browser",
        )
    return Unavailable(
        f"no Chrome or Chromium found on this {sys_name} machine "
        f"(looked for Chrome Canary, Chromium, Chrome, Brave and Edge)",
        hint=_install_hint(sys_name),
        code="no_browser",
    )


def _search(
    candidates: Iterable[tuple[str, str]] | None,
    names: Iterable[tuple[str, str]] | None,
    search_path: str | None,
    system: str | None,
) -> BrowserExecutable | None:
    fixed = list(candidate_paths(system) if candidates is None else candidates)
    lookups = list(path_names(system) if names is None else names)
    for kind in (*KINDS, "custom"):
        for cand_kind, path in fixed:
            if cand_kind == kind and _is_executable(path):
                return BrowserExecutable(kind, path)
        for cand_kind, name in lookups:
            if cand_kind == kind:
                found = shutil.which(name, path=search_path)
                if found:
                    return BrowserExecutable(kind, found)
    return None
