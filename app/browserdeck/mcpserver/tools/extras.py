"""Images, service workers, network sources and offline mode (group all)."""

from __future__ import annotations

from browserdeck.engine import options as o
from browserdeck.mcpserver import dom, images
from browserdeck.mcpserver.context import Call, Reply
from browserdeck.mcpserver.schema import b, i, obj, s
from browserdeck.mcpserver.tools.exploring import page_fn_tool
from browserdeck.mcpserver.tools.registry import tool
from browserdeck.mcpserver.tools.shared import _finish

# --- Phoenix extras (all) ------------------------------------------------------------------


@tool(
    "browser_read_image",
    "Read a local image file (PNG/JPEG/GIF/WebP) and return it, downscaled, as an image.",
    obj({"path": s()}, ["path"]),
    group="all",
)
async def read_image(call: Call) -> Reply:
    from browserdeck.policy import confine

    # The same rule as uploads: only files in the client's roots and uploadRoots.
    roots = confine.allowed_roots(await call.roots(), call.app.settings().upload_roots)
    path = str(confine.readable_file(call.args["path"], roots, what="read"))
    data, mime, (w, h), size = images.read(path, call.app.max_image_dimension())
    reply = Reply(f"image {call.args['path']} ({mime}, {size:,} bytes, shown at {w}x{h})")
    reply.add_image(data, mime)
    return reply


page_fn_tool(
    "browser_service_workers",
    "Service worker registrations of this tab's origin and their state.",
    dom.SERVICE_WORKERS,
    obj(),
)
page_fn_tool(
    "browser_network_sources",
    "Where this page's resources came from: network, HTTP cache or service worker.",
    dom.NETWORK_SOURCES,
    obj({"limit": i("default 50")}),
    defaults={"limit": 50},
    narrow="Lower the limit",
)


@tool(
    "browser_set_offline",
    "Emulate offline (true) or back online (false) for this tab and its origin's service workers.",
    obj({"offline": b()}, ["offline"]),
    group="all",
)
async def set_offline(call: Call) -> Reply:
    offline = bool(call.args["offline"])
    data = await call.on_tab(o.OfflineOptions(offline=offline))
    if not offline:
        return await _finish(call, "back online", data)
    workers = data.service_workers
    line = "offline: network requests of this tab fail"
    if workers:
        # Shared with every tab of the origin: say so, it surprises.
        line += f"; so do those of its service worker(s) {', '.join(workers)} (for every tab "
        line += "of that origin)"
    return await _finish(call, line, data)
