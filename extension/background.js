// browserdeck extension service worker.
//
// Bridges the tabs the user shares to the local browserdeck relay (ws://127.0.0.1:<port>/extension),
// which presents them to agents as a Chrome DevTools endpoint. The relay holds the CDP
// bookkeeping; this worker attaches chrome.debugger when the relay asks, forwards commands
// and events, and reports tab lifecycle (shared, updated, closed, popups).
//
// MV3 rules this file follows (see docs/extension.md):
// - every listener is registered at the top level, so a restarted worker gets its events;
// - state lives in chrome.storage.session and is rehydrated on start (`ready`);
// - an app-level message at least every 15 s keeps the worker alive while connected, and a
//   30 s chrome.alarms alarm restarts a stopped worker and reconnects it;
// - reconnects back off from 1 s to 30 s with jitter and stop on an auth refusal.
//
// Wire format (relay/protocol.py): a JSON header, then "\n" and a JSON payload for CDP
// commands, results and events, so the relay can splice payloads without re-encoding them.

import {
  DEFAULT_COLOR,
  DEFAULT_PORT,
  PROTOCOL_VERSION,
  STATUS_TEXT,
  SUBPROTOCOL,
  TOKEN_SUBPROTOCOL_PREFIX,
  isRestricted,
} from "./shared.js";

const KEEPALIVE_MS = 15000;
const SILENCE_MS = 45000;
const BACKOFF_MIN_MS = 1000;
const BACKOFF_MAX_MS = 30000;
const BUSY_RETRY_MS = 30000;
const ALARM = "browserdeck-keepalive";
const DROPPED_EVENTS = new Set(["Network.dataReceived", "Network.resourceChangedPriority"]);

const state = {
  ws: null,
  status: "idle",
  detail: "",
  port: DEFAULT_PORT,
  profile: null,
  color: DEFAULT_COLOR,
  shared: new Map(), // tabId -> {tabId, targetId, openerTabId}
  attached: new Set(), // tabIds our debugger is attached to
  sharing: new Map(), // tabId -> pending share promise
  tabOps: new Map(), // tabId -> tail of that tab's attach/detach chain
  retries: 0,
  retryTimer: null,
  keepaliveTimer: null,
  lastHeard: 0,
  stopRetrying: false,
  instance: "",
  browserContextId: null,
};

// ---------------------------------------------------------------- listeners (top level)
chrome.runtime.onInstalled.addListener(() => void ensureAlarm());
chrome.runtime.onStartup.addListener(() => void ensureAlarm());
chrome.alarms.onAlarm.addListener((alarm) => {
  if (alarm.name === ALARM) void ready.then(() => maybeConnect("alarm"));
});
chrome.debugger.onEvent.addListener(onDebuggerEvent);
chrome.debugger.onDetach.addListener((source, reason) => void onDebuggerDetach(source, reason));
chrome.tabs.onRemoved.addListener((tabId) => void onTabRemoved(tabId));
chrome.tabs.onUpdated.addListener((tabId, change, tab) => void onTabUpdated(tabId, change, tab));
chrome.tabs.onReplaced.addListener((added, removed) => void onTabReplaced(added, removed));
chrome.webNavigation.onCreatedNavigationTarget.addListener((details) => void onNavigationTarget(details));
chrome.storage.onChanged.addListener(onStorageChanged);
chrome.runtime.onMessage.addListener(onUiMessage);
chrome.commands.onCommand.addListener((command) => {
  if (command === "toggle-share") void toggleActiveTab();
});

const ready = boot();

// The popup and the test harness use these; nothing outside the extension can reach them.
globalThis.browserdeck = {
  state,
  ready,
  shareTab,
  unshareTab,
  toggleActiveTab,
  reconnect: () => reconnect("user"),
  snapshot,
  // Chrome's own detach notifications, callable by tests (headless has no Cancel button).
  onDebuggerDetach,
};

