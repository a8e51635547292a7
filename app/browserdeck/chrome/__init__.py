"""Chrome/Chromium: find it, launch it (flags, profile decoration, readiness), stop it, talk CDP.

Modules: ``executables`` (discovery), ``decorate`` (profile bootstrap, name and
colour), ``launcher`` (spawn, readiness, stop, ports), ``endpoint`` (DevTools HTTP
``/json/*``), ``procs`` (pids, ports, process groups), ``cdp`` (raw CDP client).

Import the module that defines a name (``from browserdeck.chrome.procs import
pid_alive``): this package imports none of them, so a caller that needs only the
process helpers does not load the launcher and the CDP client with their websockets
(~20 ms of CPU before a service started for an MCP client answers).
"""
