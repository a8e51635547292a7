"""`browserdeck pair` and `browserdeck relay-url`: hand the relay to the extension or a script.

Both read the config and the relay token locally; they do not need the service running
(the relay itself only runs while browserdeck does).
"""

from __future__ import annotations

import sys

# Not `from typing import`: typing costs a CLI call about a fifth of its start-up.
# Nor argparse and json here: every command declared after these (`mcp`, `tray`) imports
# this module to build its parser, and `browserdeck mcp` starts the service only after.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any


def _extension_profile(name: str | None) -> tuple[str, int]:
    from browserdeck import config
    from browserdeck.driverspecs import spec_of

    # Read only: a broken file is reported, never moved aside behind the user's back.
    cfg = config.read()
    if name:
        profile = cfg.profile(name)
        if not spec_of(profile.driver).via_extension:
            raise SystemExit(f"error: profile {name!r} is {profile.driver}, not an extension profile")
    else:
        found = [p for p in cfg.profiles.values() if spec_of(p.driver).via_extension]
        if not found:
            raise SystemExit("error: no extension profile is configured\n"
                             "  hint: browserdeck create-profile chrome --driver extension")
        profile = found[0]
    return profile.name, cfg.relay_port_of(profile)


def cmd_pair(args: argparse.Namespace) -> int:
    # Imported per command: building the CLI parser must stay cheap.
    import json

    from browserdeck.relay import pairing
    from browserdeck.secrets import tokens

    name, port = _extension_profile(args.profile)
    token = tokens.get_token("relay") or ""
    url = pairing.pairing_url(port, token, profile=name)
    if args.json:
        print(json.dumps({"profile": name, "port": port, "pairingUrl": url}))
        return 0
    opened = None
    if args.open:
        from browserdeck import desktop

        # Never the pairing URL itself: a command line is world-readable (/proc/*/cmdline)
        # and the URL carries the relay token. The bare options page holds no secret.
        opened = desktop.open_in_chrome(pairing.options_url())
    print(pairing.pairing_help(port, token, profile=name))
    if opened is not None and opened.ok:
        print(
            "\n(opened the extension's options in Chrome: paste the address above into its "
            "address bar, or enter the port and token there)",
            file=sys.stderr,
        )
    elif opened is not None:
        print(f"\n(could not open Chrome: {opened.why})", file=sys.stderr)
    return 0


def cmd_relay_url(args: argparse.Namespace) -> int:
    import json

    from browserdeck.relay import pairing
    from browserdeck.secrets import tokens

    name, port = _extension_profile(args.profile)
    token = tokens.get_token("relay") or ""
    if args.json:
        data: dict[str, Any] = {"profile": name, "cdpUrl": f"http://127.0.0.1:{port}",
                                "headers": {"Authorization": f"Bearer {token}"}}
        print(json.dumps(data, indent=2))
    else:
        print(pairing.relay_url_help(port, token, profile=name))
    return 0


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("pair", parents=[common],
                       help="pair the Chrome extension with this browserdeck (relay port + token)")
    p.add_argument("--open", action="store_true", help="open the pairing page in Chrome")
    p.set_defaults(local=cmd_pair)
    p = sub.add_parser("relay-url", parents=[common],
                       help="the relay's CDP endpoint and token, for your own Playwright/Puppeteer")
    p.set_defaults(local=cmd_relay_url)