// ---------------------------------------------------------------- start-up
async function boot() {
  await ensureAlarm();
  const local = await chrome.storage.local.get(["relayPort", "instance", "color", "profile"]);
  if (!local.instance) {
    local.instance = crypto.randomUUID();
    await chrome.storage.local.set({ instance: local.instance });
  }
  state.instance = local.instance;
  state.port = Number(local.relayPort) || DEFAULT_PORT;
  state.color = local.color || DEFAULT_COLOR;
  state.profile = local.profile || null;
  const saved = await chrome.storage.session.get(["shared", "attached", "browserContextId"]);
  for (const entry of saved.shared || []) {
    try {
      await chrome.tabs.get(entry.tabId);
      state.shared.set(entry.tabId, entry);
    } catch {
      // The tab closed while the worker was stopped.
    }
  }
  for (const tabId of saved.attached || []) state.attached.add(tabId);
  state.browserContextId = saved.browserContextId || null;
  await persist();
  void updateIcon();
  void updateBadges();
  await maybeConnect("boot");
}

async function ensureAlarm() {
  const existing = await chrome.alarms.get(ALARM);
  if (!existing) await chrome.alarms.create(ALARM, { periodInMinutes: 0.5 });
}

async function persist() {
  await chrome.storage.session.set({
    shared: [...state.shared.values()],
    attached: [...state.attached],
    browserContextId: state.browserContextId,
    status: { status: state.status, detail: state.detail },
  });
}

// ---------------------------------------------------------------- relay connection
async function maybeConnect(why) {
  const ws = state.ws;
  if (ws && (ws.readyState === WebSocket.OPEN || ws.readyState === WebSocket.CONNECTING)) return;
  if (state.stopRetrying && why !== "user" && why !== "settings") return;
  if (state.retryTimer) {
    clearTimeout(state.retryTimer);
    state.retryTimer = null;
  }
  const { relayPort, relayToken } = await chrome.storage.local.get(["relayPort", "relayToken"]);
  if (state.ws && state.ws.readyState <= WebSocket.OPEN) return; // raced with another caller
  if (!relayToken) {
    setStatus("unpaired", "Not paired with browserdeck: run `browserdeck pair`, or open Options and paste the token from `browserdeck token --relay`.");
    return;
  }
  state.port = Number(relayPort) || DEFAULT_PORT;
  const port = state.port;
  setStatus("connecting", `Connecting to browserdeck on 127.0.0.1:${port}…`);
  let sock;
  try {
    sock = new WebSocket(
      `ws://127.0.0.1:${port}/extension?instance=${encodeURIComponent(state.instance)}`,
      [SUBPROTOCOL, TOKEN_SUBPROTOCOL_PREFIX + relayToken],
    );
  } catch (error) {
    setStatus("error", `Cannot connect: ${error.message}. Check the token in Options.`);
    state.stopRetrying = true;
    return;
  }
  state.ws = sock;
  let opened = false;
  sock.onopen = () => {
    opened = true;
    void onOpen(sock);
  };
  sock.onmessage = (event) => onRelayMessage(sock, event.data);
  sock.onclose = (event) => void onClose(sock, event, opened, port, relayToken);
  sock.onerror = () => {}; // onclose follows with the details we can get
}

async function reconnect(why) {
  state.stopRetrying = false;
  state.retries = 0;
  const ws = state.ws;
  state.ws = null;
  if (ws) {
    try {
      ws.close(1000, "reconnecting");
    } catch {}
    await releaseDebuggers();
  }
  await maybeConnect(why);
}

async function onOpen(ws) {
  if (ws !== state.ws) return;
  state.retries = 0;
  state.lastHeard = Date.now();
  // A new relay connection has no client sessions: start from a clean debugger slate so
  // no client inherits another one's scripts or emulation (and the banner goes away).
  await releaseDebuggers();
  const tabs = [];
  for (const tabId of [...state.shared.keys()]) {
    const info = await tabInfo(tabId);
    if (info) tabs.push(info);
    else state.shared.delete(tabId);
  }
  await persist();
  send(ws, {
    method: "hello",
    params: {
      protocol: PROTOCOL_VERSION,
      version: chrome.runtime.getManifest().version,
      userAgent: navigator.userAgent,
      extensionId: chrome.runtime.id,
      instance: state.instance,
      browserContextId: state.browserContextId,
      tabs,
    },
  });
  setStatus("connected", `Connected to browserdeck on 127.0.0.1:${state.port}.`);
  startKeepalive(ws);
}

