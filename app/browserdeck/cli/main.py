"""The ``browserdeck`` command: the service, the tray, and a thin client of the control API.

Every subcommand but ``serve``/``tray``/``mcp``/``token`` talks to the running
service over HTTP; when none runs it says so and how to start one.
"""

from __future__ import annotations

import os
import sys

from browserdeck import __version__
from browserdeck.cli import fast
from browserdeck.cli.fast import SUPPRESS, Skipped
from browserdeck.client import ApiClient, ClientError, fail
from browserdeck.util import fastjson, pagequote, paths

# Not `from typing import`: typing costs a CLI call about a fifth of its start-up.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from typing import Any

    from browserdeck.cli import answers as answer  # the answers' keys, for mypy only

    Handler = Callable[[argparse.Namespace, ApiClient], int]

# A CLI call is a process of its own: argparse and json (both import re and enum) are
# imported only where cli.fast leaves a call to them (help, errors, --json output), and
# modules that only some commands need (asyncio, the token store, the service) in those.

# --- the service ----------------------------------------------------------------


def _port(text: str) -> int:
    """``--port``: the same rule as the controlPort setting (1024-65535)."""
    import argparse

    from browserdeck.config import validate_port
    from browserdeck.errors import BrowserdeckError

    try:
        return validate_port(int(text), "--port")
    except (ValueError, BrowserdeckError) as exc:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a port from 1024 to 65535" if isinstance(exc, ValueError)
            else str(exc.message)
        ) from None


def _ready_fd_problem(fd: int) -> str | None:
    """Why ``serve --ready-fd FD`` cannot be the pipe ``browserdeck mcp`` waits on, if so:
    the byte and the close would go into stdio (0-2), or fail with a traceback."""
    import os

    if fd < 3:
        return "it is below 3 (standard input, output or error, or not a descriptor)"
    try:
        os.fstat(fd)
    except OSError as exc:
        return f"it is not open in this process ({exc.strerror})"
    return None


def cmd_serve(args: argparse.Namespace) -> int:
    import asyncio

    if args.ready_fd is not None:
        problem = _ready_fd_problem(args.ready_fd)
        if problem is not None:
            print(f"browserdeck serve: error: --ready-fd {args.ready_fd}: {problem}; the option "
                  "is internal to `browserdeck mcp`, which passes the pipe it waits on: run "
                  "`browserdeck serve` without it", file=sys.stderr)
            return 2
    from browserdeck.util import logsetup

    logsetup.setup()
    from browserdeck.master import serve

    return asyncio.run(
        serve(headless=args.headless, port=args.port, idle_exit=args.idle_exit,
              ready_fd=args.ready_fd)
    )


def cmd_token(args: argparse.Namespace) -> int:
    from browserdeck.secrets import tokens

    kind = "relay" if args.relay else "api"
    if args.rotate:
        tokens.rotate_token(kind)
        print(f"a new {kind} token was stored; restart browserdeck to use it", file=sys.stderr)
    print(tokens.get_token(kind))
    return 0


def cmd_paths(args: argparse.Namespace) -> int:
    from browserdeck.secrets import tokens

    data = {
        "config": str(paths.config_file()),
        "data": str(paths.data_dir()),
        "profiles": str(paths.browser_dir()),
        "state": str(paths.state_dir()),
        "logs": str(paths.log_dir()),
        "api token": tokens.location("api"),
        "relay token": tokens.location("relay"),
        "screenshots": str(paths.artifacts_dir("screenshots")),
    }
    if args.json:
        print(fastjson.dumps(data, indent=2))
    else:
        for key, value in data.items():
            print(f"{key:12} {value}")
    return 0


# --- client commands ------------------------------------------------------------


def _profile(args: argparse.Namespace) -> dict[str, Any]:
    return {"profile": getattr(args, "profile", None)}


def _status_text(s: answer.ProfileStatus) -> str:
    # stateText: the same words as the tray and the panel (browserdeck.states).
    bits = [f"{s['profile']} ({s['driver']}, {s.get('color')}): {s.get('stateText') or s['state']}"]
    if s.get("pid"):
        bits.append(f"pid {s.get('pid')}")
    bits.append(s.get("cdpUrl") or "")
    if s.get("headless"):
        reason = s.get("headlessReason")
        bits.append("headless" + (f" ({reason})" if reason else ""))
    if s.get("detail"):
        bits.append(str(s.get("detail")))
    return " · ".join(b for b in bits if b)


def cmd_status(args: argparse.Namespace, client: ApiClient) -> int:
    data: answer.Status = client.get("/", params=_profile(args))
    client.print_result(data, args, _status_text(data))
    if data.get("configProblem") and not args.json:
        print(f"warning: {data.get('configProblem')}", file=sys.stderr)
    return 0


