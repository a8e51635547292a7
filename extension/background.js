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
// - the relay and this worker prove to each other that they know the token before anything
//   else is sent; the token itself never leaves the extension (relay/protocol.py);
// - reconnects probe once a second for 25 s, then only on the alarm, and stop on an auth
//   refusal;
// - every operation the relay asks for is refused on a tab the user did not share.
//
// Wire format (relay/protocol.py): a JSON header, then "\n" and a JSON payload for CDP
// commands, results and events, so the relay can splice payloads without re-encoding them.

import {
  DEFAULT_COLOR,
  DEFAULT_PORT,
  DEFAULT_PROFILE,
  PROTOCOL_VERSION,
  STATUS_TEXT,
  SUBPROTOCOL,
  isRestricted,
} from "./shared.js";

const KEEPALIVE_MS = 15000;
const SILENCE_MS = 45000;
const PROBE_EVERY_MS = 1000;
const FAST_PROBE_WINDOW_MS = 25000;
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
  probing: false,
  lastProbe: 0,
  fullVersion: null, // promise of the full browser version
  downSince: 0, // when the relay became unreachable (0 while connected); survives restarts
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
void fullVersion(); // off the reconnect path

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
  const saved = await chrome.storage.session.get(["shared", "attached", "browserContextId", "downSince"]);
  state.downSince = Number(saved.downSince) || 0;
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
// Reconnecting (docs/extension.md, "Coming back after a relay restart"): while the relay is
// unreachable the worker probes it once a second for the first 25 s (the worker is still
// alive then, so a restarted relay gets its tabs back within about a second), then stops
// all traffic and lets Chrome stop the worker; the 30 s alarm wakes it for one probe at a
// time. A probe is one tokenless GET of /extension/check; only a relay that answers gets
// the WebSocket, and only a relay that proves it knows the token gets anything else.
async function maybeConnect(why) {
  const ws = state.ws;
  if (ws && (ws.readyState === WebSocket.OPEN || ws.readyState === WebSocket.CONNECTING)) return;
  if (state.probing) return;
  if (state.stopRetrying && why !== "user" && why !== "settings") return;
  // At most one probe a second, whatever asks (the retry timer, the alarm, tab events).
  // (A restarted worker probes at boot; the alarm that woke it must not probe again.)
  if (why !== "user" && why !== "settings" && Date.now() - state.lastProbe < PROBE_EVERY_MS - 20) return;
  if (state.retryTimer) {
    clearTimeout(state.retryTimer);
    state.retryTimer = null;
  }
  state.probing = true;
  state.lastProbe = Date.now();
  try {
    await connectOnce(why);
  } finally {
    state.probing = false;
  }
}

async function connectOnce(why) {
  const { relayPort, relayToken, relayProfile } = await chrome.storage.local.get(["relayPort", "relayToken", "relayProfile"]);
  if (state.ws && state.ws.readyState <= WebSocket.OPEN) return; // raced with another caller
  if (!relayToken) {
    setStatus("unpaired", "Not paired with browserdeck: run `browserdeck pair`, or open Options and paste the token from `browserdeck token --relay`.");
    return;
  }
  state.port = Number(relayPort) || DEFAULT_PORT;
  const port = state.port;
  if (state.status !== "error" || why === "user" || why === "settings") {
    setStatus("connecting", `Connecting to browserdeck on 127.0.0.1:${port}…`);
  }
  const diagnosis = await probe(port);
  if (!diagnosis.ok) {
    state.stopRetrying = Boolean(diagnosis.stop);
    setStatus(diagnosis.status, diagnosis.detail);
    await markDown();
    scheduleReconnect(diagnosis.slow);
    return;
  }
  let sock;
  try {
    // No token here: it never goes on the wire (see onChallenge).
    sock = new WebSocket(`ws://127.0.0.1:${port}/extension?instance=${encodeURIComponent(state.instance)}`, [SUBPROTOCOL]);
  } catch (error) {
    setStatus("error", `Cannot connect: ${error.message}. Check the port in Options.`);
    state.stopRetrying = true;
    return;
  }
  state.ws = sock;
  sock.authNonce = null;
  sock.authed = false;
  // What both proofs are bound to: the port we dialled and the profile we were paired for
  // (our own knowledge, never what the other end says).
  sock.relayPort = port;
  sock.relayProfile = typeof relayProfile === "string" && relayProfile ? relayProfile : DEFAULT_PROFILE;
  sock.onopen = () => void onOpen(sock);
  sock.onmessage = (event) => onRelayMessage(sock, event.data);
  sock.onclose = (event) => void onClose(sock, event);
  sock.onerror = () => {}; // onclose follows with the details we can get
}

