"""CLI commands that look at and drive a tab (a thin client of the engine routes).

    browserdeck snapshot --format role --interactive
    browserdeck click e12 --double
    browserdeck type e23 "hello" --submit
    browserdeck screenshot --full-page --labels
    browserdeck upload /tmp/file.pdf --ref e7

``upload`` and ``dialog`` arm: run them before the click that opens the chooser
or dialog (``upload --ref`` clicks for you).
"""

from __future__ import annotations

from browserdeck.cli.args import ARGS, COMMANDS
from browserdeck.cli.fast import Skipped
from browserdeck.client import ApiClient, ClientError
from browserdeck.door import networds
from browserdeck.door.words import say
from browserdeck.util import fastjson, pagequote

# Not `from typing import`: typing costs a CLI call about a fifth of its start-up.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from typing import Any

    # The answers' keys, generated from results.py (cli/schema.py): mypy checks every key
    # read here; at run time the answers are plain JSON and this is never imported.
    from browserdeck.cli import answers as answer


def _params(args: argparse.Namespace) -> dict[str, Any]:
    return {"profile": getattr(args, "profile", None)}


def add_arguments(p: argparse.ArgumentParser, command: str) -> None:
    """``command``'s arguments as their declarations say (generated: cli/args.py)."""
    for row in ARGS[command]:
        options = {k: v for k, v in row["options"].items() if k != "list"}
        if options.get("type") == "int":
            options["type"] = int
        p.add_argument(*row["flags"], **options)


def request_fields(args: argparse.Namespace, command: str) -> dict[str, Any]:
    """The request fields ``command``'s arguments fill (cli/args.py), by their JSON names;
    an argument not given (or a switch not set) is not sent: the model's default holds."""
    out: dict[str, Any] = {}
    for row in ARGS[command]:
        value = getattr(args, row["dest"], None)
        if "field" not in row or value is None or value is False:
            continue
        if row["options"].get("list") == "comma" and isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()]
        out.setdefault(row["field"], value)  # evaluate: the positional before --fn
    return out


def _body(args: argparse.Namespace, command: str, **fields: Any) -> dict[str, Any]:
    body = {**request_fields(args, command), **fields}
    body = {k: v for k, v in body.items() if v is not None and v is not False}
    if getattr(args, "target", None):
        body["targetId"] = args.target
    return body


def _dialog_lines(data: answer.TabResult) -> list[str]:
    lines = []
    for d in data.get("dialogs") or []:
        if d["type"] == "filechooser":
            lines.append(f"file chooser: {d['action']} ({', '.join(d.get('files') or [])})")
        else:
            lines.append(
                f"{d['type']} dialog {d.get('message')!r} was {d['action']}"
                + ("" if d["armed"] else " (nothing was armed)")
            )
    return lines


def _act(
    args: argparse.Namespace, client: ApiClient, kind: str, summary: str, **fields: Any
) -> int:
    return _post_act(args, client, _body(args, kind, kind=kind, **fields), summary)


def cmd_derived(args: argparse.Namespace, client: ApiClient) -> int:
    """A command an act kind's model declares whole (its ``cli`` hint): post it, and say
    its line (``words.say`` over what was sent)."""
    spec = COMMANDS[args.command]
    body = _body(args, args.command, **spec["fields"])
    return _post_act(args, client, body, say(spec["said"], body))


def _post_act(
    args: argparse.Namespace, client: ApiClient, body: dict[str, Any], summary: str
) -> int:
    data: answer.ActResult = client.post("/act", json=body, params=_params(args))
    lines = [summary]
    if data.get("outcome"):  # what the action caused, in one line
        lines.append(str(data["outcome"]))
    if "result" in data:
        lines.append(fastjson.dumps(data["result"], indent=2, ensure_ascii=False))
    if data.get("navigated"):
        lines.append(f"now at {data.get('url')}")
    if data.get("note"):
        lines.append(str(data["note"]))
    lines += _dialog_lines(data)
    client.print_result(data, args, "\n".join(lines))
    return 0


# --- inspection -------------------------------------------------------------------


def cmd_snapshot(args: argparse.Namespace, client: ApiClient) -> int:
    params = {**_params(args), "targetId": args.target, **request_fields(args, "snapshot")}
    data: answer.Snapshot = client.get("/snapshot", params=params)
    none: answer.SnapshotStats = {"lines": 0, "chars": 0, "refs": 0, "interactive": 0}
    stats = data.get("stats") or none
    header = (
        f"# {pagequote.title(data.get('title'))} — {pagequote.url(data.get('url') or '')}\n"
        f"# {stats['refs']} refs, "
        f"{stats['interactive']} interactive, {stats['chars']} chars"
    )
    cut = data.get("truncated")
    if cut:
        # The marker at the end says it too, but a long cut text is read from its top.
        header += (
            f"\n# cut: {cut['shownLines']} of {cut['totalLines']} lines "
            f"({cut['shownChars']} of {cut['totalChars']} chars); see the end for how to narrow it"
        )
    text = "\n".join([header, data["snapshot"], *_dialog_lines(data)])
    client.print_result(data, args, text)
    return 0


