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

import argparse
import json
from pathlib import Path

from browserdeck.client import ApiClient, ClientError

# Not `from typing import`: typing costs a CLI call about a fifth of its start-up (issue 14).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _params(args: argparse.Namespace) -> dict[str, Any]:
    return {"profile": getattr(args, "profile", None)}


def _body(args: argparse.Namespace, **fields: Any) -> dict[str, Any]:
    body = {k: v for k, v in fields.items() if v is not None and v is not False}
    if getattr(args, "target", None):
        body["targetId"] = args.target
    if getattr(args, "timeout_ms", None) is not None:
        body["timeoutMs"] = args.timeout_ms
    return body


def _dialog_lines(data: dict[str, Any]) -> list[str]:
    lines = []
    for d in data.get("dialogs") or []:
        if d.get("type") == "filechooser":
            lines.append(f"file chooser: {d.get('action')} ({', '.join(d.get('files', []))})")
        else:
            lines.append(
                f"{d.get('type')} dialog {d.get('message')!r} was {d.get('action')}"
                + ("" if d.get("armed") else " (nothing was armed)")
            )
    return lines


def _act(
    args: argparse.Namespace, client: ApiClient, kind: str, summary: str, **fields: Any
) -> int:
    body = _body(args, kind=kind, **fields)
    if getattr(args, "wait_ms", None) is not None:
        body["waitMs"] = args.wait_ms
    data = client.post("/act", json=body, params=_params(args))
    lines = [summary]
    if data.get("outcome"):  # what the action caused, in one line
        lines.append(str(data["outcome"]))
    if "result" in data:
        lines.append(json.dumps(data["result"], indent=2, ensure_ascii=False))
    if data.get("navigated"):
        lines.append(f"now at {data.get('url')}")
    if data.get("note"):
        lines.append(str(data["note"]))
    lines += _dialog_lines(data)
    client.print_result(data, args, "\n".join(lines))
    return 0


# --- inspection -------------------------------------------------------------------


def cmd_snapshot(args: argparse.Namespace, client: ApiClient) -> int:
    params = {
        **_params(args),
        "targetId": args.target,
        "format": args.format,
        "refs": args.refs,
        "interactive": args.interactive or None,
        "compact": args.compact or None,
        "depth": args.depth,
        "selector": args.selector,
        "frame": args.frame,
        "limit": args.limit,
        "maxChars": args.max_chars,
        "viewport": args.viewport or None,
    }
    data = client.get("/snapshot", params=params)
    stats = data.get("stats", {})
    header = (
        f"# {data.get('title', '')} — {data.get('url', '')}\n# {stats.get('refs', 0)} refs, "
        f"{stats.get('interactive', 0)} interactive, {stats.get('chars', 0)} chars"
    )
    text = "\n".join([header, data.get("snapshot", ""), *_dialog_lines(data)])
    client.print_result(data, args, text)
    return 0


def cmd_screenshot(args: argparse.Namespace, client: ApiClient) -> int:
    body = _body(
        args,
        fullPage=args.full_page,
        ref=args.ref,
        element=args.element,
        type=args.type,
        quality=args.quality,
        labels=args.labels,
        maxWidth=args.max_width,
        maxHeight=args.max_height,
    )
    data = client.post("/screenshot", json=body, params=_params(args))
    lines = [f"{data.get('path')} ({data.get('width')}x{data.get('height')} {data.get('type')})"]
    for label in data.get("labels") or []:
        b = label["box"]
        lines.append(f"  {label['ref']}: {b['x']},{b['y']} {b['width']}x{b['height']}")
    if data.get("labels") is not None:
        lines.append(f"  {len(data['labels'])} labels, {data.get('skipped', 0)} refs not shown")
    client.print_result(data, args, "\n".join(lines + _dialog_lines(data)))
    return 0


