"""A recorded session as a Playwright trace (``.zip``) that ``playwright show-trace`` opens.

Written from browserdeck's own timeline, not by Playwright's tracing: that is per browser
context (agents sharing a profile share one), and it writes what was typed as it was
typed. Here the trace holds exactly this session's steps, redacted as recorded.

The zip has what Playwright's trace viewer loads (its loader reads ``*.trace``, then
``*.network``; docs/recording.md names the format's version): ``trace.trace``, one JSON
event a line, ``trace.network`` (empty) and ``resources/`` with the images. Per step:

* ``before`` / ``after`` with the step's ``callId``, times, a ``title`` (the viewer shows
  it as it is) and its redacted arguments as ``params``; ``after`` carries the error;
* ``input`` with the target's box and its centre (the viewer marks it);
* a ``frame-snapshot`` for the phases ``before`` and ``after`` whose page is the recorded
  image, so the viewer's Before and After tabs show them (the DOM itself is not kept);
* ``screencast-frame`` events with the same images (the viewer's film strip);
* ``log`` lines: what the step caused, the snapshot changes, console errors and failed
  requests, why an image is missing;
* ``console`` events for the console errors.
"""

from __future__ import annotations

import base64
import json
import zipfile
from pathlib import Path
from typing import Any

from browserdeck import __version__
from browserdeck.recorded import RecordedStep, SessionSummary
from browserdeck.recording.shots import CAPTION_PX
from browserdeck.recording.timeline import scrub, step_facts
from browserdeck.util.files import open_private

VERSION = 10  # the trace format Playwright 1.65 writes and reads


def _ms(session: SessionSummary, at: float) -> float:
    """Trace time: milliseconds since the session's first call."""
    return round((at - session.started) * 1000, 3)


def _page(target_id: str) -> str:
    return f"page@{target_id or 'none'}"


def _size(data: bytes) -> tuple[int, int]:
    """A JPEG's width and height, read from its SOF marker (no decoding)."""
    i = 2
    while i + 9 < len(data):
        if data[i] != 0xFF:
            i += 1
            continue
        marker = data[i + 1]
        length = int.from_bytes(data[i + 2 : i + 4], "big")
        if marker in (0xC0, 0xC1, 0xC2):
            height = int.from_bytes(data[i + 5 : i + 7], "big")
            width = int.from_bytes(data[i + 7 : i + 9], "big")
            return width, height
        i += 2 + length
    return 0, 0


def _image_snapshot(
    step: RecordedStep, phase: str, data: bytes, at: float, page: str, wall: float
) -> dict[str, Any]:
    """A frame snapshot whose document is the recorded image."""
    width, height = _size(data)
    src = "data:image/jpeg;base64," + base64.b64encode(data).decode("ascii")
    style = "margin:0;background:#202226"
    html = ["HTML", {}, ["HEAD", {}, ["TITLE", {}, f"{phase}: {step.title}"]],
            ["BODY", {"style": style},
             ["IMG", {"src": src, "alt": f"{phase} {step.title}", "style": "display:block"}]]]
    return {
        "type": "frame-snapshot",
        "snapshot": {
            "callId": f"call@{step.n}",
            "phase": phase,
            "pageId": page,
            "frameId": f"frame@{step.target_id or 'none'}",
            "frameUrl": step.url or "about:blank",
            "html": html,
            "viewport": {"width": width or 1280, "height": height or 720},
            "timestamp": at,
            "wallTime": wall,
            "collectionTime": 0,
            "resourceOverrides": [],
            "isMainFrame": True,
        },
    }


def write(
    path: Path,
    session: SessionSummary,
    steps: list[RecordedStep],
    image: Any,
) -> Path:
    """Write the trace of ``session`` to ``path``; ``image(name)`` reads an image's bytes."""
    events: list[dict[str, Any]] = []
    files: dict[str, bytes] = {}
    viewport = {"width": 1280, "height": 720}
    events.append(
        {
            "version": VERSION,
            "type": "context-options",
            "origin": "library",
            "browserName": "chromium",
            "playwrightVersion": f"browserdeck {__version__}",
            "options": {"viewport": viewport},
            "platform": "linux",
            "wallTime": session.started * 1000,
            "monotonicTime": 0,
            "sdkLanguage": "javascript",
            "title": scrub(f"{session.agent} — browserdeck session {session.id}"),
        }
    )
    pages: set[str] = set()
    for step in steps:
        page = _page(step.target_id)
        t0 = _ms(session, step.started)
        t1 = round(t0 + max(step.ms, 1.0), 3)
        call = f"call@{step.n}"
        if step.target_id and page not in pages:
            pages.add(page)
            events.append({"type": "event", "time": t0, "class": "BrowserContext",
                           "method": "page", "params": {"pageId": page}})
        params = dict(step.args)
        if step.element:
            params["element"] = step.element
        before: dict[str, Any] = {
            "type": "before", "callId": call, "startTime": t0,
            "class": "Browserdeck", "method": step.kind or step.op,
            "title": step.title or step.op, "params": params,
        }
        if step.target_id:
            before["pageId"] = page
        if step.url:
            before["subtitle"] = step.url
        events.append(before)
        shots = []
        for phase, name, at in (("before", step.before, t0), ("after", step.after, t1)):
            data = image(name) if name else None
            if not data:
                continue
            files[f"resources/{name}"] = data
            shots.append((phase, name, at, data))
        if step.target:
            x, y, w, h = step.target
            # The box in the image's pixels: the caption strip sits above the page.
            box = {"x": x, "y": y + CAPTION_PX, "width": w, "height": h}
            events.append({"type": "input", "callId": call, "box": box,
                           "point": {"x": x + w / 2, "y": y + CAPTION_PX + h / 2}})
        for phase, name, at, data in shots:
            width, height = _size(data)
            events.append(_image_snapshot(step, phase, data, at, page, step.started * 1000))
            events.append({"type": "screencast-frame", "pageId": page,
                           "file": f"resources/{name}", "width": width, "height": height,
                           "timestamp": at})
        for line in _log_lines(step):
            events.append({"type": "log", "callId": call, "time": t1, "message": line})
        for text in step.console:  # inside the step's time: the viewer counts it there
            events.append({"type": "console", "time": round((t0 + t1) / 2, 3), "pageId": page, "messageType": "error",
                           "text": text, "location": {"url": step.url, "lineNumber": 0,
                                                      "columnNumber": 0}})
        after: dict[str, Any] = {"type": "after", "callId": call, "endTime": t1}
        if step.error:
            after["error"] = {"name": step.error.get("code", "Error"),
                              "message": step.error.get("message", "")
                              + (f"\n{step.error['hint']}" if step.error.get("hint") else "")}
        elif step.result:
            after["result"] = step.result
        events.append(after)
    text = "\n".join(json.dumps(e, ensure_ascii=False) for e in events) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open_private(path) as fh, zipfile.ZipFile(fh, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("trace.trace", scrub(text))
        zf.writestr("trace.network", "")
        for name, data in files.items():
            zf.writestr(zipfile.ZipInfo(name), data, compress_type=zipfile.ZIP_STORED)
    return path


def _log_lines(step: RecordedStep) -> list[str]:
    return [f"{what}: {text}" for what, text in step_facts(step) if what not in _IN_AFTER]


_IN_AFTER = {"failed", "what to do"}  # the after event's error says them
