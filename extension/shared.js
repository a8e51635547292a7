// Constants shared by the service worker, the popup and the options page.

export const DEFAULT_PORT = 18792;
// The profile a pairing without one is for (browserdeck's default extension profile).
export const DEFAULT_PROFILE = "chrome";
export const PROTOCOL_VERSION = 3;
// The relay selects this subprotocol. The token never travels: the extension and the relay
// prove to each other that they know it (HMAC challenge bound to the port dialled and the
// profile paired, relay/protocol.py).
export const SUBPROTOCOL = "browserdeck-relay";
export const DEFAULT_COLOR = "#00AA00";

// Pages Chrome does not let extensions debug (or that belong to Chrome/other extensions).
const RESTRICTED = [
  "chrome://", "chrome-untrusted://", "chrome-search://", "chrome-extension://",
  "devtools://", "edge://", "brave://", "opera://", "vivaldi://", "view-source:",
  "https://chromewebstore.google.com/", "https://chrome.google.com/webstore",
];

export function isRestricted(url) {
  return typeof url === "string" && RESTRICTED.some((prefix) => url.startsWith(prefix));
}

export function relayHttpUrl(port) {
  return `http://127.0.0.1:${port}`;
}

export const STATUS_TEXT = {
  idle: "Starting…",
  unpaired: "Not paired",
  connecting: "Connecting…",
  connected: "Connected",
  error: "Not connected",
  paused: "Paused",
};