def cmd_console(args: argparse.Namespace, client: ApiClient) -> int:
    data = client.get(
        "/console",
        params={
            **_params(args),
            "targetId": args.target,
            "level": args.level,
            "limit": args.limit,
            "clear": args.clear or None,
        },
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
    data = client.post("/pdf", json=_body(args, landscape=args.landscape), params=_params(args))
    client.print_result(data, args, f"{data.get('path')} ({data.get('bytes')} bytes)")
    return 0


# --- navigation -------------------------------------------------------------------


def _nav(args: argparse.Namespace, client: ApiClient, body: dict[str, Any]) -> int:
    data = client.post("/navigate", json=_body(args, **body), params=_params(args))
    if data.get("download"):
        d = data["download"]
        text = f"downloaded {d.get('suggestedFilename')} -> {d.get('path') or d.get('error')}"
    else:
        status = f" [{data['status']}]" if data.get("status") else ""
        text = f"{data.get('url')}{status} {data.get('title', '')}".rstrip()
    client.print_result(data, args, "\n".join([text, *_dialog_lines(data)]))
    return 0


def cmd_navigate(args: argparse.Namespace, client: ApiClient) -> int:
    return _nav(args, client, {"url": args.address})


def cmd_back(args: argparse.Namespace, client: ApiClient) -> int:
    return _nav(args, client, {"action": "back"})


def cmd_forward(args: argparse.Namespace, client: ApiClient) -> int:
    return _nav(args, client, {"action": "forward"})


# --- actions ----------------------------------------------------------------------


def cmd_click(args: argparse.Namespace, client: ApiClient) -> int:
    mods = [m.strip() for m in args.modifiers.split(",")] if args.modifiers else None
    return _act(
        args,
        client,
        "click",
        f"{'double-' if args.double else ''}clicked {args.ref}",
        ref=args.ref,
        doubleClick=args.double,
        button=args.button,
        modifiers=mods,
    )


def cmd_type(args: argparse.Namespace, client: ApiClient) -> int:
    return _act(
        args,
        client,
        "type",
        f"typed into {args.ref}",
        ref=args.ref,
        text=args.text,
        submit=args.submit,
        slowly=args.slowly,
    )


def cmd_press(args: argparse.Namespace, client: ApiClient) -> int:
    return _act(args, client, "press", f"pressed {args.key}", key=args.key, ref=args.ref)


def cmd_hover(args: argparse.Namespace, client: ApiClient) -> int:
    return _act(args, client, "hover", f"hovering {args.ref}", ref=args.ref)


def cmd_drag(args: argparse.Namespace, client: ApiClient) -> int:
    return _act(
        args,
        client,
        "drag",
        f"dragged {args.start} to {args.end}",
        startRef=args.start,
        endRef=args.end,
    )


def cmd_select(args: argparse.Namespace, client: ApiClient) -> int:
    return _act(
        args,
        client,
        "select",
        f"selected {', '.join(args.values)} in {args.ref}",
        ref=args.ref,
        values=args.values,
    )


def _fields(args: argparse.Namespace) -> list[dict[str, Any]]:
    fields: list[dict[str, Any]] = []
    if args.fields:
        try:
            parsed = json.loads(args.fields)
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


def cmd_resize(args: argparse.Namespace, client: ApiClient) -> int:
    return _act(
        args,
        client,
        "resize",
        f"viewport is {args.width}x{args.height}",
        width=args.width,
        height=args.height,
    )


def cmd_wait(args: argparse.Namespace, client: ApiClient) -> int:
    return _act(
        args,
        client,
        "wait",
        "done waiting",
        text=args.text,
        textGone=args.text_gone,
        selector=args.selector,
        url=args.url_glob,
        loadState=args.load_state,
        fn=args.fn,
        timeMs=args.time,
        networkQuiet=args.network_quiet or None,
        quietMs=args.quiet_ms,
    )


def cmd_evaluate(args: argparse.Namespace, client: ApiClient) -> int:
    fn = args.function or args.fn
    if not fn:
        raise ClientError(
            "evaluate needs a function", "e.g. browserdeck evaluate '() => document.title'"
        )
    data = client.post(
        "/act", json=_body(args, kind="evaluate", fn=fn, ref=args.ref), params=_params(args)
    )
    # Just the result, as JSON (no "evaluated" line in front): scripts can parse it.
    lines = [json.dumps(data.get("result"), indent=2, ensure_ascii=False)]
    if data.get("navigated"):
        lines.append(f"now at {data.get('url')}")
    lines += _dialog_lines(data)
    client.print_result(data, args, "\n".join(lines))
    return 0


# --- arming -----------------------------------------------------------------------


def cmd_upload(args: argparse.Namespace, client: ApiClient) -> int:
    files = [str(Path(p).expanduser().resolve()) for p in args.paths]
    # A person at a shell names the files themselves: their folders (and the working
    # directory) are the roots. Dot-folders and browserdeck's own stay refused.
    roots = sorted({str(Path.cwd())} | {str(Path(f).parent) for f in files})
    body = _body(
        args, paths=files, roots=roots, ref=args.ref, inputRef=args.input_ref, element=args.element
    )
    if getattr(args, "wait_ms", None) is not None:
        body["waitMs"] = args.wait_ms
    data = client.post("/hooks/file-chooser", json=body, params=_params(args))
    if data.get("armed"):
        text = (
            f"armed for {data.get('expiresInMs', 0) // 1000} s: the next file chooser gets "
            f"{', '.join(data.get('files', []))}; now click the upload button"
        )
    else:
        text = f"uploaded {', '.join(data.get('files', []))}"
        if data.get("outcome"):  # what setting the files caused, in one line
            text += "\n" + str(data["outcome"])
    client.print_result(data, args, "\n".join([text, *_dialog_lines(data)]))
    return 0


def cmd_dialog(args: argparse.Namespace, client: ApiClient) -> int:
    body = _body(args, accept=not args.dismiss, promptText=args.prompt_text)
    body["accept"] = not args.dismiss  # False must be sent, not dropped
    data = client.post("/hooks/dialog", json=body, params=_params(args))
    verb = "dismiss" if args.dismiss else "accept"
    client.print_result(
        data,
        args,
        f"armed: the next dialog will be {verb}ed (for {data.get('expiresInMs', 0) // 1000} s)",
    )
    return 0


# --- parser -----------------------------------------------------------------------


def register(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    tab = argparse.ArgumentParser(add_help=False)
    tab.add_argument(
        "--target", "-t", help="tab: targetId or unique prefix (default: your last used tab)"
    )
    timed = argparse.ArgumentParser(add_help=False)
    timed.add_argument("--timeout-ms", type=int, help="default 8000 (navigate 20000)")
    timed.add_argument(
        "--wait-ms",
        type=int,
        help="actions: longest wait for what the action caused (navigation, requests); "
        "default the actionWaitMs setting, 0 = none",
    )

    def cmd(name: str, func: Any, help_: str, *, timeout: bool = False) -> argparse.ArgumentParser:
        parents = [common, tab] + ([timed] if timeout else [])
        p: argparse.ArgumentParser = sub.add_parser(name, parents=parents, help=help_)
        p.set_defaults(func=func)
        return p

    p = cmd("snapshot", cmd_snapshot, "accessibility snapshot with element refs")
    p.add_argument("--format", choices=("ai", "role", "aria"), help="default: ai")
    p.add_argument("--refs", choices=("aria", "role"), help="how refs resolve")
    p.add_argument("--interactive", "-i", action="store_true", help="only actionable elements")
    p.add_argument("--compact", "-c", action="store_true", help="drop unnamed wrappers")
    p.add_argument("--depth", "-d", type=int)
    p.add_argument("--selector", "-s", help="CSS selector to snapshot")
    p.add_argument("--frame", help="CSS selector of an iframe to snapshot inside")
    p.add_argument("--limit", type=int, help="maximum lines (aria: nodes)")
    p.add_argument("--max-chars", type=int)
    p.add_argument("--viewport", action="store_true", help="only what is in the viewport")

    p = cmd("screenshot", cmd_screenshot, "screenshot to a file", timeout=True)
    p.add_argument("--full-page", action="store_true")
    p.add_argument("--ref", help="only this element")
    p.add_argument("--element", help="only this element (CSS selector)")
    p.add_argument("--type", choices=("png", "jpeg"))
    p.add_argument("--quality", type=int, help="jpeg quality 1-100")
    p.add_argument("--labels", action="store_true", help="draw ref labels")
    p.add_argument("--max-width", type=int)
    p.add_argument("--max-height", type=int)

    p = cmd("navigate", cmd_navigate, "go to a URL", timeout=True)
    p.add_argument("address", metavar="URL")  # not "url": --url is the control API
    cmd("back", cmd_back, "go back in the tab's history", timeout=True)
    cmd("forward", cmd_forward, "go forward in the tab's history", timeout=True)

    p = cmd("click", cmd_click, "click an element by ref", timeout=True)
    p.add_argument("ref")
    p.add_argument("--double", action="store_true", help="double-click")
    p.add_argument("--button", choices=("left", "right", "middle"))
    p.add_argument("--modifiers", help="comma-separated: Alt,Control,Meta,Shift")

    p = cmd("type", cmd_type, "type into an element (replaces its value)", timeout=True)
    p.add_argument("ref")
    p.add_argument("text")
    p.add_argument("--submit", action="store_true", help="press Enter afterwards")
    p.add_argument("--slowly", action="store_true", help="key by key")

    p = cmd("press", cmd_press, "press a key (Enter, Escape, Control+A, ...)", timeout=True)
    p.add_argument("key")
    p.add_argument("--ref", help="press it in this element")

    p = cmd("hover", cmd_hover, "hover an element", timeout=True)
    p.add_argument("ref")

    p = cmd("drag", cmd_drag, "drag one element onto another", timeout=True)
    p.add_argument("start")
    p.add_argument("end")

    p = cmd("select", cmd_select, "select options of a <select>", timeout=True)
    p.add_argument("ref")
    p.add_argument("values", nargs="+")

    p = cmd("fill", cmd_fill, "fill several fields: REF=VALUE ... or --fields JSON", timeout=True)
    p.add_argument("pairs", nargs="*", metavar="REF=VALUE")
    p.add_argument("--fields", help='JSON: [{"ref": "e5", "value": "Ada"}, ...]')

    p = cmd("resize", cmd_resize, "set the viewport size", timeout=True)
    p.add_argument("width", type=int)
    p.add_argument("height", type=int)

    p = cmd(
        "wait",
        cmd_wait,
        "wait for text, a selector, a URL, a load state, network quiet or time",
        timeout=True,
    )
    p.add_argument("--text")
    p.add_argument("--text-gone")
    p.add_argument("--selector")
    p.add_argument("--url-glob", "--until-url", dest="url_glob", help="URL glob, e.g. **/done")
    p.add_argument("--load-state", choices=("load", "domcontentloaded", "networkidle"))
    p.add_argument("--fn", help="JS function that returns truthy")
    p.add_argument("--time", type=int, help="milliseconds")
    p.add_argument(
        "--network-quiet",
        action="store_true",
        help="until no request has been in flight for --quiet-ms (default 500)",
    )
    p.add_argument("--quiet-ms", type=int, help="the --network-quiet window")

    p = cmd("evaluate", cmd_evaluate, "run JavaScript in the page", timeout=True)
    p.add_argument(
        "function", nargs="?", help="'() => document.title' or '(el) => el.value' with --ref"
    )
    p.add_argument("--fn", help=argparse.SUPPRESS)  # the old spelling keeps working
    p.add_argument("--ref", help="pass this element to the function")

    p = cmd("console", cmd_console, "console messages and page errors")
    p.add_argument("--level", choices=("debug", "info", "warning", "error"))
    p.add_argument("--limit", type=int)
    p.add_argument("--clear", action="store_true")
    p.add_argument("--requests", action="store_true", help="also list network requests")

    p = cmd("pdf", cmd_pdf, "save the page as PDF (headless only)", timeout=True)
    p.add_argument("--landscape", action="store_true")

    p = cmd("upload", cmd_upload, "upload files (arms the next file chooser)", timeout=True)
    p.add_argument("paths", nargs="+")
    p.add_argument("--ref", help="click this element to open the chooser")
    p.add_argument("--input-ref", help="set the files on this <input type=file> ref")
    p.add_argument("--element", help="CSS selector of an <input type=file>")

    p = cmd("dialog", cmd_dialog, "arm the answer to the next dialog", timeout=True)
    group = p.add_mutually_exclusive_group()
    group.add_argument("--accept", action="store_true", help="accept (the default)")
    group.add_argument("--dismiss", action="store_true")
    p.add_argument("--prompt-text", help="text for a prompt()")