async function onClose(ws, event, opened, port, token) {
  if (ws !== state.ws) return;
  state.ws = null;
  stopKeepalive();
  await releaseDebuggers();
  let slow = false;
  if (event.code === 4401) {
    state.stopRetrying = true;
    setStatus("error", "The relay token changed: pair again (`browserdeck pair`).");
  } else if (event.code === 4400) {
    state.stopRetrying = true;
    setStatus("error", "This extension and browserdeck speak different protocol versions: reload the extension from browserdeck's extension/ folder.");
  } else if (event.code === 4409) {
    slow = true;
    setStatus("error", "Another browser's browserdeck extension is connected to this relay.");
  } else if (!opened) {
    const diagnosis = await diagnose(port, token);
    state.stopRetrying = Boolean(diagnosis.stop);
    slow = Boolean(diagnosis.slow);
    setStatus(diagnosis.status, diagnosis.detail);
  } else {
    setStatus("connecting", `Lost the connection to browserdeck (${event.code || "closed"}); reconnecting…`);
  }
  scheduleReconnect(slow);
}

// Browsers hide why a WebSocket upgrade failed; the relay says it over plain HTTP.
async function diagnose(port, token) {
  try {
    const response = await fetch(
      `http://127.0.0.1:${port}/extension/check?instance=${encodeURIComponent(state.instance)}`,
      { headers: { Authorization: `Bearer ${token}` }, cache: "no-store" },
    );
    if (response.status === 401) {
      return { status: "error", stop: true, detail: "browserdeck refused the token: pair again (`browserdeck pair`), or paste the output of `browserdeck token --relay` in Options." };
    }
    if (response.status === 409) {
      return { status: "error", slow: true, detail: "Another browser's browserdeck extension is connected to this relay." };
    }
    if (response.status === 403) {
      return { status: "error", stop: true, detail: "The relay refused this extension's origin (wrong extension id?)." };
    }
    return { status: "connecting", detail: `The relay answered but refused the connection (HTTP ${response.status}); retrying…` };
  } catch {
    return { status: "error", detail: `browserdeck is not running on port ${port}: start it (tray app or \`browserdeck serve\`), or fix the port in Options.` };
  }
}

function scheduleReconnect(slow) {
  if (state.stopRetrying || state.retryTimer) return;
  const base = slow ? BUSY_RETRY_MS : Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** state.retries);
  const delay = base * (0.8 + Math.random() * 0.4);
  state.retries += 1;
  state.retryTimer = setTimeout(() => {
    state.retryTimer = null;
    void maybeConnect("retry");
  }, delay);
}

function startKeepalive(ws) {
  stopKeepalive();
  state.keepaliveTimer = setInterval(() => {
    if (ws !== state.ws || ws.readyState !== WebSocket.OPEN) return;
    if (Date.now() - state.lastHeard > SILENCE_MS) {
      ws.close(4408, "no heartbeat from the relay");
      return;
    }
    // An app-level message (protocol pings do not count) keeps the MV3 worker alive.
    send(ws, { method: "ping" });
  }, KEEPALIVE_MS);
}

function stopKeepalive() {
  if (state.keepaliveTimer) clearInterval(state.keepaliveTimer);
  state.keepaliveTimer = null;
}

function send(ws, header, payload) {
  if (!ws || ws.readyState !== WebSocket.OPEN) return false;
  const head = JSON.stringify(header);
  ws.send(payload === undefined ? head : `${head}\n${JSON.stringify(payload)}`);
  return true;
}

function sendToRelay(header) {
  return send(state.ws, header);
}

// ---------------------------------------------------------------- relay -> extension
function onRelayMessage(ws, data) {
  if (ws !== state.ws || typeof data !== "string") return;
  state.lastHeard = Date.now();
  const newline = data.indexOf("\n");
  let header;
  try {
    header = JSON.parse(newline < 0 ? data : data.slice(0, newline));
  } catch {
    return;
  }
  if (header.id !== undefined) {
    void handleRequest(ws, header, newline < 0 ? null : data.slice(newline + 1));
    return;
  }
  if (header.method === "ping") send(ws, { method: "pong" });
  else if (header.method === "welcome") void onWelcome(header.params || {});
}

