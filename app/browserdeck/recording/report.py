"""A recorded session as one HTML file: every step, its images inlined, nothing fetched.

For a person to attach to a bug or an audit: it opens in any browser, offline, and
holds no script. Each step shows what it did, when and how long it took, its arguments
(redacted as recorded), how it ended, the images before and after side by side, the
snapshot changes it caused, the console errors and failed requests meanwhile.
"""

from __future__ import annotations

import base64
import html
import json
import time
from collections.abc import Callable
from pathlib import Path

from browserdeck import __version__
from browserdeck.recorded import RecordedStep, SessionSummary
from browserdeck.recording.timeline import scrub, step_facts
from browserdeck.util.files import write_private

_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:0;background:#f4f5f7;color:#1d2126}
header{background:#202226;color:#eee;padding:16px 24px}
header h1{font-size:18px;margin:0 0 4px}
header p{margin:0;color:#bbb}
main{padding:16px 24px}
.step{background:#fff;border:1px solid #d8dbe0;border-radius:6px;margin:0 0 16px;padding:12px 16px}
.step.failed{border-left:5px solid #c62828}
.step h2{font-size:15px;margin:0 0 6px}
.meta{color:#5a6270;font-size:12px;margin-bottom:8px}
.pair{display:flex;gap:12px;flex-wrap:wrap}
.pair figure{margin:0;flex:1 1 420px;min-width:280px}
.pair img{width:100%;border:1px solid #ccd;display:block}
figcaption{font-size:12px;color:#5a6270;margin-bottom:2px}
pre{background:#f6f8fa;border:1px solid #e1e4e8;padding:8px;overflow:auto;font-size:12px;margin:6px 0}
.error{color:#b71c1c}
.note{color:#6a4c00}
table.summary td{padding:0 12px 0 0}
"""


_CLASS = {"failed": ' class="error"', "what to do": ' class="error"', "note": ' class="note"'}


def _e(text: object) -> str:
    return html.escape(scrub(str(text)), quote=True)


def _when(at: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(at))


def _image(data: bytes | None, label: str) -> str:
    if not data:
        return f"<figure><figcaption>{_e(label)}</figcaption><p>(no image)</p></figure>"
    src = "data:image/jpeg;base64," + base64.b64encode(data).decode("ascii")
    return f'<figure><figcaption>{_e(label)}</figcaption><img alt="{_e(label)}" src="{src}"></figure>'


def _step(step: RecordedStep, image: Callable[[str], bytes | None]) -> str:
    parts = [f'<section class="step{"" if step.ok else " failed"}" id="step-{step.n}">']
    parts.append(f"<h2>{step.n}. {_e(step.title or step.op)}</h2>")
    meta = [_when(step.started), f"{step.ms:g} ms"]
    if step.profile:
        meta.append(f"profile {step.profile}")
    if step.url:
        meta.append(step.url)
    parts.append(f'<div class="meta">{" · ".join(_e(m) for m in meta)}</div>')
    if step.args:
        parts.append(f"<pre>{_e(json.dumps(step.args, ensure_ascii=False, indent=1))}</pre>")
    if step.before or step.after:
        parts.append('<div class="pair">')
        parts.append(_image(image(step.before) if step.before else None, "before"))
        parts.append(_image(image(step.after) if step.after else None, "after"))
        parts.append("</div>")
    for what, text in step_facts(step):
        if "\n" in text or what in ("console errors", "failed requests", "snapshot changes"):
            parts.append(f"<p>{_e(what.capitalize())}:</p><pre>{_e(text)}</pre>")
        else:
            parts.append(f"<p{_CLASS.get(what, '')}>{_e(what.capitalize())}: {_e(text)}</p>")
    parts.append("</section>")
    return "\n".join(parts)


def write(
    path: Path,
    session: SessionSummary,
    steps: list[RecordedStep],
    image: Callable[[str], bytes | None],
) -> Path:
    """Write the report of ``session`` to ``path``; ``image(name)`` reads an image's bytes."""
    title = f"{session.agent} — browserdeck session {session.id}"
    ended = _when(session.ended) if session.ended else "still running"
    summary = (
        '<table class="summary">'
        f"<tr><td>Agent</td><td>{_e(session.agent)} ({_e(session.via)})</td></tr>"
        f"<tr><td>Profiles</td><td>{_e(', '.join(session.profiles) or '—')}</td></tr>"
        f"<tr><td>Started</td><td>{_e(_when(session.started))}</td></tr>"
        f"<tr><td>Ended</td><td>{_e(ended)}</td></tr>"
        f"<tr><td>Calls</td><td>{session.calls} ({session.errors} failed)</td></tr>"
        "</table>"
    )
    body = "\n".join(_step(step, image) for step in steps)
    page = (
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<meta name=\"generator\" content=\"browserdeck {__version__}\">"
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>"
        f"<header><h1>{_e(title)}</h1><p>{len(steps)} steps</p></header>"
        f"<main>{summary}<hr>{body}</main></body></html>\n"
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    write_private(path, page.encode("utf-8"))
    return path
