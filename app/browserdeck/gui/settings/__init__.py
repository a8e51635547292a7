"""The settings dialog, built from the declared schema (``config.SETTINGS``/``PROFILE_FIELDS``).

Every editor is made from a ``Setting``'s type, default, description and
choices; the only GUI-side knowledge is which page a key sits on and a
friendlier label. Values are checked as you type with the same check the
service uses (``config.check_setting``), and a candidate ``Config`` is checked as a whole
(``config.check_consistency``: port collisions, default profile) before Save is
enabled. Save hands the candidate to the service, which writes it atomically and
restarts only what changed; the dialog never blocks the loop (no ``exec()``).

The package is split along its seams: ``fields`` (one editor per setting, labels and
help in a user's words), ``pages`` (the tabs and how a profile is shown) and
``dialog`` (edits, validation, Save).
"""

from __future__ import annotations

from browserdeck.gui.approval import APPROVAL_HELP, APPROVAL_LABELS
from browserdeck.gui.settings.dialog import SettingsDialog
from browserdeck.gui.settings.fields import Field, attr_of, label_of, port_holder
from browserdeck.gui.settings.words import CHECKBOX_TEXT, HELP, LABELS

# The approval settings' words live with the approval window (gui/approval.py).
LABELS.update(APPROVAL_LABELS)
HELP.update(APPROVAL_HELP)

__all__ = [
    "CHECKBOX_TEXT",
    "HELP",
    "LABELS",
    "Field",
    "SettingsDialog",
    "attr_of",
    "label_of",
    "port_holder",
]
