"""`browserdeck sessions`: the recorded agent sessions, one's timeline, and its export.

    browserdeck sessions                          # the sessions, the newest first
    browserdeck sessions show ID                  # one session's steps
    browserdeck sessions export ID --format trace # write it out; prints the file's path

Calls of the API (GET /sessions, GET /sessions/{id}, POST /sessions/{id}/export).
"""

from __future__ import annotations

# Not `from typing import`: typing costs a CLI call about a fifth of its start-up.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any

    from browserdeck.client import ApiClient


def _when(at: float) -> str:
    import time

    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(at))


def _segment(value: str) -> str:
    from browserdeck.client import ClientError

    if value in ("", ".", ".."):
        raise ClientError(f"{value!r} is not a session id", "list them: `browserdeck sessions`")
    import urllib.parse

    return urllib.parse.quote(value, safe="")


def _session_line(s: dict[str, Any]) -> str:
    seconds = max(0.0, (s.get("ended") or s["last"]) - s["started"])
    state = "running" if s.get("ended") is None else "ended"
    errors = f", {s['errors']} failed" if s.get("errors") else ""
    profiles = ",".join(s.get("profiles") or []) or "-"
    return (f"{s['id']}  {s['agent']}  {profiles}  {_when(s['started'])}  {seconds:.0f} s  "
            f"{s['calls']} calls{errors}  {state}")


def _step_line(step: dict[str, Any]) -> str:
    mark = "✓" if step.get("ok", True) else "✗"
    line = f"{step['n']:>4} {mark} {step.get('title') or step['op']}  ({step.get('ms', 0):g} ms)"
    error = step.get("error") or {}
    if error:
        line += f"\n       {error.get('message', '')}"
    images = [n for n in (step.get("before"), step.get("after")) if n]
    if images:
        line += f"\n       images: {', '.join(images)}"
    return line


def cmd_sessions(args: argparse.Namespace, client: ApiClient) -> int:
    from browserdeck.client import ClientError

    action = args.action or "list"
    if action == "list":
        if args.session:
            raise ClientError(f"unexpected {args.session!r}",
                              "`browserdeck sessions show ID` or `... export ID --format …`")
        data = client.get("/sessions")
        lines = [_session_line(s) for s in data["sessions"]]
        client.print_result(data, args, "\n".join(lines) or "(no recorded sessions)")
        return 0
    if not args.session:
        raise ClientError(f"which session? `browserdeck sessions {action} ID`",
                          "list them: `browserdeck sessions`")
    path = f"/sessions/{_segment(args.session)}"
    if action == "show":
        data = client.get(path)
        head = _session_line(data["session"])
        body = "\n".join(_step_line(s) for s in data["steps"])
        client.print_result(data, args, f"{head}\n{body}" if body else head)
        return 0
    data = client.post(f"{path}/export", json={"format": args.format})
    client.print_result(data, args, data["path"])
    return 0


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "sessions", parents=[common],
        help="recorded agent sessions: list them, show one, export one (trace, html, video)",
    )
    p.add_argument("action", nargs="?", choices=("list", "show", "export"),
                   help="list (default), show ID, or export ID")
    p.add_argument("session", nargs="?", metavar="ID", help="a session's id (from the list)")
    p.add_argument("--format", choices=("trace", "html", "video"), default="html",
                   help="export as a Playwright trace (.zip), one HTML file or a WebM "
                   "(default: html)")
    p.set_defaults(func=cmd_sessions)
