"""``format=aria``: the raw accessibility tree over CDP, whole or cut as the other formats.

``Accessibility.getFullAXTree`` of the page (or, with ``frame``, of that iframe's
document), written one node a line (``- role "name" [ref=axN] [props]``); ``ax`` refs
are for reading only. ``selector`` keeps the subtree of the element it names (the AX
node of its DOM node), ``viewport`` the nodes whose box meets the viewport, with their
ancestors (boxes from one ``DOMSnapshot.captureSnapshot``; a node without a box, such as
text, goes with its parent), and ``limit``/``maxChars`` cut the text as for ``ai``.
Only this tab's own process is read: an iframe in another process (a cross-site one) is
a 409 that says to use ``format=ai``, which reads every frame.
"""

from __future__ import annotations

import json
from typing import Any

from browserdeck.engine import snapshot_text as st
from browserdeck.engine.errors import playwright_errors
from browserdeck.engine.options import DEFAULT_AX_LIMIT, DEFAULT_MAX_CHARS, SnapshotOptions
from browserdeck.engine.state import PageState
from browserdeck.errors import Conflict, NotFound, Unavailable
from browserdeck.results import SnapshotStats, SnapshotViewport

Node = dict[str, Any]

_AX_PROPS = (
    "focused",
    "checked",
    "disabled",
    "expanded",
    "selected",
    "pressed",
    "level",
    "required",
    "invalid",
)
_AX_SKIP_COMPACT = frozenset({"generic", "none", "InlineTextBox", "LineBreak", "ignored"})
_NOT_FOUND_HINT = "check the CSS selector, or take a full snapshot first"


async def _send(state: PageState, method: str, params: dict[str, Any] | None = None) -> Any:
    assert state.cdp is not None
    with playwright_errors("accessibility snapshot"):
        return await state.cdp.send(method, params or {})


async def _element(state: PageState, css: str, within: str | None = None) -> str | None:
    """The objectId of the first element ``css`` matches (in the iframe ``within`` names,
    when its document is in this process), or None."""
    find = f"document.querySelector({json.dumps(css)})"
    if within is not None:
        find = f"(document.querySelector({json.dumps(within)})?.contentDocument)?.querySelector({json.dumps(css)})"
    answer = await _send(state, "Runtime.evaluate", {"expression": f"({find}) ?? null"})
    if "exceptionDetails" in answer:  # not a valid selector: the browser's own words
        text = answer["exceptionDetails"].get("exception", {}).get("description", "")
        from browserdeck.errors import InvalidInput

        raise InvalidInput(
            f"invalid CSS selector {css!r}: {text.splitlines()[0] if text else 'not valid'}",
            hint="fix the selector, e.g. '#id', '.class' or 'button[name=go]'",
            code="invalid_selector",
        )
    object_id: str | None = (answer.get("result") or {}).get("objectId")
    return object_id


async def _node(state: PageState, what: str, css: str, within: str | None = None) -> Node:
    """The DOM node (``DOM.describeNode``) of the element ``css`` names, or a 404."""
    object_id = await _element(state, css, within)
    if object_id is None:
        raise NotFound(
            f"{what} {css!r} matches no element on the page",
            hint=_NOT_FOUND_HINT,
            code="selector_not_found",
        )
    node: Node = (await _send(state, "DOM.describeNode", {"objectId": object_id}))["node"]
    return node


async def _frame(state: PageState, css: str) -> tuple[str, int]:
    """The CDP frame id and iframe element (backend node id) ``css`` names."""
    node = await _node(state, "frame", css)
    frame_id = node.get("frameId")
    if not frame_id:
        raise NotFound(
            f"frame {css!r} is not an <iframe> (a {node.get('localName')})",
            hint="give the CSS selector of an <iframe>",
            code="selector_not_found",
        )
    if "contentDocument" not in node:
        raise Conflict(
            f"the iframe {css!r} runs in another process (a cross-site frame), whose "
            "accessibility tree format=aria cannot read from this tab",
            hint="use format=ai (or role), which reads every frame",
            code="frame_out_of_process",
        )
    return str(frame_id), int(node["backendNodeId"])


def _document(shot: dict[str, Any], frame_id: str | None) -> dict[str, Any]:
    """The document of ``frame_id`` (None: the page's) in a DOMSnapshot."""
    strings = shot["strings"]
    docs: list[dict[str, Any]] = shot["documents"]
    if frame_id is None:
        return docs[0]
    return next((d for d in docs if strings[d["frameId"]] == frame_id), {})


def _boxes(doc: dict[str, Any]) -> dict[int, list[float]]:
    """The layout box of every DOM node of a DOMSnapshot document, by backend node id."""
    if not doc:
        return {}
    ids = doc["nodes"]["backendNodeId"]
    layout = doc["layout"]
    return {ids[i]: box for i, box in zip(layout["nodeIndex"], layout["bounds"], strict=True)}


async def _viewport(
    state: PageState, shot: dict[str, Any], frame: tuple[str, int] | None
) -> tuple[list[float], tuple[int, int]]:
    """The viewport as a rectangle in the document's coordinates, and its size."""
    if frame is None:
        metrics = await _send(state, "Page.getLayoutMetrics")
        view = metrics.get("cssLayoutViewport") or {}
        width, height = int(view.get("clientWidth", 0)), int(view.get("clientHeight", 0))
        return [view.get("pageX", 0), view.get("pageY", 0), width, height], (width, height)
    # An iframe's viewport: its own box on the page, scrolled as the frame is.
    box = _boxes(_document(shot, None)).get(frame[1], [0, 0, 0, 0])
    doc = _document(shot, frame[0])
    left, top = doc.get("scrollOffsetX", 0), doc.get("scrollOffsetY", 0)
    return [left, top, box[2], box[3]], (int(box[2]), int(box[3]))