def cmd_start(args: argparse.Namespace, client: ApiClient) -> int:
    data: answer.ProfileStatus = client.post("/start", params=_profile(args))
    client.print_result(data, args, _status_text(data))
    return 0


def cmd_stop(args: argparse.Namespace, client: ApiClient) -> int:
    data: answer.ProfileStatus = client.post("/stop", params=_profile(args))
    client.print_result(data, args, _status_text(data))
    return 0


def cmd_reset(args: argparse.Namespace, client: ApiClient) -> int:
    data = client.post("/reset-profile", params=_profile(args))
    killed = data.get("killedPids") or []
    client.print_result(data, args, f"port {data['port']}: " + (
        f"killed {', '.join(map(str, killed))}" if killed else "nothing was holding it"))
    return 0


def cmd_profiles(args: argparse.Namespace, client: ApiClient) -> int:
    data: answer.Profiles = client.get("/profiles")
    lines = [("* " if p.get("default") else "  ") + _status_text(p) for p in data["profiles"]]
    client.print_result(data, args, "\n".join(lines))
    return 0


def _name(args: argparse.Namespace) -> str:
    name = args.name or args.name_option
    if not name:
        raise ClientError(
            "which profile? give its name", f"e.g. browserdeck {args.command} work"
        )
    return str(name)


def _read_secret(prompt: str) -> str:
    """A secret from stdin (piped) or typed without echo; never from argv (ps shows argv)."""
    if sys.stdin.isatty():
        import getpass

        return getpass.getpass(prompt).strip()
    return sys.stdin.readline().strip()


def cmd_create_profile(args: argparse.Namespace, client: ApiClient) -> int:
    from browserdeck.cli.engine import request_fields

    body: dict[str, Any] = {"name": _name(args), **request_fields(args, "create-profile")}
    if args.token_stdin:
        body["token"] = _read_secret("service token: ")
    data = client.post("/profiles/create", json={k: v for k, v in body.items() if v is not None})
    client.print_result(data, args, "created " + _status_text(data))
    return 0


def _segment(value: str, what: str) -> str:
    """``value`` as one URL path segment.

    Unquoted, ``close ../profiles/work`` became ``DELETE /profiles/work`` (httpx
    normalises dot segments) and deleted a profile; an empty one hit another route.
    """
    if value in ("", ".", ".."):
        raise ClientError(f"{value!r} is not a valid {what}",
                          f"pass a {what} as listed by `browserdeck "
                          f"{'tabs' if what == 'tab id' else 'profiles'}`")
    import urllib.parse

    return urllib.parse.quote(value, safe="")


def cmd_remote_token(args: argparse.Namespace, client: ApiClient) -> int:
    token = _read_secret("service token: ")
    data = client.post("/profiles/token", params=_profile(args), json={"token": token})
    client.print_result(data, args, f"stored the service token of {data['profile']} "
                        f"({'OS keyring' if data['stored'] == 'keyring' else '0600 file'})")
    return 0


def cmd_delete_profile(args: argparse.Namespace, client: ApiClient) -> int:
    name = _name(args)
    data = client.delete(f"/profiles/{_segment(name, 'profile name')}")
    removed = data.get("removedData")
    client.print_result(data, args, f"deleted {name}" + (f" (removed {removed})" if removed else ""))
    return 0


def _tab_line(t: dict[str, Any]) -> str:
    return f"{t['targetId']}  {pagequote.title(t.get('title'))}  {pagequote.url(t.get('url') or '')}"


def cmd_tabs(args: argparse.Namespace, client: ApiClient) -> int:
    data = client.get("/tabs", params=_profile(args))
    client.print_result(data, args, "\n".join(_tab_line(t) for t in data["tabs"]) or "(no tabs)")
    return 0


def cmd_open(args: argparse.Namespace, client: ApiClient) -> int:
    data = client.post("/tabs/open", json={"url": args.address}, params=_profile(args))
    # The tab answers before its page loads (its title and URL are still empty): wait for
    # the load, then print the tab as it is. A page that never loads is still open.
    try:
        client.post(
            "/act",
            json={"kind": "wait", "loadState": "load", "targetId": data["targetId"]},
            params=_profile(args),
        )
        tabs = client.get("/tabs", params=_profile(args))["tabs"]
        data = next((t for t in tabs if t["targetId"] == data["targetId"]), data)
    except ClientError:
        pass
    client.print_result(data, args, _tab_line(data))
    return 0


def cmd_focus(args: argparse.Namespace, client: ApiClient) -> int:
    data = client.post("/tabs/focus", json={"targetId": args.target_id}, params=_profile(args))
    client.print_result(data, args, "focused " + _tab_line(data))
    return 0


