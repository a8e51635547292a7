"""The settings dialog's words: labels, checkbox texts and help lines, in a user's words.

Presentation only: the schema's descriptions (config.py) name routes and JSON keys for
the API, the CLI and the config reference; a person in the dialog reads these.
"""

from __future__ import annotations

# Friendlier labels than the camelCase keys.
LABELS: dict[str, str] = {
    "enabled": "Browser control",
    "controlPort": "Control API port",
    "relayPort": "Extension relay port",
    "defaultProfile": "Default profile",
    "headless": "Run browsers headless",
    "noSandbox": "No sandbox",
    "attachOnly": "Attach only",
    "executablePath": "Browser executable",
    "relayClientMode": "Relay clients",
    "startDefaultProfile": "Start the default profile at launch",
    "startAtLogin": "Start browserdeck at login",
    "mcpIdleMinutes": "Close idle MCP browser after (minutes)",
    "agentIdleMinutes": "End idle agent clients after (minutes)",
    "mcpRunCode": "Allow MCP to run Python code",
    "screenshotMaxDimension": "Largest MCP screenshot side (px)",
    "actionWaitMs": "Longest wait for an action's effects (ms)",
    "allowFileUrls": "Files on this computer",
    "maxTabs": "Most tabs per agent and profile",
    "artifactsMaxMb": "Space for saved files (MB)",
    "artifactsMaxAgeDays": "Keep saved files for (days)",
    "logMaxMb": "Space for log files (MB)",
    "uploadRoots": "Folders agents may upload from",
    "allowedOrigins": "Allowed sites",
    "blockedOrigins": "Blocked sites",
    "redactNetworkSecrets": "Credentials in recordings",
    "tokenParam": "Token in the URL as",
    "tokenHeader": "Token in the header",
    "pool": "One browser per agent",
    "poolIdleSeconds": "Give an idle agent's browser back after (s)",
    # profile fields
    "driver": "Driver",
    "color": "Colour",
    "cdpPort": "CDP port",
    "cdpUrl": "CDP URL",
    "userDataDir": "User data directory",
    "takeOverWaitSeconds": "Agents wait while you have taken over (s)",
}
CHECKBOX_TEXT: dict[str, str] = {
    "enabled": "Let agents use browsers",
    "headless": "No visible windows",
    "noSandbox": "Run browsers without the sandbox",
    "attachOnly": "Never launch a browser",
    "startDefaultProfile": "Start it when browserdeck starts",
    "startAtLogin": "Start when I log in",
    "mcpRunCode": "Let MCP clients run Python code",
    "allowFileUrls": "Let agents open files on this computer",
    "redactNetworkSecrets": "Hide passwords, cookies and tokens in HAR files",
}
# The help line under each field, in a user's words. The schema's descriptions (the
# API, the CLI and the config reference use them) name routes and JSON keys; a person
# in this dialog needs what the setting does for them, never a repeat of its checkbox.
HELP: dict[str, str] = {
    "enabled": "When this is off, agents cannot open or drive any browser; browserdeck "
    "keeps running and tells them browser control is switched off.",
    "controlPort": "Agents, the command line and MCP clients connect to browserdeck on "
    "this port. Only programs on this computer can reach it.",
    "relayPort": "The browserdeck extension in your Chrome connects on this port (unless "
    "a Chrome profile below sets its own).",
    "defaultProfile": "The browser agents get when they do not ask for a particular one.",
    "headless": "Agents still get screenshots. On Linux without a desktop, browsers always "
    "run this way.",
    "noSandbox": "Only for machines where Chromium's sandbox cannot start, such as "
    "containers or running as root; it makes the browser less safe.",
    "attachOnly": "browserdeck then only connects to a browser you started yourself with "
    "remote debugging on.",
    "executablePath": "The Chrome or Chromium program to start. Leave empty to use the one "
    "browserdeck finds.",
    "relayClientMode": "Whether several agents may use your Chrome at the same time, or "
    "one at a time (the next one waits until the first is done).",
    "startDefaultProfile": "Its browser is ready before the first agent asks for it.",
    "startAtLogin": "It waits in the tray, so agents can connect as soon as you are logged in.",
    "mcpIdleMinutes": "A browser started for an MCP client closes after this long without "
    "use (0: never).",
    "agentIdleMinutes": "A script or command line agent that names itself and goes quiet this "
    "long is ended: the tabs it opened close unless you marked them Keep (0: never).",
    "mcpRunCode": "The code they send runs with full control of the browser. Only turn "
    "this on for agents you trust.",
    "screenshotMaxDimension": "Screenshots sent to AI models are scaled down to at most "
    "this many pixels wide or high.",
    "allowFileUrls": "With file:// links an agent could read any file you can read. Off "
    "unless you need it.",
    "actionWaitMs": "After a click or a key press, agents wait at most this long for what it "
    "set off (a page loading, data arriving) before they look again (0: no wait).",
    "maxTabs": "Each open tab takes about 25 MB; past this many, an agent must close one "
    "before it opens another.",
    "artifactsMaxMb": "Screenshots, PDFs and downloads agents saved; the oldest go first when "
    "there is more than this.",
    "artifactsMaxAgeDays": "Saved screenshots, PDFs and downloads older than this are removed.",
    "logMaxMb": "browserdeck's own log files never take more than this.",
    "uploadRoots": "Besides the folders an agent's app shares, agents may upload files from "
    "these. Your home folder itself and hidden folders are never allowed. Several: "
    "separate them with ':'.",
    "allowedOrigins": "Only these sites, e.g. https://example.com, *.example.com, "
    "http://localhost:* (commas or spaces between them). Empty: every site not blocked "
    "below. A convenience that keeps agents on track, not a security boundary.",
    "blockedOrigins": "Agents are refused these sites, in the same form; a block wins over "
    "an allowed site. Each refusal names the rule.",
    "redactNetworkSecrets": "Authorization headers, cookies and stored secrets show as "
    "[redacted] in the network recordings agents make. Turn off only to debug a login.",
    "tokenParam": "The name of the URL parameter the browser service expects its token in "
    "(e.g. token or apiKey).",
    "tokenHeader": "Or send the token in this HTTP header instead (e.g. Authorization).",
    "pool": "Each agent gets a browser of its own from the service, given back when it is done.",
    "poolIdleSeconds": "An agent's browser goes back to the service after this long unused.",
    "color": "Tints this profile's browser window and its icon, so you can tell them apart.",
    "cdpPort": "The port browserdeck uses to control this browser (for Chrome profiles: "
    "the port the extension connects to).",
    "cdpUrl": "The address of a browser on another machine or container, with remote "
    "debugging on.",
    "userDataDir": "Where this browser keeps its cookies, logins and history. Leave empty "
    "for browserdeck's own folder.",
    "takeOverWaitSeconds": "Agents wait this long while you have taken a browser over, then retry.",
}
RELAY_MODES = {
    "single-active": "One agent at a time",
    "multi-client": "Several agents at once",
}
