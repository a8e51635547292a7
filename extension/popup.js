import { isRestricted, relayHttpUrl } from "./shared.js";

const $ = (id) => document.getElementById(id);
let currentTab = null;

async function call(type, extra = {}) {
  const reply = await chrome.runtime.sendMessage({ type, ...extra });
  if (!reply || !reply.ok) throw new Error(reply ? reply.error : "no answer from the extension");
  return reply.result;
}

function render(state) {
  document.documentElement.style.setProperty("--accent", state.color || "#00AA00");
  $("profile").textContent = state.profile ? `· ${state.profile}` : "";
  $("status").className = `status ${state.status}`;
  $("status-text").textContent = state.statusText;
  $("status-detail").textContent = state.detail ? ` ${state.detail}` : "";
  $("relay-url").textContent = relayHttpUrl(state.port);

  const list = $("tabs");
  list.replaceChildren();
  for (const tab of state.shared) {
    const li = document.createElement("li");
    const dot = document.createElement("span");
    dot.className = `dot${tab.attached ? " on" : ""}`;
    dot.title = tab.attached ? "an agent is attached to this tab" : "shared, no agent attached yet";
    const title = document.createElement("span");
    title.className = "title";
    title.textContent = tab.title || tab.url;
    title.title = tab.restricted ? `${tab.url} (hidden from agents while on a browser page)` : tab.url;
    title.addEventListener("click", () => void call("focusTab", { tabId: tab.tabId }));
    const stop = document.createElement("button");
    stop.textContent = "Stop";
    stop.addEventListener("click", async () => render(await call("toggleTab", { tabId: tab.tabId })));
    li.append(dot, title, stop);
    list.append(li);
  }
  $("no-tabs").hidden = state.shared.length > 0;

  const toggle = $("toggle");
  if (!currentTab) {
    toggle.disabled = true;
    return;
  }
  const shared = state.shared.some((tab) => tab.tabId === currentTab.id);
  $("current-title").textContent = currentTab.title || currentTab.url || "this tab";
  const restricted = isRestricted(currentTab.url || "");
  $("current-note").textContent = restricted
    ? "Chrome does not let extensions control this kind of page."
    : shared ? "Agents can see and control this tab." : "Agents cannot see this tab.";
  toggle.textContent = shared ? "Stop sharing" : "Share with agents";
  toggle.className = shared ? "" : "primary";
  toggle.disabled = restricted && !shared;
}

async function refresh() {
  render(await call("getState"));
}

async function main() {
  [currentTab] = await chrome.tabs.query({ active: true, currentWindow: true });
  $("toggle").addEventListener("click", async () => {
    if (currentTab) render(await call("toggleTab", { tabId: currentTab.id }));
  });
  $("reconnect").addEventListener("click", async () => render(await call("reconnect")));
  $("options").addEventListener("click", () => chrome.runtime.openOptionsPage());
  chrome.runtime.onMessage.addListener((message) => {
    if (message && message.type === "state") void refresh();
  });
  await refresh();
}

main().catch((error) => {
  $("status-text").textContent = "Error";
  $("status-detail").textContent = ` ${error.message}`;
});
