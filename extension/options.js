import { DEFAULT_PORT, DEFAULT_PROFILE } from "./shared.js";

// A profile name as browserdeck allows it (config.py): it goes into the token proof.
const PROFILE_NAME = /^[a-z0-9][a-z0-9-]{0,63}$/;

const $ = (id) => document.getElementById(id);

function notice(text, isError = false) {
  const box = $("notice");
  box.textContent = text;
  box.className = isError ? "notice error" : "notice";
  box.hidden = !text;
}

// `browserdeck pair` opens options.html#port=..&token=..&profile=..: store them, then wipe the
// fragment so the token does not linger in the address bar or in this tab's history.
async function takePairingFragment() {
  if (!location.hash || location.hash.length < 2) return false;
  const params = new URLSearchParams(location.hash.slice(1));
  history.replaceState(null, "", location.pathname);
  const token = params.get("token");
  const port = Number(params.get("port") || DEFAULT_PORT);
  const profile = params.get("profile") || DEFAULT_PROFILE;
  if (!token || !/^[A-Za-z0-9_-]{16,}$/.test(token) || !(port > 0 && port < 65536) || !PROFILE_NAME.test(profile)) {
    notice("That pairing link is incomplete or malformed; run `browserdeck pair` again.", true);
    return false;
  }
  // The port and profile go into the token proof: the extension talks only to that
  // profile's relay on that port.
  await chrome.storage.local.set({ relayToken: token, relayPort: port, relayProfile: profile });
  notice(`Paired with browserdeck on port ${port} (profile ${profile}). You can close this tab; click the browserdeck icon on a tab to share it.`);
  return true;
}

async function showStatus() {
  try {
    const reply = await chrome.runtime.sendMessage({ type: "getState" });
    if (!reply || !reply.ok) return;
    const state = reply.result;
    document.documentElement.style.setProperty("--accent", state.color || "#00AA00");
    $("status").className = `status ${state.status}`;
    $("status-text").textContent = state.statusText;
    $("status-detail").textContent = state.detail ? ` ${state.detail}` : "";
  } catch {}
}

async function main() {
  $("ext-id").textContent = chrome.runtime.id;
  await takePairingFragment();
  const { relayPort, relayToken, relayProfile } = await chrome.storage.local.get(["relayPort", "relayToken", "relayProfile"]);
  $("port").value = relayPort || DEFAULT_PORT;
  $("profile").value = relayProfile || DEFAULT_PROFILE;
  $("token").value = relayToken || "";
  $("show").addEventListener("click", () => {
    const input = $("token");
    input.type = input.type === "password" ? "text" : "password";
    $("show").textContent = input.type === "password" ? "Show" : "Hide";
  });
  $("form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const port = Number($("port").value || DEFAULT_PORT);
    const token = $("token").value.trim();
    const profile = $("profile").value.trim() || DEFAULT_PROFILE;
    if (!(port > 0 && port < 65536)) return notice("The port must be a number between 1 and 65535.", true);
    if (!PROFILE_NAME.test(profile)) return notice("The profile is the name of a browserdeck extension profile, e.g. chrome.", true);
    if (!/^[A-Za-z0-9_-]{16,}$/.test(token)) return notice("That does not look like a browserdeck token (run `browserdeck token --relay`).", true);
    await chrome.storage.local.set({ relayPort: port, relayProfile: profile, relayToken: token });
    $("saved").textContent = "Saved.";
    notice("");
  });
  chrome.runtime.onMessage.addListener((message) => {
    if (message && message.type === "state") void showStatus();
  });
  await showStatus();
}

void main();
