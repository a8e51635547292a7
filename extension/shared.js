// Constants shared by the service worker, the popup and the options page.

export const DEFAULT_PORT = 18792;
export const PROTOCOL_VERSION = 1;
// The relay selects this subprotocol; the token travels as a second one ("bdtoken.<token>")
// because the browser WebSocket API cannot send an Authorization header.
export const SUBPROTOCOL = "browserdeck-relay";
export const TOKEN_SUBPROTOCOL_PREFIX = "bdtoken.";
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