// Browsers hide why a WebSocket upgrade failed; the relay says it over plain HTTP, and
// this is also the cheap "is anything there" probe. It carries no token.
async function probe(port) {
  let response;
  try {
    response = await fetch(`http://127.0.0.1:${port}/extension/check?instance=${encodeURIComponent(state.instance)}`, { cache: "no-store" });
  } catch {
    return { ok: false, status: "error", detail: `browserdeck is not running on port ${port}: start it (tray app or \`browserdeck serve\`), or fix the port in Options.` };
  }
  if (response.status === 200) return { ok: true };
  if (response.status === 409) {
    return { ok: false, status: "error", slow: true, detail: "Another browser's browserdeck extension is connected to this relay." };
  }
  if (response.status === 403) {
    return { ok: false, status: "error", stop: true, detail: "The relay refused this extension's origin (wrong extension id?)." };
  }
  return { ok: false, status: "error", detail: `Something on 127.0.0.1:${port} answered HTTP ${response.status}; it does not look like browserdeck. Retrying…` };
}

async function markDown() {
  if (state.downSince) return;
  state.downSince = Date.now();
  await chrome.storage.session.set({ downSince: state.downSince }).catch(() => {});
}

async function markUp() {
  state.downSince = 0;
  await chrome.storage.session.set({ downSince: 0 }).catch(() => {});
}