async function onWelcome(params) {
  state.profile = params.profile || null;
  if (params.color) state.color = params.color;
  await chrome.storage.local.set({ profile: state.profile, color: state.color });
  void updateIcon();
  void updateBadges();
}

async function handleRequest(ws, header, body) {
  const id = header.id;
  try {
    let result;
    if (header.method === "cdp") {
      // Hot path: nothing awaited before the command goes to Chrome.
      const debuggee = header.sessionId
        ? { tabId: header.tabId, sessionId: header.sessionId }
        : { tabId: header.tabId };
      result = await chrome.debugger.sendCommand(debuggee, header.cdpMethod, body ? JSON.parse(body) : {});
    } else {
      const op = OPS[header.method];
      if (!op) throw new Error(`unknown request ${header.method}`);
      result = await op(header.params || {});
    }
    if (ws.readyState === WebSocket.OPEN) ws.send(`{"id":${id}}\n${JSON.stringify(result ?? {})}`);
  } catch (error) {
    if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ id, error: toCdpError(error) }));
  }
}

// chrome.debugger rejects with the CDP error serialized as JSON in the message.
function toCdpError(error) {
  const message = (error && error.message) || String(error);
  try {
    const parsed = JSON.parse(message);
    if (parsed && typeof parsed.message === "string") {
      return { code: parsed.code ?? -32000, message: parsed.message, data: parsed.data };
    }
  } catch {}
  return { code: -32000, message };
}

const OPS = {
  async attach({ tabId }) {
    return attachTab(tabId);
  },
  async detach({ tabId }) {
    await detachTab(tabId);
    return {};
  },
  // The tray's "Stop all agents": stop sharing every tab (as the popup's Unshare all).
  async unshareAll() {
    const tabs = [...state.shared.keys()];
    for (const tabId of tabs) await unshareTab(tabId, "stopped_by_user");
    return { unshared: tabs.length };
  },
  async createTab({ url, background, newWindow }) {
    let tab;
    if (newWindow) {
      const win = await chrome.windows.create({ url: url || "about:blank", focused: !background });
      tab = win.tabs[0];
    } else {
      try {
        tab = await chrome.tabs.create({ url: url || "about:blank", active: !background });
      } catch {
        // No window to put it in (all closed): open one.
        const win = await chrome.windows.create({ url: url || "about:blank", focused: !background });
        tab = win.tabs[0];
      }
    }
    const info = await shareTab(tab.id, { quiet: true });
    return { tab: info };
  },
  async closeTab({ tabId }) {
    // Forget it first so onRemoved does not report it a second time.
    state.shared.delete(tabId);
    state.attached.delete(tabId);
    void persist();
    void updateBadges();
    await chrome.tabs.remove(tabId);
    return {};
  },
  async activateTab({ tabId }) {
    const tab = await chrome.tabs.update(tabId, { active: true });
    await chrome.windows.update(tab.windowId, { focused: true });
    return {};
  },
  async getWindow({ tabId, windowId }) {
    const id = windowId ?? (await chrome.tabs.get(tabId)).windowId;
    const win = await chrome.windows.get(id);
    return {
      windowId: win.id,
      bounds: { left: win.left, top: win.top, width: win.width, height: win.height, windowState: win.state },
    };
  },
  async setWindowBounds({ windowId, bounds }) {
    const update = {};
    for (const key of ["left", "top", "width", "height"]) if (bounds[key] !== undefined) update[key] = bounds[key];
    if (bounds.windowState) update.state = bounds.windowState;
    await chrome.windows.update(windowId, update);
    return {};
  },
};

// ---------------------------------------------------------------- debugger
// Attach and detach of one tab never overlap: each waits for the previous one.
function withTabLock(tabId, fn) {
  const previous = state.tabOps.get(tabId) || Promise.resolve();
  const next = previous.catch(() => {}).then(fn);
  state.tabOps.set(tabId, next);
  void next.finally(() => {
    if (state.tabOps.get(tabId) === next) state.tabOps.delete(tabId);
  }).catch(() => {});
  return next;
}

