"""A recorded session as a WebM video: each action's images before and after, in order.

Playwright's own video needs its ffmpeg download; this needs nothing beyond the browser.
A headless browser of the engine's own draws the recorded images (already masked, the
target outlined, the step captioned) onto a canvas, one after another, and records the
canvas with the browser's ``MediaRecorder`` (VP9 or VP8 in WebM). Each image shows for
``HOLD_MS``, a step without images as a card naming it, so a video plays in about a
second per action. A long session shows its last ``MAX_IMAGES`` images (the first card
says so).
"""

from __future__ import annotations

import base64
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from browserdeck.errors import Unavailable
from browserdeck.recording.timeline import scrub
from browserdeck.util.files import write_private

if TYPE_CHECKING:
    from browserdeck.deck_recording import RecordingCalls
    from browserdeck.recorded import RecordedStep, SessionSummary

log = logging.getLogger(__name__)

HOLD_MS = 600
CARD_MS = 350
MAX_IMAGES = 240

# Draws each frame for its time while MediaRecorder records the canvas; the WebM's bytes
# come back as base64 (one string: an evaluate's result).
_RECORD_JS = """async ([frames, width, height]) => {
  const canvas = document.createElement('canvas');
  canvas.width = width; canvas.height = height; document.body.append(canvas);
  const g = canvas.getContext('2d');
  const mime = ['video/webm;codecs=vp9', 'video/webm;codecs=vp8', 'video/webm']
    .find((t) => MediaRecorder.isTypeSupported(t));
  if (!mime) throw new Error('this browser records no WebM');
  const recorder = new MediaRecorder(canvas.captureStream(25),
    {mimeType: mime, videoBitsPerSecond: 2500000});
  const chunks = [];
  recorder.ondataavailable = (e) => chunks.push(e.data);
  const stopped = new Promise((r) => { recorder.onstop = r; });
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const card = (text) => {
    g.fillStyle = '#202226'; g.fillRect(0, 0, width, height);
    g.fillStyle = '#eeeeee'; g.font = '28px sans-serif';
    text.split('\\n').forEach((line, i) => g.fillText(line, 40, 80 + i * 40));
  };
  recorder.start(200);
  for (const [kind, value, ms] of frames) {
    if (kind === 'image') {
      const img = new Image();
      img.src = 'data:image/jpeg;base64,' + value;
      await img.decode();
      g.fillStyle = '#202226'; g.fillRect(0, 0, width, height);
      const k = Math.min(width / img.width, height / img.height);
      g.drawImage(img, 0, 0, img.width * k, img.height * k);
    } else {
      card(value);
    }
    await sleep(ms);
  }
  recorder.stop();
  await stopped;
  const bytes = new Uint8Array(await new Blob(chunks, {type: mime}).arrayBuffer());
  let text = '';
  for (let i = 0; i < bytes.length; i += 0x8000) {
    text += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  }
  return btoa(text);
}"""


def frames_of(
    session: SessionSummary, steps: list[RecordedStep], image: Callable[[str], bytes | None]
) -> list[list[Any]]:
    """What the video shows, in order: ``[kind, value, milliseconds]``."""
    out: list[list[Any]] = []
    for step in steps:
        names = [n for n in (step.before, step.after) if n]
        pictures = [data for data in (image(n) for n in names) if data]
        if pictures:
            for data in pictures:
                out.append(["image", base64.b64encode(data).decode("ascii"), HOLD_MS])
        else:
            line = f"{step.n} · {step.title or step.op}"
            if step.error:
                line += "\nfailed: " + step.error.get("message", "")[:120]
            out.append(["card", scrub(line), CARD_MS])
    head = scrub(f"{session.agent}\n{len(steps)} steps · browserdeck session {session.id}")
    images = [i for i, f in enumerate(out) if f[0] == "image"]
    if len(images) > MAX_IMAGES:
        out = out[images[-MAX_IMAGES]:]
        head += f"\n(the last {MAX_IMAGES} images of {len(images)})"
    return [["card", head, 1200], *out]


async def write(
    path: Path,
    session: SessionSummary,
    steps: list[RecordedStep],
    image: Callable[[str], bytes | None],
    deck: RecordingCalls | None,
) -> Path:
    """Write the video of ``session`` to ``path`` (a headless browser records it)."""
    if deck is None:
        raise Unavailable("a video needs the browser engine", code="not_available")
    from browserdeck.chrome.executables import find_browser

    frames = frames_of(session, steps, image)
    cfg = deck.service.config
    engine = await deck.service.engine_ready()
    executable = find_browser(cfg.executable_path, headless=True).path
    # It draws only the recording's own images, yet as root Chromium needs no sandbox.
    root = hasattr(os, "geteuid") and os.geteuid() == 0
    args = ["--mute-audio", *(["--no-sandbox"] if cfg.no_sandbox or root else [])]
    browser = await engine.launch_scratch(executable, args)
    try:
        page = await browser.new_page()
        try:
            encoded = await page.evaluate(_RECORD_JS, [frames, 1280, 748])
        except Exception as exc:
            raise Unavailable(
                f"the video could not be recorded: {exc}",
                hint="export the trace or the HTML report instead",
                code="video_failed",
            ) from None
    finally:
        await browser.close()
    path.parent.mkdir(parents=True, exist_ok=True)
    write_private(path, base64.b64decode(encoded))
    return path