async function reconnect(why) {
  state.stopRetrying = false;
  state.retries = 0;
  await markUp(); // the user (or new settings) asked: a fresh 25 s of fast probes
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

function onOpen(ws) {
  if (ws !== state.ws) return;
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  ws.authNonce = [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
  send(ws, {
    method: "auth",
    params: { nonce: ws.authNonce, protocol: PROTOCOL_VERSION, port: ws.relayPort, profile: ws.relayProfile },
  });
}

function hmacKey(token) {
  return crypto.subtle.importKey("raw", new TextEncoder().encode(token), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
}

async function hmacHex(key, message) {
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(message)));
  return [...mac].map((b) => b.toString(16).padStart(2, "0")).join("");
}

// The relay proves it knows the token before we prove it back or send anything else
// (relay/protocol.py, auth_proof). Whatever else listens on the port learns a random nonce.
// Both proofs name the port we dialled and the profile we were paired for: a relay on
// another port (reached through a program on ours) or of another profile cannot make ours.
async function onChallenge(ws, params) {
  const { relayToken } = await chrome.storage.local.get(["relayToken"]);
  const nonce = typeof params.nonce === "string" ? params.nonce : "";
  // Both proofs in one go (one key import): the reconnect path counts (docs/extension.md).
  const key = relayToken && nonce ? await hmacKey(relayToken) : null;
  const bound = `${ws.relayPort}\n${ws.relayProfile}\n`;
  const [expected, proof] = key
    ? await Promise.all([
        hmacHex(key, `browserdeck-relay\n${bound}${ws.authNonce}\n${nonce}`),
        hmacHex(key, `browserdeck-extension\n${bound}${ws.authNonce}\n${nonce}`),
      ])
    : ["", ""];
  if (ws !== state.ws) return;
  if (!expected || params.proof !== expected) {
    ws.authFailed = true;
    ws.close(1000, "the relay did not prove it knows the token");
    return;
  }
  if (ws !== state.ws) return;
  send(ws, { method: "authProof", params: { proof } });
  ws.authed = true;
  await onAuthenticated(ws);
}

async function onAuthenticated(ws) {
  state.retries = 0;
  state.lastHeard = Date.now();
  await markUp();
  // A new relay connection has no client sessions: start from a clean debugger slate so
  // no client inherits another one's scripts or emulation (and the banner goes away).
  await releaseDebuggers();
  // All tabs at once, and storage after the hello: tabs are back on the relay sooner.
  const ids = [...state.shared.keys()];
  const infos = await Promise.all(ids.map((tabId) => tabInfo(tabId)));
  const tabs = [];
  ids.forEach((tabId, i) => {
    if (infos[i]) tabs.push(infos[i]);
    else state.shared.delete(tabId);
  });
  if (ws !== state.ws) return;
  send(ws, {
    method: "hello",
    params: {
      protocol: PROTOCOL_VERSION,
      version: chrome.runtime.getManifest().version,
      userAgent: navigator.userAgent,
      fullVersion: await fullVersion(),
      extensionId: chrome.runtime.id,
      instance: state.instance,
      browserContextId: state.browserContextId,
      tabs,
    },
  });
  void persist();
  setStatus("connected", `Connected to browserdeck on 127.0.0.1:${state.port}.`);
  startKeepalive(ws);
}

// The full browser version (the user agent string is reduced to 156.0.0.0); asked once.
function fullVersion() {
  if (!state.fullVersion) state.fullVersion = readFullVersion();
  return state.fullVersion;
}

async function readFullVersion() {
  try {
    const data = await navigator.userAgentData.getHighEntropyValues(["fullVersionList"]);
    const brands = data.fullVersionList || [];
    const brand = brands.find((b) => /Chrom/.test(b.brand) && !/Not/.test(b.brand)) || brands.find((b) => !/Not/.test(b.brand));
    return brand ? brand.version : "";
  } catch {
    return "";
  }
}

async function onClose(ws, event) {
  if (ws !== state.ws) return;
  state.ws = null;
  stopKeepalive();
  await releaseDebuggers();
  await markDown();
  let slow = false;
  if (ws.authFailed) {
    setStatus("error", `The program on 127.0.0.1:${state.port} could not prove that it knows this extension's token, so nothing was sent to it. Either the token is out of date (pair again: \`browserdeck pair\`), or another program is using the port.`);
  } else if (event.code === 4401) {
    state.stopRetrying = true;
    setStatus("error", "browserdeck refused the token: pair again (`browserdeck pair`), or paste the output of `browserdeck token --relay` in Options.");
  } else if (event.code === 4403) {
    state.stopRetrying = true;
    setStatus("error", `The browserdeck relay on 127.0.0.1:${state.port} serves another profile than this extension was paired with (${event.reason || "pair again"}): pair again with \`browserdeck pair --profile <name>\`, or fix the port in Options.`);
  } else if (event.code === 4400) {
    state.stopRetrying = true;
    setStatus("error", "This extension and browserdeck speak different protocol versions: reload the extension from browserdeck's extension/ folder.");
  } else if (event.code === 4409) {
    slow = true;
    setStatus("error", "Another browser's browserdeck extension is connected to this relay.");
  } else {
    setStatus("connecting", `Lost the connection to browserdeck (${event.code || "closed"}); reconnecting…`);
  }
  scheduleReconnect(slow);
}

function scheduleReconnect(slow) {
  if (state.stopRetrying || state.retryTimer) return;
  // After the first 25 s of an outage (or for a busy relay), no timer: the alarm brings
  // the worker back for the next probe, and Chrome may stop it in between.
  if (slow || !state.downSince || Date.now() - state.downSince >= FAST_PROBE_WINDOW_MS) return;
  state.retries += 1;
  // Probes start a second apart (not a second after the last one ended), so a relay that
  // comes back waits at most a second for the next one.
  const wait = Math.max(0, PROBE_EVERY_MS - (Date.now() - state.lastProbe));
  state.retryTimer = setTimeout(() => {
    state.retryTimer = null;
    void maybeConnect("retry");
  }, wait);
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

// Until the relay has proved it knows the token, only our side of the handshake may go to
// it: a squatter on the port must not even learn which tabs are shared (issue 10 item 3).
const HANDSHAKE = new Set(["auth", "authProof"]);

function send(ws, header, payload) {
  if (!ws || ws.readyState !== WebSocket.OPEN) return false;
  if (!ws.authed && !HANDSHAKE.has(header.method)) return false;
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
  if (!ws.authed) {
    // Nothing but the relay's proof is accepted before the exchange is done.
    if (header.method === "authChallenge" && ws.authNonce && !ws.challenged) {
      ws.challenged = true;
      void onChallenge(ws, header.params || {});
    } else {
      ws.authFailed = true;
      ws.close(1000, "unexpected message before authentication");
    }
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
      requireShared(header.tabId);
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
    requireShared(tabId);
    // Forget it first so onRemoved does not report it a second time.
    state.shared.delete(tabId);
    state.attached.delete(tabId);
    void persist();
    void updateBadges();
    await chrome.tabs.remove(tabId);
    return {};
  },
  async activateTab({ tabId }) {
    requireShared(tabId);
    const tab = await chrome.tabs.update(tabId, { active: true });
    await chrome.windows.update(tab.windowId, { focused: true });
    return {};
  },
  async getWindow({ tabId, windowId }) {
    if (windowId === undefined || windowId === null) requireShared(tabId);
    const id = windowId ?? (await chrome.tabs.get(tabId)).windowId;
    await requireSharedWindow(id);
    const win = await chrome.windows.get(id);
    return {
      windowId: win.id,
      bounds: { left: win.left, top: win.top, width: win.width, height: win.height, windowState: win.state },
    };
  },
  async setWindowBounds({ windowId, bounds }) {
    await requireSharedWindow(windowId);
    const update = {};
    for (const key of ["left", "top", "width", "height"]) if (bounds[key] !== undefined) update[key] = bounds[key];
    if (bounds.windowState) update.state = bounds.windowState;
    await chrome.windows.update(windowId, update);
    return {};
  },
};

// The relay (or whatever holds the connection) reaches only tabs the user shared, tabs
// it opened itself, and their popups: everything else is refused here, in the browser.
function requireShared(tabId) {
  if (!state.shared.has(tabId)) throw new Error(`tab ${tabId} is not shared with browserdeck`);
}

async function requireSharedWindow(windowId) {
  if (!Number.isInteger(windowId)) throw new Error("a windowId is required");
  const tabs = await chrome.tabs.query({ windowId });
  if (!tabs.some((tab) => state.shared.has(tab.id))) {
    throw new Error(`window ${windowId} has no tab shared with browserdeck`);
  }
}

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
  if (!ws || ws.readyState !== WebSocket.OPEN || !ws.authed || !state.shared.has(source.tabId)) return;
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

// The DevTools target id of a tab, without attaching to it. A new popup can take a while
// to be listed on a busy machine; give it 5 s, not 1 s (a popup left unshared is gone for
// its opener's client).
async function targetIdFor(tabId) {
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline) {
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
    void reportMissedUpdate(tabId, info);
    return info;
  })();
  state.sharing.set(tabId, promise);
  void promise.finally(() => state.sharing.delete(tabId)).catch(() => {});
  return promise;
}