function attachTab(tabId) {
  return withTabLock(tabId, async () => {
    if (!state.shared.has(tabId)) throw new Error(`tab ${tabId} is not shared with browserdeck`);
    if (!state.attached.has(tabId)) {
      try {
        await chrome.debugger.attach({ tabId }, "1.3");
      } catch (error) {
        // Still attached from before this worker restarted: that is ours, keep it.
        if (!/already attached/i.test(error.message || "")) throw error;
      }
      state.attached.add(tabId);
      void persist();
    }
    const { targetInfo } = await chrome.debugger.sendCommand({ tabId }, "Target.getTargetInfo");
    if (targetInfo && targetInfo.browserContextId && state.browserContextId !== targetInfo.browserContextId) {
      state.browserContextId = targetInfo.browserContextId;
      void persist();
    }
    return { targetInfo };
  });
}

function detachTab(tabId) {
  return withTabLock(tabId, async () => {
    if (!state.attached.has(tabId)) return;
    state.attached.delete(tabId);
    void persist();
    try {
      await chrome.debugger.detach({ tabId });
    } catch {
      // Already gone (tab closed, or Chrome detached it).
    }
  });
}

async function releaseDebuggers() {
  await Promise.all([...state.attached].map((tabId) => detachTab(tabId)));
}

function onDebuggerEvent(source, method, params) {
  const ws = state.ws;
  if (!ws || ws.readyState !== WebSocket.OPEN || !state.shared.has(source.tabId)) return;
  if (DROPPED_EVENTS.has(method)) return;
  const head = source.sessionId
    ? `{"event":"${method}","tabId":${source.tabId},"sessionId":"${source.sessionId}"}`
    : `{"event":"${method}","tabId":${source.tabId}}`;
  ws.send(`${head}\n${JSON.stringify(params ?? {})}`);
}

async function onDebuggerDetach(source, reason) {
  const tabId = source.tabId;
  if (tabId === undefined) return;
  await ready;
  state.attached.delete(tabId);
  void persist();
  if (reason === "canceled_by_user") {
    // The user pressed Cancel on Chrome's "started debugging" bar: Chrome detached every
    // tab, and the user asked for automation to stop. Stop sharing all of them.
    for (const id of [...state.shared.keys()]) await unshareTab(id, "canceled_by_user");
    setStatus("paused", "You cancelled debugging in Chrome's banner, so browserdeck stopped sharing all tabs. Share a tab again to resume.");
    return;
  }
  if (state.shared.has(tabId)) sendToRelay({ method: "debuggerDetached", params: { tabId, reason } });
}

// ---------------------------------------------------------------- sharing
async function tabInfo(tabId, openerTabId) {
  let tab;
  try {
    tab = await chrome.tabs.get(tabId);
  } catch {
    return null;
  }
  const entry = state.shared.get(tabId);
  const targetId = entry?.targetId || (await targetIdFor(tabId));
  if (!targetId) return null;
  const opener = openerTabId ?? entry?.openerTabId ?? null;
  const info = {
    tabId,
    targetId,
    url: tab.url || tab.pendingUrl || "about:blank",
    title: tab.title || "",
    windowId: tab.windowId,
    active: tab.active,
  };
  if (opener !== null && opener !== undefined) info.openerTabId = opener;
  return info;
}