def cmd_close(args: argparse.Namespace, client: ApiClient) -> int:
    data = client.delete(f"/tabs/{_segment(args.target_id, 'tab id')}", params=_profile(args))
    client.print_result(data, args, f"closed {data['closed']}")
    return 0


# --- parser ---------------------------------------------------------------------


class _OnlyOne:
    """``add_subparsers()``'s object, building only the subcommand that will run.

    Each subparser costs argparse ~1 ms to build (gettext lookups, regexes); a CLI call
    is a process of its own and needs one of about forty.
    """

    def __init__(self, sub: Any, only: str) -> None:
        self.sub = sub
        self.only = only
        self.built = False  # once it is, the areas not yet imported are not (build_parser)

    def add_parser(self, name: str, **kwargs: Any) -> Any:
        if name == self.only or self.only in kwargs.get("aliases", ()):
            self.built = True
            return self.sub.add_parser(name, **kwargs)
        return Skipped()


def _command_in(argv: list[str]) -> str | None:
    """The subcommand an argument list names (its first non-option), if any."""
    return next((a for a in argv if not a.startswith("-")), None)


# Each area keeps its commands in its own module (engine actions, relay pairing, the CDP
# URL, the MCP server, the tray), registered in this order; each imports its heavy parts
# only when run, and a call imports only the areas up to the one holding its command.
AREAS = ("engine", "relay", "cdp", "sessions", "mcp", "vault", "gui")  # modules of cli/


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The CLI's parser; with ``only``, just that subcommand's (the rest are not built)."""
    from browserdeck.cli.parser import Parser

    parser: argparse.ArgumentParser = _declare(only, Parser)
    return parser


def recorded(command: str) -> fast.Recorder | None:
    """``command``'s declaration as ``cli/fast.py`` reads it (a Recorder for argparse)."""
    root: fast.Recorder = _declare(command, fast.Recorder)
    return root.parsers.get(command)


def _declare(only: str | None, _Parser: Any) -> Any:
    """Every command, declared once: to argparse's parser, or to a ``fast.Recorder``."""
    common = _Parser(add_help=False)
    common.add_argument("--profile", "-p", help="profile name (default: the default profile)")
    common.add_argument("--json", action="store_true", help="print JSON")
    common.add_argument("--url", help="control API URL (default: BROWSERDECK_URL or the running one)")

    parser = _Parser(
        prog="browserdeck",
        description="A real browser for AI agents. Without a command, starts the tray app.",
    )
    parser.add_argument("--version", action="version", version=f"browserdeck {__version__}")
    sub: Any = parser.add_subparsers(dest="command", metavar="COMMAND")
    if only is not None:
        sub = _OnlyOne(sub, only)

    p = sub.add_parser("serve", help="run the service without a GUI (API, relays, browsers)")
    p.add_argument("--headless", action="store_true", help="force managed browsers headless")
    p.add_argument("--port", type=_port, help="control API port (default: controlPort setting)")
    p.add_argument(
        "--idle-exit", type=float, nargs="?", const=-1.0, metavar="SECONDS",
        help="stop after this long with no API call and no `browserdeck mcp` alive (default: "
        "the mcpIdleMinutes setting); how `browserdeck mcp` starts the service",
    )
    # `browserdeck mcp` waits on this pipe for the API to listen (master.serve).
    p.add_argument("--ready-fd", type=int, help=SUPPRESS)
    p.set_defaults(local=cmd_serve)

    p = sub.add_parser("token", help="print the API token (or the relay token)")
    p.add_argument("--relay", action="store_true", help="the extension relay token instead")
    p.add_argument("--rotate", action="store_true", help="make and store a new token first")
    p.set_defaults(local=cmd_token)

    p = sub.add_parser("paths", parents=[common], help="where config, profiles and logs live")
    p.set_defaults(local=cmd_paths)

    def client_cmd(name: str, func: Handler, help_: str) -> argparse.ArgumentParser:
        cp: argparse.ArgumentParser = sub.add_parser(name, parents=[common], help=help_)
        cp.set_defaults(func=func)
        return cp

    client_cmd("status", cmd_status, "status of a profile")
    client_cmd("start", cmd_start, "start a profile's browser (or relay)")
    client_cmd("stop", cmd_stop, "stop a profile's browser (or relay)")
    client_cmd("reset-profile", cmd_reset, "kill an orphaned browser on the profile's port")
    client_cmd("profiles", cmd_profiles, "list profiles")
    p = client_cmd("create-profile", cmd_create_profile, "create a profile")
    if not isinstance(p, Skipped):  # built: this is the command that runs
        from browserdeck.cli import engine

        # The settings a new profile takes, as config/profile.py declares them (cli/args.py).
        engine.add_arguments(p, "create-profile")
    p = client_cmd("remote-token", cmd_remote_token,
                   "store a remote service profile's token (read from stdin)")
    p = client_cmd("delete-profile", cmd_delete_profile, "delete a profile and its browser data")
    p.add_argument("name", nargs="?", help="the profile to delete")
    p.add_argument("--name", dest="name_option", help=SUPPRESS)  # older spelling
    client_cmd("tabs", cmd_tabs, "list tabs")
    p = client_cmd("open", cmd_open, "open a tab")
    p.add_argument("address", metavar="URL")  # not "url": --url is the control API
    p = client_cmd("focus", cmd_focus, "focus a tab (targetId or unique prefix)")
    p.add_argument("target_id")
    p = client_cmd("close", cmd_close, "close a tab (targetId or unique prefix)")
    p.add_argument("target_id")

    for area in AREAS:
        if isinstance(sub, _OnlyOne) and sub.built:
            break
        # Not importlib.import_module: it would import importlib (and warnings) for this.
        __import__(f"browserdeck.cli.{area}")
        sys.modules[f"browserdeck.cli.{area}"].register(sub, common)
    return parser


