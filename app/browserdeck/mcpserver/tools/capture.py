"""Screenshot, console, the network (routes, HAR, requests) and PDF."""

from __future__ import annotations

from browserdeck import results as r
from browserdeck.engine import netoptions as n
from browserdeck.engine import options as o
from browserdeck.engine import pagetext
from browserdeck.mcpserver.context import Call, Reply
from browserdeck.mcpserver.schema import b, from_model, obj, s
from browserdeck.mcpserver.tools import derived
from browserdeck.mcpserver.tools.registry import tool
from browserdeck.util import imaging

# --- screenshot, console, network, pdf ----------------------------------------------


@tool(
    "browser_take_screenshot",
    "Screenshot of this tab (viewport, full page or one element) as an image; labels draws "
    "each ref's box on it. Use browser_snapshot to act.",
    from_model(o.ScreenshotOptions, "ref", "fullPage", "labels", "type"),
)
async def screenshot(call: Call) -> Reply:
    a = call.args
    limit = call.app.max_image_dimension()
    body = {
        "ref": a.get("ref"),
        "fullPage": a.get("fullPage"),
        "labels": a.get("labels"),
        "type": a.get("type"),
        "inline": True,
        "maxWidth": limit,
        "maxHeight": limit,
    }
    data = await call.on_tab(o.ScreenshotOptions.of(body, where=call.spec.name))
    # Asked with inline: true, the engine answers the image as base64 (engine/screenshot.py).
    raw = Reply.b64(data.base64 or "")
    w, h = data.width, data.height
    if max(w, h) <= limit:
        # The engine already fitted it: no need to look inside the image again.
        fitted, mime = raw, "image/jpeg" if data.type == "jpeg" else "image/png"
    else:
        fitted_image = imaging.fit(raw, limit, limit)
        fitted, mime = fitted_image.data, fitted_image.mime
        w, h = fitted_image.width, fitted_image.height
    reply = Reply(narrow="Take it without labels, or of one element (ref)")
    reply.add_image(fitted, mime)
    lines = [f"screenshot {w}x{h}" + (f", saved to {data.path}" if data.path else "")]
    labels = data.labels or []
    if labels:
        lines.append("labels (ref: x,y width x height, in image pixels):")
    for label in labels:
        box = label.box
        lines.append(f"{label.ref}: {box.x},{box.y} {box.width}x{box.height}")
    if data.unplaced:
        # Boxed in the image but with no room for a badge: the agent must know which.
        lines.append("no room for a badge (boxed, not labelled): " + ", ".join(data.unplaced))
    if data.note:
        lines.append(data.note)
    reply.text = "\n".join(lines)
    return reply


@tool(
    "browser_console_messages",
    "Console messages of this tab, tagged [page]/[worker]/[service-worker]; clear: true hides "
    "them from later calls.",
    # Not from ConsoleOptions: clear is the tool's own (it marks what this session read;
    # the model's would empty the lists for every caller), and level alone is not worth
    # its description in every agent's context.
    obj({"level": s(enum=["error", "warning", "info", "debug"]), "clear": b("mark all as read")}),
    narrow="Ask for level: error, or clear: true and call again after the next action",
)
async def console_messages(call: Call) -> Reply:
    a = call.args
    data = await call.on_tab(o.ConsoleOptions.of({"level": a.get("level")}, where=call.spec.name))
    entries, errors = data.messages, data.errors
    target = call.session.tab or ""
    mark = call.session.console_cleared.get(target, float("-inf"))
    rows = [(e.time, _console_line(e)) for e in entries]
    # Uncaught errors are errors: every level asks for them.
    rows += [(e.time, f"[page] uncaught: {e.message}") for e in errors]
    rows = sorted((row for row in rows if row[0] > mark), key=lambda row: row[0])
    if a.get("clear"):
        newest = max([mark, *(t for t, _ in rows)], default=mark)
        call.session.console_cleared[target] = max(newest, 1.0)
    if not rows:
        return Reply(
            "no console messages" + (" since the last clear" if mark > float("-inf") else "")
        )
    text = pagetext.fence("\n".join(line for _, line in rows), "console messages")
    if a.get("clear"):
        text += f"\n({len(rows)} message(s) cleared)"
    return Reply(text)


def _console_line(e: r.ConsoleEntry) -> str:
    at = f" ({e.url}:{'' if e.line is None else e.line})" if e.url else ""
    return f"[{e.context}] {e.type}: {e.text}{at}"


# The network: routes, online/offline, HAR, requests (declared in engine/netoptions.py).
derived.register(n.NETWORK_REQUESTS)


@tool(
    "browser_pdf_save",
    "Save this tab as a PDF (headless browsers only).",
    obj({"filename": s("where to write it")}),
    group="all",
)
async def pdf_save(call: Call) -> Reply:
    from browserdeck.mcpserver.output import write_output
    from browserdeck.policy import confine

    filename = call.args.get("filename")
    # Checked before the PDF is made: a refused name fails fast and writes nothing.
    name = confine.output_name(str(filename)) if filename else None
    data = await call.on_tab(o.PdfOptions(inline=bool(filename)))
    if name is not None:
        folder = call.app.output_folder(await call.roots())
        target = write_output(folder, name, Reply.b64(str(data.base64)))
        return Reply(f"saved PDF ({data.size:,} bytes) to {target}")
    return Reply(f"saved PDF ({data.size:,} bytes) to {data.path}")
