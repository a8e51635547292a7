"""Session recording: every agent session leaves a timeline a person can read.

* ``timeline.py``: what a session and each of its steps keep (plain data, redacted);
* ``recorder.py``: the front-door addon that records every call of an agent session, with
  a screenshot before each action (on its path) and everything else in the background;
* ``store.py``: the sessions on disk, within the artifact limits;
* ``shots.py``: masking, outlining and captioning the images (Pillow, on a thread);
* ``trace.py``, ``report.py``, ``video.py``: the exports (a Playwright trace, one HTML
  file, a WebM);
* ``live.py``: the live view of a tab (CDP screencast frames while someone watches);
* ``takeover.py``: the user takes a profile's browser over; agents wait or are refused.

docs/recording.md says what each does and why.
"""
