"""docs/configuration.md, generated from the declarations: ``python -m browserdeck.config``."""

from __future__ import annotations

import json

from browserdeck.config.model import SETTINGS, default_config
from browserdeck.config.profile import PROFILE_FIELDS
from browserdeck.config.schema import Setting

_TAKES_EFFECT = {
    "": "at once",
    "profile": "restarts the profile's browser",
    "launched": "restarts launched browsers",
    "relay": "restarts extension profiles",
}


def settings_markdown() -> str:
    """docs/configuration.md, generated from the schema (a test keeps the file in step)."""

    def table(settings: tuple[Setting, ...], first: str) -> list[str]:
        rows = [
            f"| {first} | type | default | when saved | meaning |",
            "|---|---|---|---|---|",
        ]
        for s in settings:
            kind = s.type + (f" ({' / '.join(s.choices)})" if s.choices else "")
            default = "—" if s.default is None else f"`{json.dumps(s.default)}`"
            when = _TAKES_EFFECT[s.restarts]
            rows.append(f"| `{s.key}` | {kind} | {default} | {when} | {s.description} |")
        return rows

    out = [
        "# Settings",
        "",
        "Generated from the declarations in `app/browserdeck/config/` (the fields of",
        "`Config` in `model.py` and of `ProfileConfig` in `profile.py`) by",
        "`python -m browserdeck.config > docs/configuration.md`; do not edit by hand.",
        "",
        f"File: `{'<config dir>'}/config.json` (`browserdeck paths` shows where). Written",
        "atomically; a file that fails to parse is kept as `config.json.bad-<time>` and reported.",
        "",
        *table(SETTINGS, "setting"),
    ]
    out += [
        "",
        "## Profiles",
        "",
        "`profiles` is an object keyed by profile name (lowercase letters, digits and `-`,",
        "starting with a letter or digit, at most 64 characters). Each profile:",
        "",
        *table(PROFILE_FIELDS, "field"),
    ]
    defaults = json.dumps(default_config().to_json()["profiles"], indent=2)
    out += [
        "",
        "Managed profiles get a CDP port from 18800–18899 once, at creation, and keep it.",
        "Ports must be 1024–65535 and no two listeners (control API, relays, managed",
        "profiles) may share one. Default profiles:",
        "",
        "```json",
        defaults,
        "```",
        "",
        "## Adding a setting",
        "",
        "A setting is one field of `Config` (global) or `ProfileConfig` (per profile) whose",
        "default is `declare(kind, default, description, label=…, help=…, …)`: its type,",
        "default, bounds or choices, what saving it restarts, where the settings dialog shows",
        "it and its words there. The config file, validation, the API's schema, the dialog,",
        "`reconfig`'s restarts and this page all read that one declaration; then regenerate",
        "this page (the command above). A profile field that only some drivers use is",
        "declared `per_driver=True` and listed in those drivers' `DriverSpec.fields`.",
        "",
    ]
    return "\n".join(out)