def run() -> None:
    """The ``browserdeck`` program: its console script, ``python -m browserdeck``.

    After a call that left nothing to clean up (no atexit handler, no thread, no tracer:
    every client command) the process ends without the interpreter's teardown, which
    frees each module it imported one by one: ~4 ms of a ~30 ms call. The
    service, the tray and the MCP bridge start threads, so they exit the ordinary way.
    """
    code = main()
    import atexit

    if ("threading" in sys.modules or atexit._ncallbacks() or sys.gettrace() is not None
            or sys.getprofile() is not None):
        sys.exit(code)
    # os._exit flushes nothing, and output to a pipe or a file still waits in its buffer.
    for stream in (sys.stdout, sys.stderr):
        if stream is None:  # started with that descriptor closed (`browserdeck tabs >&-`)
            continue
        try:
            stream.flush()
        except OSError as exc:
            code = code or 1
            # `browserdeck tabs | head -1`: the reader left, nothing to say; a full disk is.
            if stream is sys.stdout and not isinstance(exc, BrokenPipeError):
                print(f"error: the output could not be written: {exc}", file=sys.stderr)
    os._exit(code)


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    except BrokenPipeError:
        # `browserdeck tabs | head -1`: the reader left; no traceback for that. Point
        # stdout at devnull so the interpreter's final flush does not fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1


def _main(argv: list[str] | None) -> int:
    arguments = sys.argv[1:] if argv is None else argv
    command = _command_in(arguments)
    args = None
    if command is not None and arguments[0] == command:
        # A plain call is read without argparse (cli.fast), from the same declarations.
        declared = recorded(command)
        if declared is not None:
            args = fast.parse(declared, command, arguments[1:])
    if args is None:
        args = _parse(command, argv)
    local = getattr(args, "local", None)
    if local is not None:
        from browserdeck.errors import BrowserdeckError

        try:
            return int(local(args))
        except BrowserdeckError as exc:  # e.g. `pair --profile ghost`: a message, not a trace
            hint = exc.hint_for("cli")
            print(f"error: {exc.message}" + (f"\n  hint: {hint}" if hint else ""),
                  file=sys.stderr)
            return 1
    func: Handler | None = getattr(args, "func", None)
    if func is None:
        build_parser().print_help()
        return 2
    try:
        client = ApiClient(url=args.url)
    except ClientError as err:
        return fail(err, getattr(args, "json", False))
    try:
        return int(func(args, client))
    except ClientError as err:
        return fail(err, getattr(args, "json", False))
    finally:
        client.close()


def _parse(command: str | None, argv: list[str] | None) -> argparse.Namespace:
    """``argv`` read by argparse: the help, the errors, all it says."""
    parser = build_parser(command)
    if command is not None and command not in _commands(parser):
        parser = build_parser()  # a typo: argparse lists every command it could have been
    args = parser.parse_args(argv)
    if args.command is None:
        args = parser.parse_args(["tray"] if _has_tray(parser) else ["serve"])
    return args


def _commands(parser: argparse.ArgumentParser) -> set[str]:
    names: set[str] = set()
    for action in parser._subparsers._group_actions if parser._subparsers else []:
        names.update(getattr(action, "choices", None) or {})
    return names


def _has_tray(parser: argparse.ArgumentParser) -> bool:
    for action in parser._subparsers._group_actions if parser._subparsers else []:
        choices = getattr(action, "choices", None) or {}
        if "tray" in choices:
            return True
    return False


if __name__ == "__main__":
    run()
