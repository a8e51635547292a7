"""The settings dialog, built from the declared schema (``config.SETTINGS``/``PROFILE_FIELDS``).

Every editor is made from a ``Setting``'s declaration (type, bounds, choices, the
group that picks its page, its label, checkbox text and help); the dialog holds no
table of its own. Values are checked as you type with the same check the
service uses (``config.check_setting``), and a candidate ``Config`` is checked as a whole
(``config.check_consistency``: port collisions, default profile) before Save is
enabled. Save hands the candidate to the service, which writes it atomically and
restarts only what changed; the dialog never blocks the loop (no ``exec()``).

The package is split along its seams: ``fields`` (one editor per setting), ``pages``
(the tabs and how a profile is shown) and ``dialog`` (edits, validation, Save).
"""

from __future__ import annotations

from browserdeck.gui.settings.dialog import SettingsDialog
from browserdeck.gui.settings.fields import (
    Field,
    attr_of,
    label_of,
    port_holder,
)

__all__ = [
    "Field",
    "SettingsDialog",
    "attr_of",
    "label_of",
    "port_holder",
]
