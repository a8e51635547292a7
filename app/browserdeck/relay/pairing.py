"""What `browserdeck pair` and `browserdeck relay-url` hand to the user.

Pairing passes the relay port, the profile and the token to the extension's options page
in the URL *fragment* (the port and profile go into the token proof, relay/protocol.py):
fragments never reach a server, and the options page stores them in
``chrome.storage.local`` and then clears the fragment from the address bar. Web pages
cannot open that URL (options.html is not web-accessible); only the user, or a
program on this machine that could read the token anyway, can.
"""

from __future__ import annotations

import urllib.parse

from browserdeck.relay.extension_id import EXTENSION_ID


def options_url(extension_id: str = EXTENSION_ID) -> str:
    return f"chrome-extension://{extension_id}/options.html"


def pairing_url(
    port: int, token: str, *, profile: str | None = None, extension_id: str = EXTENSION_ID
) -> str:
    """The extension options URL that stores ``port`` and ``token`` when opened in Chrome."""
    fragment = {"port": str(port), "token": token}
    if profile:
        fragment["profile"] = profile
    return f"{options_url(extension_id)}#{urllib.parse.urlencode(fragment)}"


def pairing_help(port: int, token: str, *, profile: str | None = None) -> str:
    """Text for `browserdeck pair` when it cannot open Chrome itself."""
    url = pairing_url(port, token, profile=profile)
    return (
        "Open this address in the Chrome that has the browserdeck extension (paste it into\n"
        "the address bar; Chrome only opens extension pages typed or launched locally):\n\n"
        f"  {url}\n\n"
        "Or open the extension's options (right-click its icon > Options) and enter\n"
        f"port {port}, profile {profile or 'chrome'} and the token printed by "
        "`browserdeck token --relay`."
    )


def relay_url_help(port: int, token: str, *, profile: str | None = None) -> str:
    """Text for `browserdeck relay-url`: the CDP endpoint and how to pass the token."""
    http = f"http://127.0.0.1:{port}"
    ws = f"ws://127.0.0.1:{port}/cdp"
    name = f" (profile {profile})" if profile else ""
    return f"""CDP endpoint of your own Chrome through the browserdeck relay{name}:
  {http}        (WebSocket: {ws})
Every request needs the relay token as a header:
  Authorization: Bearer {token}

Playwright (Python):
  browser = await playwright.chromium.connect_over_cdp(
      "{http}", headers={{"Authorization": "Bearer {token}"}})
  context = browser.contexts[0]        # your Chrome profile; pages = the tabs you shared

Playwright (Node):
  const browser = await chromium.connectOverCDP("{http}",
      {{ headers: {{ Authorization: "Bearer {token}" }} }});

Puppeteer:
  const browser = await puppeteer.connect({{ browserWSEndpoint: "{ws}",
      headers: {{ Authorization: "Bearer {token}" }} }});

A client that cannot send headers may use {ws}?token=<token>, but the token can then
end up in logs. Only the tabs you share (click the browserdeck icon in Chrome) are visible;
new pages open as tabs in your Chrome. One client at a time by default (relayClientMode
single-active): a second one gets HTTP 409, and GET {http}/client-slot says who holds it.
"""


__all__ = ["options_url", "pairing_help", "pairing_url", "relay_url_help"]
