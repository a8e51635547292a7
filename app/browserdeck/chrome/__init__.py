"""Chrome/Chromium: find it, launch it (flags, profile decoration, readiness), stop it, talk CDP.

Modules: ``executables`` (discovery), ``decorate`` (profile bootstrap, name and
colour), ``launcher`` (spawn, readiness, stop, ports), ``endpoint`` (DevTools HTTP
``/json/*``), ``procs`` (pids, ports, process groups), ``cdp`` (raw CDP client).
"""

from __future__ import annotations

from browserdeck.chrome.cdp import CDPClient, CDPError
from browserdeck.chrome.decorate import decorate_profile, read_decoration
from browserdeck.chrome.endpoint import (
    browser_ws_url,
    devtools_http,
    devtools_json,
    fetch_version,
    list_targets,
)
from browserdeck.chrome.executables import BrowserExecutable, candidate_paths, find_browser
from browserdeck.chrome.launcher import (
    ChromeProcess,
    LaunchOptions,
    chrome_args,
    has_display,
    is_cdp_ready,
    launch,
    running_as_root,
)
from browserdeck.chrome.procs import kill_port_owner, listening_pids, port_in_use

__all__ = [
    "BrowserExecutable",
    "CDPClient",
    "CDPError",
    "ChromeProcess",
    "LaunchOptions",
    "browser_ws_url",
    "candidate_paths",
    "chrome_args",
    "decorate_profile",
    "devtools_http",
    "devtools_json",
    "fetch_version",
    "find_browser",
    "has_display",
    "is_cdp_ready",
    "kill_port_owner",
    "launch",
    "list_targets",
    "listening_pids",
    "port_in_use",
    "read_decoration",
    "running_as_root",
]
