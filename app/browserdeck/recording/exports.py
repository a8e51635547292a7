"""Writing a recorded session out: a Playwright trace, an HTML report or a WebM video.

Every export waits until the session's steps so far are written, then writes one file
under ``<state dir>/exports`` (a session's export of a format replaces the last one),
kept within the artifact limits like every folder of saved files, and answers its
absolute path. Each writer reads only the recording (already redacted); ``scrub`` runs
over the whole file once more, for secrets the vault learned since.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Literal

from browserdeck import artifacts
from browserdeck.recording import report, trace
from browserdeck.util import paths

if TYPE_CHECKING:
    from pathlib import Path

    from browserdeck.deck_recording import RecordingCalls
    from browserdeck.recording.recorder import Recorder

Format = Literal["trace", "html", "video"]
SUFFIX = {"trace": "-trace.zip", "html": ".html", "video": ".webm"}


async def export(recorder: Recorder, sid: str, fmt: Format, deck: RecordingCalls | None = None) -> Path:
    """Write session ``sid`` as ``fmt``; the file's path."""
    await recorder.settled(sid)
    info, steps = recorder.timeline(sid)
    folder = paths.artifacts_dir("exports")
    path = (folder / f"{info.id}{SUFFIX[fmt]}").resolve()

    def image(name: str) -> bytes | None:
        return recorder.image(info.id, name)

    if fmt == "trace":
        await asyncio.to_thread(trace.write, path, info, steps, image)
    elif fmt == "html":
        await asyncio.to_thread(report.write, path, info, steps, image)
    else:
        from browserdeck.recording import video

        await video.write(path, info, steps, image, deck)
    artifacts.prune(folder, keep=path)
    return path