// onTabUpdated ignores a tab until it is in state.shared, so what a tab went through
// between tabInfo() reading it and being shared (a popup committing its first URL and
// title) was never reported, and clients kept seeing about:blank. Read it once more now
// that its updates are reported. (For createTab this runs after the reply is sent: the
// extra tabs.get round trip outlasts the microtasks that send it.)
async function reportMissedUpdate(tabId, info) {
  let tab;
  try {
    tab = await chrome.tabs.get(tabId);
  } catch {
    return;
  }
  if (!state.shared.has(tabId)) return;
  if ((tab.url && tab.url !== info.url) || (tab.title || "") !== info.title) {
    sendToRelay({ method: "tabUpdated", params: { tabId, url: tab.url, title: tab.title, windowId: tab.windowId } });
  }
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
  // Chrome clears a tab's own badge when a navigation commits, which can come after the
  // "loading" update: set it again on every status or URL change.
  if (change.status !== undefined || change.url !== undefined) void updateBadges();
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
  if (changes.relayToken || changes.relayPort || changes.relayProfile) void ready.then(() => reconnect("settings"));
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
  } catch {
    // The worker is shutting down; the next update sets everything again.
  }
  for (const tabId of state.shared.keys()) {
    try {
      await chrome.action.setBadgeText({ tabId, text: status === "connected" ? "ON" : text || "ON" });
      await chrome.action.setBadgeBackgroundColor({ tabId, color: status === "connected" ? state.color : color });
    } catch {
      // This tab closed between listing and updating it; the others still get their badge.
    }
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