def _meets(box: list[float] | None, view: list[float]) -> bool | None:
    if box is None:
        return None
    x, y, w, h = box
    vx, vy, vw, vh = view
    return x < vx + vw and x + w > vx and y < vy + vh and y + h > vy


async def snapshot(state: PageState, opts: SnapshotOptions) -> dict[str, Any]:
    if state.cdp is None:
        raise Unavailable(
            "the raw accessibility tree needs a CDP session to this tab", hint="use format=ai"
        )
    frame = await _frame(state, opts.frame) if opts.frame else None
    params = {"frameId": frame[0]} if frame is not None else {}
    tree = await _send(state, "Accessibility.getFullAXTree", params)
    raw_nodes: list[Node] = tree.get("nodes", [])
    by_id = {n["nodeId"]: n for n in raw_nodes}
    roots = [n for n in raw_nodes if not n.get("parentId") or n["parentId"] not in by_id]
    if opts.selector:
        wanted = (await _node(state, "selector", opts.selector, opts.frame))["backendNodeId"]
        roots = [n for n in raw_nodes if n.get("backendDOMNodeId") == wanted][:1]
        if not roots:
            raise NotFound(
                f"selector {opts.selector!r} names an element that is not in the "
                "accessibility tree (hidden, or not rendered)",
                hint=_NOT_FOUND_HINT,
                code="selector_not_found",
            )
    seen: dict[str, bool] = {}  # viewport: the node or a node under it meets the viewport
    outside = 0
    size: tuple[int, int] | None = None
    boxes: dict[int, list[float]] = {}
    if opts.viewport:
        shot = await _send(state, "DOMSnapshot.captureSnapshot", {"computedStyles": []})
        boxes = _boxes(_document(shot, frame[0] if frame is not None else None))
        view, size = await _viewport(state, shot, frame)

        def hit(node: Node) -> bool:
            below = [hit(by_id[c]) for c in node.get("childIds") or [] if c in by_id]
            own = _meets(boxes.get(node.get("backendDOMNodeId", -1)), view)
            seen[node["nodeId"]] = own is True or any(below)
            return seen[node["nodeId"]]

        for root in roots:
            hit(root)
    lines: list[str] = []

    def value(node: Node, key: str) -> str:
        v = (node.get(key) or {}).get("value")
        return "" if v is None else str(v)

    def walk(node: Node, depth: int, parent_name: str, parent_in_view: bool, out: bool) -> None:
        """Write ``node`` and what is under it; ``out``: outside the viewport, counted only."""
        nonlocal outside
        role = value(node, "role")
        name = value(node, "name")
        shown = not node.get("ignored")
        if opts.compact and (
            (role in _AX_SKIP_COMPACT and not name)
            or (role == "StaticText" and name == parent_name)
        ):
            shown = False
        if opts.interactive and role.lower() not in st.INTERACTIVE_ROLES:
            shown = False
        in_view = parent_in_view
        if opts.viewport and not out:
            # In view: its box or one under it meets the viewport; no box: as its parent.
            in_view = seen.get(node["nodeId"], False) or (
                boxes.get(node.get("backendDOMNodeId", -1)) is None and parent_in_view
            )
            out = not in_view
        if opts.depth is not None and depth >= opts.depth:
            return
        child_depth = depth
        if shown and out:
            outside += 1
            child_depth = depth + 1
        elif shown:
            props = []
            for prop in node.get("properties") or []:
                pname = prop.get("name")
                pval = (prop.get("value") or {}).get("value")
                if pname in _AX_PROPS and pval not in (None, False, "false", ""):
                    props.append(
                        f" [{pname}]" if pval is True or pval == "true" else f" [{pname}={pval}]"
                    )
            indent = "" if opts.interactive else "  " * depth
            label = f" {json.dumps(name, ensure_ascii=False)}" if name else ""
            lines.append(f"{indent}- {role}{label} [ref=ax{len(lines) + 1}]{''.join(props)}")
            child_depth = depth + 1
        for child_id in node.get("childIds") or []:
            child = by_id.get(child_id)
            if child is not None:
                walk(child, child_depth, name or parent_name, in_view, out)

    for root in roots:
        walk(root, 0, "", True, False)
    if not lines and not raw_nodes:
        raise NotFound("the page has no accessibility tree yet", hint="wait for it to load")
    # Every node is written, then cut as the other formats are: the answer says how many
    # nodes there were (``truncated``), not only that some were left out.
    text, truncated = st.truncate(
        "\n".join(lines),
        max_chars=opts.max_chars or DEFAULT_MAX_CHARS,
        max_lines=opts.limit or DEFAULT_AX_LIMIT,
        what="nodes",
        narrow=st.NARROW_AX,
    )
    shown_lines = lines[: truncated.shown_lines] if truncated else lines
    result: dict[str, Any] = {
        "format": "aria",
        "targetId": state.target_id,
        "url": state.page.url,
        "title": await state.title(),
        "snapshot": text,
        "stats": SnapshotStats(
            lines=len(shown_lines),
            chars=len(text),
            refs=0,
            interactive=sum(
                1
                for ln in shown_lines
                if ln.strip()[2:].split(" ")[0].lower() in st.INTERACTIVE_ROLES
            ),
        ),
        "note": "ax refs are for reading only; act with refs from format=ai or format=role",
    }
    if truncated:
        result["truncated"] = truncated
    if size is not None:
        result["viewport"] = SnapshotViewport(width=size[0], height=size[1], outside=outside)
    return result