def cmd_screenshot(args: argparse.Namespace, client: ApiClient) -> int:
    data: answer.Screenshot = client.post(
        "/screenshot", json=_body(args, "screenshot"), params=_params(args)
    )
    lines = [f"{data.get('path')} ({data['width']}x{data['height']} {data['type']})"]
    labels = data.get("labels")
    for label in labels or []:
        b = label["box"]
        lines.append(f"  {label['ref']}: {b['x']},{b['y']} {b['width']}x{b['height']}")
    if labels is not None:
        lines.append(f"  {len(labels)} labels, {data.get('skipped') or 0} refs not shown")
    client.print_result(data, args, "\n".join(lines + _dialog_lines(data)))
    return 0


def cmd_console(args: argparse.Namespace, client: ApiClient) -> int:
    data: answer.Console = client.get(
        "/console",
        params={**_params(args), "targetId": args.target, **request_fields(args, "console")},
    )
    lines = [f"[{m['type']}] {m['text']}" for m in data.get("messages", [])]
    lines += [f"[pageerror] {e['message']}" for e in data.get("errors", [])]
    if args.requests:
        lines += [
            f"[{r.get('status') or r.get('failure') or '...'}] {r['method']} {r['url']}"
            for r in data.get("requests", [])
        ]
    client.print_result(data, args, "\n".join(lines) or "(nothing logged)")
    return 0


def cmd_pdf(args: argparse.Namespace, client: ApiClient) -> int:
    data: answer.Pdf = client.post("/pdf", json=_body(args, "pdf"), params=_params(args))
    client.print_result(data, args, f"{data.get('path')} ({data['bytes']} bytes)")
    return 0


# --- navigation -------------------------------------------------------------------


def _nav(args: argparse.Namespace, client: ApiClient, command: str, **body: Any) -> int:
    data: answer.Navigated = client.post(
        "/navigate", json=_body(args, command, **body), params=_params(args)
    )
    d = data.get("download")
    if d:
        text = f"downloaded {d['suggestedFilename']} -> {d.get('path') or d.get('error')}"
    else:
        status = data.get("status")
        shown = f" [{status}]" if status else ""
        text = f"{pagequote.url(data.get('url') or '')}{shown} {pagequote.title(data.get('title'))}"
    client.print_result(data, args, "\n".join([text, *_dialog_lines(data)]))
    return 0


def cmd_navigate(args: argparse.Namespace, client: ApiClient) -> int:
    return _nav(args, client, "navigate")


def cmd_back(args: argparse.Namespace, client: ApiClient) -> int:
    return _nav(args, client, "back", action="back")


def cmd_forward(args: argparse.Namespace, client: ApiClient) -> int:
    return _nav(args, client, "forward", action="forward")


# --- actions ----------------------------------------------------------------------












def cmd_select(args: argparse.Namespace, client: ApiClient) -> int:
    return _act(args, client, "select", f"selected {', '.join(args.values)} in {args.ref}")


def _fields(args: argparse.Namespace) -> list[dict[str, Any]]:
    fields: list[dict[str, Any]] = []
    if args.fields:
        try:
            parsed = fastjson.loads(args.fields)
        except ValueError as exc:
            raise ClientError(
                f"--fields is not JSON: {exc}", 'e.g. --fields \'[{"ref": "e5", "value": "Ada"}]\''
            ) from None
        if not isinstance(parsed, list):
            raise ClientError("--fields must be a JSON list of {ref, value}")
        fields += parsed
    for pair in args.pairs or []:
        ref, sep, value = pair.partition("=")
        if not sep:
            raise ClientError(f"{pair!r} is not REF=VALUE", "e.g. e5=Ada e7=true")
        fields.append({"ref": ref, "value": value})
    if not fields:
        raise ClientError("fill needs fields", "e.g. browserdeck fill e5=Ada e7=true")
    return fields


def cmd_fill(args: argparse.Namespace, client: ApiClient) -> int:
    fields = _fields(args)
    return _act(args, client, "fill", f"filled {len(fields)} field(s)", fields=fields)






def cmd_evaluate(args: argparse.Namespace, client: ApiClient) -> int:
    body = _body(args, "evaluate", kind="evaluate")
    if not body.get("fn"):
        raise ClientError(
            "evaluate needs a function", "e.g. browserdeck evaluate '() => document.title'"
        )
    data: answer.ActResult = client.post("/act", json=body, params=_params(args))
    # Just the result, as JSON (no "evaluated" line in front): scripts can parse it.
    lines = [fastjson.dumps(data.get("result"), indent=2, ensure_ascii=False)]
    if data.get("navigated"):
        lines.append(f"now at {data.get('url')}")
    lines += _dialog_lines(data)
    client.print_result(data, args, "\n".join(lines))
    return 0


