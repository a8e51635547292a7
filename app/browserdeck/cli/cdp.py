"""`browserdeck cdp-url`: how your own Playwright/Puppeteer reaches a managed browser.

A managed browser has no DevTools port of its own (it talks to browserdeck over a pipe);
browserdeck serves its CDP on ``127.0.0.1:<cdpPort>`` behind the API token. This command
reads the config and the token locally; the endpoint itself answers while the profile's
browser runs (``browserdeck start --profile NAME``).
"""

from __future__ import annotations

# Not `from typing import`: typing costs a CLI call about a fifth of its start-up.
# Nor argparse and json here: `browserdeck mcp` imports this module to build its parser,
# and starts the service only after.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any


def cdp_url_help(port: int, token: str, *, profile: str) -> str:
    """Text for `browserdeck cdp-url`: the endpoint and how to pass the token."""
    http = f"http://127.0.0.1:{port}"
    ws = f"ws://127.0.0.1:{port}/devtools/browser"
    return f"""CDP endpoint of the managed browser of profile {profile}:
  {http}        (WebSocket: {ws})
Every request needs the API token as a header:
  Authorization: Bearer {token}

Playwright (Python):
  browser = await playwright.chromium.connect_over_cdp(
      "{http}", headers={{"Authorization": "Bearer {token}"}})

Playwright (Node):
  const browser = await chromium.connectOverCDP("{http}",
      {{ headers: {{ Authorization: "Bearer {token}" }} }});

Puppeteer:
  const browser = await puppeteer.connect({{ browserWSEndpoint: "{ws}",
      headers: {{ Authorization: "Bearer {token}" }} }});

It answers while the browser runs (`browserdeck start --profile {profile}`). file:// URLs
stay refused unless allowFileUrls is on, for these clients as for agents.
"""


def cmd_cdp_url(args: argparse.Namespace) -> int:
    # Imported per command: building the CLI parser must stay cheap.
    import json

    from browserdeck import config
    from browserdeck.driverspecs import spec_of
    from browserdeck.secrets import tokens

    # Read only: a broken file is reported, never moved aside behind the user's back.
    cfg = config.read()
    profile = cfg.profile(args.profile)
    spec = spec_of(profile.driver)
    if not spec.launches:
        # Only a browser browserdeck launches has a gateway of ours to hand out.
        hint = "browserdeck relay-url" if spec.via_extension else "its cdpUrl setting"
        raise SystemExit(f"error: profile {profile.name!r} is {profile.driver}, not managed\n"
                         f"  hint: see {hint}")
    assert profile.cdp_port is not None
    if not cfg.may_launch(profile):
        # attachOnly: browserdeck does not own that browser; its port is the browser's own.
        url = cfg.cdp_url_of(profile)
        if args.json:
            print(json.dumps({"profile": profile.name, "cdpUrl": url, "headers": {}}, indent=2))
        else:
            print(f"profile {profile.name} is attach-only: its browser's own DevTools port is "
                  f"{url} (browserdeck adds no token there)")
        return 0
    token = tokens.get_token("api") or ""
    if args.json:
        data: dict[str, Any] = {
            "profile": profile.name,
            "cdpUrl": f"http://127.0.0.1:{profile.cdp_port}",
            "webSocketUrl": f"ws://127.0.0.1:{profile.cdp_port}/devtools/browser",
            "headers": {"Authorization": f"Bearer {token}"},
        }
        print(json.dumps(data, indent=2))
    else:
        print(cdp_url_help(profile.cdp_port, token, profile=profile.name))
    return 0


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("cdp-url", parents=[common],
                       help="a managed browser's CDP endpoint and token, for your own "
                       "Playwright/Puppeteer")
    p.set_defaults(local=cmd_cdp_url)
