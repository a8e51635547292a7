"""The network calls' answers in lines, for MCP tools and CLI commands alike.

Plain Python over the answers' JSON (their wire form), no imports: the CLI prints with
these and imports as little as it can (docs/performance.md). What a page chose (a URL,
headers, bodies) is shown through ``shown``: as it is for the CLI (``Plain``); MCP passes
its page-text rules (engine/pagetext.py: ``url`` quotes an odd URL, ``fence`` marks
a block as the page's, not instructions).
"""

from __future__ import annotations

# Not `from typing import`: typing costs a CLI call about a fifth of its start-up.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Plain:
    """Page text as it is: a person reads the CLI's lines."""

    @staticmethod
    def url(text: str) -> str:
        return text

    @staticmethod
    def fence(block: str, what: str = "page content") -> str:
        return block


def route_line(route: dict[str, Any]) -> str:
    hits = route.get("hits") or 0
    return f"{route.get('said') or route.get('pattern')}" + (f" — {hits} hit(s)" if hits else "")


def routes_text(data: dict[str, Any], shown: Any = Plain) -> str:
    lines: list[str] = []
    if data.get("added"):
        lines.append(f"route added: {route_line(data['added'])}")
    if data.get("removed") is not None:
        lines.append(f"removed {data['removed']} route(s)")
    routes = data.get("routes") or []
    if routes:
        if lines:
            lines.append("active routes:")
        lines += [f"{i}. {route_line(r)}" for i, r in enumerate(routes, 1)]
    elif not data.get("added"):
        lines.append("no active routes")
    return "\n".join(lines)


def request_line(entry: dict[str, Any], shown: Any = Plain) -> str:
    status = entry.get("status") or entry.get("failure") or "pending"
    kind = entry.get("resourceType")
    number = entry.get("index")
    head = f"#{number} " if number is not None else ""
    url = shown.url(str(entry.get("url")))
    return f"{head}{entry.get('method')} {status} {url}" + (f" ({kind})" if kind else "")


def requests_text(data: dict[str, Any], shown: Any = Plain) -> str:
    entries = data.get("requests") or []
    if not entries:
        return "no requests recorded" + (" matching" if data.get("filtered") else "")
    lines = [request_line(e, shown) for e in entries]
    hidden = (data.get("total") or 0) - len(entries)
    if hidden > 0:
        lines.append(f"({hidden} earlier matching request(s) not shown: raise limit or filter)")
    lines.append("details of one: browser_network_request index=N (or GET /network/requests/N)")
    return "\n".join(lines)


def _headers(title: str, headers: list[dict[str, str]] | None) -> list[str]:
    if headers is None:
        return []
    return [f"{title}:", *(f"  {h['name']}: {h['value']}" for h in headers)]


def request_text(data: dict[str, Any], shown: Any = Plain) -> str:
    status = data.get("status")
    said = f"{status} {data.get('statusText') or ''}".strip() if status else data.get("failure")
    lines = [
        f"#{data.get('index')} {data.get('method')} {shown.url(str(data.get('requestUrl')))}",
        f"status: {said or 'pending'}; type: {data.get('resourceType')}"
        + (f"; {data['durationMs']:.0f} ms" if data.get("durationMs") is not None else ""),
    ]
    # Headers and bodies are what the page and its server chose: one block, fenced.
    parts = _headers("request headers", data.get("requestHeaders"))
    if data.get("requestBody") is not None:
        parts += ["request body:", str(data["requestBody"])]
    parts += _headers("response headers", data.get("responseHeaders"))
    if data.get("responseBody") is not None:
        parts += ["response body:", str(data["responseBody"])]
    if parts:
        lines.append(shown.fence("\n".join(parts), "request details"))
    if data.get("bodyNote"):
        lines.append(str(data["bodyNote"]))
    if data.get("redacted"):
        lines.append("(credential headers and stored secrets are [redacted])")
    return "\n".join(lines)


def har_text(data: dict[str, Any], shown: Any = Plain) -> str:
    if data.get("recording"):
        what = "every tab this session works in" if data.get("scope") == "session" else "this tab"
        return f"recording a HAR of {what}; stop it with browser_har_stop"
    line = (
        f"HAR written: {data.get('path')} ({data.get('entries') or 0} request(s), "
        f"{data.get('pages') or 0} tab(s))"
    )
    if data.get("pending"):
        line += f"; {data['pending']} request(s) still open were left out"
    if data.get("redacted"):
        line += "; credential headers and stored secrets are [redacted]"
    return line