# --- the network ------------------------------------------------------------------

# Per network command: its HTTP method and route, and how its answer is said (None: the
# request's own line, words.say).
NETWORK: dict[str, tuple[str, str, Callable[[dict[str, Any]], str] | None]] = {
    "route": ("POST", "/network/routes", networds.routes_text),
    "routes": ("GET", "/network/routes", networds.routes_text),
    "unroute": ("DELETE", "/network/routes", networds.routes_text),
    "network-state": ("POST", "/network/state", None),
    "har-start": ("POST", "/network/har/start", networds.har_text),
    "har-stop": ("POST", "/network/har/stop", networds.har_text),
    "requests": ("GET", "/network/requests", networds.requests_text),
    "request": ("GET", "/network/requests/{index}", networds.request_text),
}


def cmd_network(args: argparse.Namespace, client: ApiClient) -> int:
    method, path, told = NETWORK[args.command]
    body = _body(args, args.command)
    if method == "POST":
        data = client.post(path, json=body, params=_params(args))
    else:  # the fields go in the query; one the route names goes in its path
        query = {**_params(args), "targetId": args.target, **request_fields(args, args.command)}
        if "{index}" in path:
            path = path.format(index=query.pop("index"))
        data = client.request(method, path, params=query)
    text = told(data) if told else say(COMMANDS[args.command]["said"], body)
    client.print_result(data, args, text)
    return 0


# --- arming -----------------------------------------------------------------------


def cmd_upload(args: argparse.Namespace, client: ApiClient) -> int:
    from pathlib import Path  # here: the other commands need no pathlib

    files = [str(Path(p).expanduser().resolve()) for p in args.paths]
    # A person at a shell names the files themselves: their folders (and the working
    # directory) are the roots. Dot-folders and browserdeck's own stay refused.
    roots = sorted({str(Path.cwd())} | {str(Path(f).parent) for f in files})
    body = _body(args, "upload", paths=files, roots=roots)
    data: answer.Armed = client.post("/hooks/file-chooser", json=body, params=_params(args))
    names = ", ".join(data.get("files") or [])
    if data.get("armed"):
        text = (
            f"armed for {(data.get('expiresInMs') or 0) // 1000} s: the next file chooser gets "
            f"{names}; now click the upload button"
        )
    else:
        text = f"uploaded {names}"
        if data.get("outcome"):  # what setting the files caused, in one line
            text += "\n" + str(data["outcome"])
    client.print_result(data, args, "\n".join([text, *_dialog_lines(data)]))
    return 0


def cmd_dialog(args: argparse.Namespace, client: ApiClient) -> int:
    body = _body(args, "dialog")
    body["accept"] = not args.dismiss  # False must be sent, not dropped
    data: answer.Armed = client.post("/hooks/dialog", json=body, params=_params(args))
    verb = "dismiss" if args.dismiss else "accept"
    seconds = (data.get("expiresInMs") or 0) // 1000
    client.print_result(data, args, f"armed: the next dialog will be {verb}ed (for {seconds} s)")
    return 0


# --- parser -----------------------------------------------------------------------


def register(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    def cmd(name: str, func: Any, help_: str) -> argparse.ArgumentParser:
        p: argparse.ArgumentParser = sub.add_parser(name, parents=[common], help=help_)
        if isinstance(p, Skipped):
            return p  # not built: another command runs (cli.build_parser)
        # Added to each, not a parent parser: a call builds only its own subcommand's
        # parser (cli.build_parser), and a parent would be built for nothing.
        p.add_argument(
            "--target", "-t", help="tab: targetId or unique prefix (default: your last used tab)"
        )
        p.set_defaults(func=func)
        add_arguments(p, name)  # as engine/options.py declares them
        return p

    written = {
        "snapshot": cmd_snapshot,
        "screenshot": cmd_screenshot,
        "navigate": cmd_navigate,
        "back": cmd_back,
        "forward": cmd_forward,
        "select": cmd_select,
        "fill": cmd_fill,
        "evaluate": cmd_evaluate,
        "console": cmd_console,
        "pdf": cmd_pdf,
        "upload": cmd_upload,
        "dialog": cmd_dialog,
        **dict.fromkeys(NETWORK, cmd_network),
    }
    for name, spec in COMMANDS.items():
        p = cmd(name, written.get(name, cmd_derived), spec["help"])
        if name == "dialog":
            # The CLI's spelling of DialogOptions.accept: two switches, as its default is
            # true (a flag could only ever say "false").
            group = p.add_mutually_exclusive_group()
            group.add_argument("--accept", action="store_true", help="accept (the default)")
            group.add_argument("--dismiss", action="store_true")