// The DevTools target id of a tab, without attaching to it.
async function targetIdFor(tabId) {
  for (let attempt = 0; attempt < 40; attempt += 1) {
    const targets = await chrome.debugger.getTargets();
    const match = targets.find((target) => target.tabId === tabId);
    if (match) return match.id;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return null;
}

function shareTab(tabId, options = {}) {
  const pending = state.sharing.get(tabId);
  if (pending) return pending;
  const promise = (async () => {
    await ready;
    const existing = state.shared.get(tabId);
    if (existing) {
      if (options.openerTabId !== undefined && existing.openerTabId == null) existing.openerTabId = options.openerTabId;
      return tabInfo(tabId);
    }
    const info = await tabInfo(tabId, options.openerTabId);
    if (!info) throw new Error(`tab ${tabId} does not exist`);
    state.shared.set(tabId, { tabId, targetId: info.targetId, openerTabId: info.openerTabId ?? null });
    if (state.status === "paused") setStatus(state.ws ? "connected" : "connecting", "");
    await persist();
    void updateBadges();
    // A tab the relay asked for (createTab) is reported in the reply instead.
    if (!options.quiet) sendToRelay({ method: "tabShared", params: { tab: info } });
    return info;
  })();
  state.sharing.set(tabId, promise);
  void promise.finally(() => state.sharing.delete(tabId)).catch(() => {});
  return promise;
}

async function unshareTab(tabId, reason = "unshared") {
  await ready;
  if (!state.shared.delete(tabId)) return;
  await persist();
  await detachTab(tabId);
  sendToRelay({ method: "tabUnshared", params: { tabId, reason } });
  try {
    await chrome.action.setBadgeText({ tabId, text: null });
  } catch {}
  void updateBadges();
}

async function toggleActiveTab() {
  await ready;
  const [tab] = await chrome.tabs.query({ active: true, lastFocusedWindow: true });
  if (!tab) return null;
  if (state.shared.has(tab.id)) {
    await unshareTab(tab.id);
    return { tabId: tab.id, shared: false };
  }
  await shareTab(tab.id);
  if (!state.ws) void maybeConnect("user");
  return { tabId: tab.id, shared: true };
}

// ---------------------------------------------------------------- tab lifecycle
async function onTabRemoved(tabId) {
  await ready;
  if (!state.shared.delete(tabId)) return;
  state.attached.delete(tabId);
  void persist();
  sendToRelay({ method: "tabUnshared", params: { tabId, reason: "closed" } });
}

async function onTabUpdated(tabId, change, tab) {
  await ready;
  if (!state.shared.has(tabId)) return;
  if (change.url !== undefined || change.title !== undefined) {
    sendToRelay({ method: "tabUpdated", params: { tabId, url: tab.url, title: tab.title, windowId: tab.windowId } });
  }
  if (change.status === "loading" || change.url !== undefined) void updateBadges();
}

// Popups and target=_blank links from a shared tab are shared too (Playwright expects a
// page's popups). webNavigation names the tab the navigation came from; tabs.onCreated's
// openerTabId does not do here: Chrome sets it to whatever tab was active, even for a tab
// the user (or DevTools) opened from scratch, which would share tabs nobody chose to.
async function onNavigationTarget(details) {
  await ready;
  if (state.shared.has(details.sourceTabId)) {
    await shareTab(details.tabId, { openerTabId: details.sourceTabId }).catch(() => {});
  }
}

async function onTabReplaced(addedTabId, removedTabId) {
  await ready;
  const entry = state.shared.get(removedTabId);
  if (!entry) return;
  await unshareTab(removedTabId, "replaced");
  await shareTab(addedTabId, { openerTabId: entry.openerTabId ?? undefined }).catch(() => {});
}

function onStorageChanged(changes, area) {
  if (area !== "local") return;
  if (changes.relayToken || changes.relayPort) void ready.then(() => reconnect("settings"));
}

// ---------------------------------------------------------------- popup / options
function onUiMessage(message, sender, sendResponse) {
  if (sender.id !== chrome.runtime.id) return false;
  void (async () => {
    await ready;
    switch (message?.type) {
      case "getState":
        return snapshot();
      case "toggleTab":
        if (state.shared.has(message.tabId)) await unshareTab(message.tabId);
        else await shareTab(message.tabId);
        if (!state.ws) void maybeConnect("user");
        return snapshot();
      case "unshareAll":
        for (const tabId of [...state.shared.keys()]) await unshareTab(tabId);
        return snapshot();
      case "reconnect":
        await reconnect("user");
        return snapshot();
      case "focusTab": {
        const tab = await chrome.tabs.update(message.tabId, { active: true });
        await chrome.windows.update(tab.windowId, { focused: true });
        return snapshot();
      }
      default:
        throw new Error(`unknown message ${message?.type}`);
    }
  })().then(
    (result) => sendResponse({ ok: true, result }),
    (error) => sendResponse({ ok: false, error: error.message || String(error) }),
  );
  // Opening the popup wakes a stopped worker; make sure it is (re)connecting.
  void ready.then(() => maybeConnect("ui"));
  return true;
}

async function snapshot() {
  const shared = [];
  for (const entry of state.shared.values()) {
    try {
      const tab = await chrome.tabs.get(entry.tabId);
      shared.push({
        tabId: entry.tabId,
        targetId: entry.targetId,
        title: tab.title,
        url: tab.url,
        attached: state.attached.has(entry.tabId),
        restricted: isRestricted(tab.url || ""),
      });
    } catch {}
  }
  return {
    status: state.status,
    statusText: STATUS_TEXT[state.status] || state.status,
    detail: state.detail,
    port: state.port,
    profile: state.profile,
    color: state.color,
    instance: state.instance,
    connected: Boolean(state.ws && state.ws.readyState === WebSocket.OPEN),
    shared,
  };
}

// ---------------------------------------------------------------- badge and icon
function setStatus(status, detail) {
  const changed = status !== state.status || detail !== state.detail;
  state.status = status;
  state.detail = detail;
  if (changed) {
    void updateBadges();
    void chrome.storage.session.set({ status: { status, detail } }).catch(() => {});
    void chrome.runtime.sendMessage({ type: "state" }).catch(() => {}); // refresh an open popup
  }
}

async function updateBadges() {
  const status = state.status;
  const text = status === "connecting" ? "…" : status === "error" || status === "unpaired" ? "!" : "";
  const color = status === "connecting" ? "#F2A900" : text === "!" ? "#D93025" : state.color;
  try {
    await chrome.action.setBadgeText({ text });
    await chrome.action.setBadgeBackgroundColor({ color });
    await chrome.action.setTitle({ title: `browserdeck: ${STATUS_TEXT[status] || status}${state.detail ? ` — ${state.detail}` : ""}` });
    for (const tabId of state.shared.keys()) {
      await chrome.action.setBadgeText({ tabId, text: status === "connected" ? "ON" : text || "ON" });
      await chrome.action.setBadgeBackgroundColor({ tabId, color: status === "connected" ? state.color : color });
    }
  } catch {
    // A tab closed between listing and updating it.
  }
}

// The toolbar icon in the profile colour the relay announced (same drawing as the PNGs
// made by tools/make_icons.py).
function drawIcon(size, color) {
  const canvas = new OffscreenCanvas(size, size);
  const g = canvas.getContext("2d");
  const r = size * 0.22;
  g.fillStyle = color;
  roundRect(g, 0, 0, size, size, r);
  g.fill();
  g.fillStyle = "#ffffff";
  const m = size * 0.2;
  const w = size - 2 * m;
  // Two stacked "cards" (a deck of browser windows): the back one offset up-right.
  g.globalAlpha = 0.55;
  roundRect(g, m + size * 0.1, m - size * 0.06, w - size * 0.1, w - size * 0.1, size * 0.08);
  g.fill();
  g.globalAlpha = 1;
  roundRect(g, m, m + size * 0.06, w - size * 0.1, w - size * 0.1, size * 0.08);
  g.fill();
  g.fillStyle = color;
  g.fillRect(m + size * 0.06, m + size * 0.06 + size * 0.12, w - size * 0.22, Math.max(1, size * 0.07));
  return g.getImageData(0, 0, size, size);
}

function roundRect(g, x, y, w, h, r) {
  g.beginPath();
  g.moveTo(x + r, y);
  g.arcTo(x + w, y, x + w, y + h, r);
  g.arcTo(x + w, y + h, x, y + h, r);
  g.arcTo(x, y + h, x, y, r);
  g.arcTo(x, y, x + w, y, r);
  g.closePath();
}

async function updateIcon() {
  try {
    await chrome.action.setIcon({ imageData: { 16: drawIcon(16, state.color), 32: drawIcon(32, state.color) } });
  } catch {
    // OffscreenCanvas missing (very old Chrome): keep the packaged icons.
  }
}
