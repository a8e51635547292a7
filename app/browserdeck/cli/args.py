"""Generated from engine/options.py by cli/schema.py (`make cli-args`): do not edit.

The page commands' arguments as plain data, so a CLI call needs no pydantic.
Per command, each argument: its flags, argparse's dest, the request field it fills
(absent: the CLI's own) and argparse's options ("type": "int"; "list": "comma").
"""

from __future__ import annotations

# Not `from typing import`: typing costs a CLI call about a fifth of its start-up.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# fmt: off
ARGS: dict[str, list[dict[str, Any]]] = {
    'create-profile': [
        {'flags': ['name'], 'dest': 'name', 'options': {'nargs': '?', 'help': "the new profile's name"}},
        {'flags': ['--name'], 'dest': 'name_option', 'options': {'dest': 'name_option', 'help': '==SUPPRESS=='}},
        {'flags': ['--color'], 'dest': 'color', 'field': 'color', 'options': {'help': 'Tint of the browser window and the tray icon.'}},
        {'flags': ['--cdp-url'], 'dest': 'cdp_url', 'field': 'cdpUrl', 'options': {'help': 'remote: the CDP endpoint. http(s)://host:9222 for a browser started with --remote-debugging-port; ws(s)://… for a browser service (Browserless, Browserbase, Steel, Selenium Grid se:cdp), reached over that WebSocket alone (see docs/remote.md). A token in its query is moved to the secret store when the profile is created.'}},
        {'flags': ['--driver'], 'dest': 'driver', 'field': 'driver', 'options': {'choices': ['managed', 'extension', 'remote'], 'help': 'managed: an isolated browser browserdeck launches; extension: your own Chrome through the browserdeck extension; remote: any CDP URL.'}},
        {'flags': ['--pool'], 'dest': 'pool', 'field': 'pool', 'options': {'action': 'store_true', 'help': 'remote ws(s): one browser from the service per agent session (MCP session, BROWSERDECK_CLIENT, X-Browserdeck-Session), released when the session ends or idles; off: one browser shared by every caller of the profile.'}},
        {'flags': ['--pool-idle'], 'dest': 'pool_idle', 'field': 'poolIdleSeconds', 'options': {'type': 'int', 'help': "remote pool: release a session's browser after this long without a call.", 'metavar': 'SECONDS'}},
        {'flags': ['--token-param'], 'dest': 'token_param', 'field': 'tokenParam', 'options': {'help': 'remote ws(s): the query parameter that carries the service token kept in the secret store (e.g. token, apiKey); default: token, unless tokenHeader is set.', 'metavar': 'NAME'}},
        {'flags': ['--token-header'], 'dest': 'token_header', 'field': 'tokenHeader', 'options': {'help': "remote ws(s): send the stored token in this header instead (Authorization is sent as 'Bearer TOKEN', any other header as the bare token).", 'metavar': 'NAME'}},
        {'flags': ['--token-stdin'], 'dest': 'token_stdin', 'options': {'action': 'store_true', 'help': 'read the service token from stdin (a token in --cdp-url works too); it goes to the OS keyring or a 0600 file, never config.json'}},
    ],
    'snapshot': [
        {'flags': ['--format'], 'dest': 'format', 'field': 'format', 'options': {'choices': ['ai', 'role', 'aria'], 'help': "ai: Playwright's AI snapshot (refs e12, iframe refs f1e3); role: only interactive elements carry refs, [nth=N] marks duplicate role+name; aria: the raw accessibility tree (ax1 refs, read-only); default: ai"}},
        {'flags': ['--refs'], 'dest': 'refs', 'field': 'refs', 'options': {'choices': ['aria', 'role'], 'help': 'how refs resolve: aria (the element itself; default for format=ai) or role (role+name, survives a reconnect; default for format=role)'}},
        {'flags': ['--interactive', '-i'], 'dest': 'interactive', 'field': 'interactive', 'options': {'action': 'store_true', 'help': 'only elements an agent can act on, flat'}},
        {'flags': ['--compact', '-c'], 'dest': 'compact', 'field': 'compact', 'options': {'action': 'store_true', 'help': 'drop unnamed structural wrappers'}},
        {'flags': ['--depth', '-d'], 'dest': 'depth', 'field': 'depth', 'options': {'type': 'int', 'help': 'maximum tree depth'}},
        {'flags': ['--selector', '-s'], 'dest': 'selector', 'field': 'selector', 'options': {'help': 'CSS selector: snapshot only this element'}},
        {'flags': ['--frame'], 'dest': 'frame', 'field': 'frame', 'options': {'help': 'CSS selector of an <iframe>: snapshot inside it'}},
        {'flags': ['--limit'], 'dest': 'limit', 'field': 'limit', 'options': {'type': 'int', 'help': 'maximum lines (aria format: nodes, default 2000)'}},
        {'flags': ['--max-chars'], 'dest': 'max_chars', 'field': 'maxChars', 'options': {'type': 'int', 'help': 'cut the text here (default 200000)'}},
        {'flags': ['--viewport'], 'dest': 'viewport', 'field': 'viewport', 'options': {'action': 'store_true', 'help': 'only elements in the viewport (and their ancestors); all refs stay valid'}},
    ],
    'navigate': [
        {'flags': ['address'], 'dest': 'address', 'field': 'url', 'options': {'help': 'where to go (required for action=goto)', 'metavar': 'URL'}},
        {'flags': ['--timeout-ms'], 'dest': 'timeout_ms', 'field': 'timeoutMs', 'options': {'type': 'int', 'help': 'default 20000, clamped to 500–120000'}},
        {'flags': ['--wait-ms'], 'dest': 'wait_ms', 'options': {'dest': 'wait_ms', 'help': '==SUPPRESS==', 'type': 'int'}},
    ],
    'back': [
        {'flags': ['--timeout-ms'], 'dest': 'timeout_ms', 'field': 'timeoutMs', 'options': {'type': 'int', 'help': 'default 20000, clamped to 500–120000'}},
        {'flags': ['--wait-ms'], 'dest': 'wait_ms', 'options': {'dest': 'wait_ms', 'help': '==SUPPRESS==', 'type': 'int'}},
    ],
    'forward': [
        {'flags': ['--timeout-ms'], 'dest': 'timeout_ms', 'field': 'timeoutMs', 'options': {'type': 'int', 'help': 'default 20000, clamped to 500–120000'}},
        {'flags': ['--wait-ms'], 'dest': 'wait_ms', 'options': {'dest': 'wait_ms', 'help': '==SUPPRESS==', 'type': 'int'}},
    ],
    'screenshot': [
        {'flags': ['--full-page'], 'dest': 'full_page', 'field': 'fullPage', 'options': {'action': 'store_true'}},
        {'flags': ['--ref'], 'dest': 'ref', 'field': 'ref', 'options': {'help': 'only this element'}},
        {'flags': ['--element'], 'dest': 'element', 'field': 'element', 'options': {'help': 'only this element (CSS selector)'}},
        {'flags': ['--type'], 'dest': 'type', 'field': 'type', 'options': {'choices': ['png', 'jpeg'], 'help': 'default: png'}},
        {'flags': ['--quality'], 'dest': 'quality', 'field': 'quality', 'options': {'type': 'int', 'help': 'jpeg only'}},
        {'flags': ['--labels'], 'dest': 'labels', 'field': 'labels', 'options': {'action': 'store_true', 'help': 'draw ref labels (max 150, those in view)'}},
        {'flags': ['--max-width'], 'dest': 'max_width', 'field': 'maxWidth', 'options': {'type': 'int', 'help': 'downscale to fit'}},
        {'flags': ['--max-height'], 'dest': 'max_height', 'field': 'maxHeight', 'options': {'type': 'int', 'help': 'downscale to fit'}},
        {'flags': ['--timeout-ms'], 'dest': 'timeout_ms', 'field': 'timeoutMs', 'options': {'type': 'int', 'help': 'default 20000, clamped to 500–60000'}},
        {'flags': ['--wait-ms'], 'dest': 'wait_ms', 'options': {'dest': 'wait_ms', 'help': '==SUPPRESS==', 'type': 'int'}},
    ],
    'console': [
        {'flags': ['--level'], 'dest': 'level', 'field': 'level', 'options': {'choices': ['debug', 'info', 'warning', 'error'], 'help': 'minimum level; default: all'}},
        {'flags': ['--limit'], 'dest': 'limit', 'field': 'limit', 'options': {'type': 'int', 'help': 'newest entries per list; default: 200'}},
        {'flags': ['--clear'], 'dest': 'clear', 'field': 'clear', 'options': {'action': 'store_true', 'help': 'empty the lists after reading (all levels, also entries beyond limit)'}},
        {'flags': ['--requests'], 'dest': 'requests', 'options': {'action': 'store_true', 'help': 'also list network requests'}},
    ],
    'pdf': [
        {'flags': ['--landscape'], 'dest': 'landscape', 'field': 'landscape', 'options': {'action': 'store_true', 'help': 'landscape pages'}},
        {'flags': ['--timeout-ms'], 'dest': 'timeout_ms', 'field': 'timeoutMs', 'options': {'type': 'int', 'help': 'default 20000, clamped to 500–120000'}},
        {'flags': ['--wait-ms'], 'dest': 'wait_ms', 'options': {'dest': 'wait_ms', 'help': '==SUPPRESS==', 'type': 'int'}},
    ],
    'upload': [
        {'flags': ['paths'], 'dest': 'paths', 'field': 'paths', 'options': {'nargs': '+', 'help': 'absolute paths'}},
        {'flags': ['--ref'], 'dest': 'ref', 'field': 'ref', 'options': {'help': 'arm, then click this ref (opens the chooser)'}},
        {'flags': ['--input-ref'], 'dest': 'input_ref', 'field': 'inputRef', 'options': {'help': 'set the files on this <input type=file>'}},
        {'flags': ['--element'], 'dest': 'element', 'field': 'element', 'options': {'help': 'CSS selector of an <input type=file>'}},
        {'flags': ['--timeout-ms'], 'dest': 'timeout_ms', 'field': 'timeoutMs', 'options': {'type': 'int', 'help': 'default and maximum 120000'}},
        {'flags': ['--wait-ms'], 'dest': 'wait_ms', 'field': 'waitMs', 'options': {'type': 'int', 'help': 'with ref, inputRef or element: longest wait in ms for what it caused (navigation, requests); default: the actionWaitMs setting, 0 = none'}},
    ],
    'dialog': [
        {'flags': ['--prompt-text'], 'dest': 'prompt_text', 'field': 'promptText', 'options': {'help': 'the answer to a prompt()'}},
        {'flags': ['--timeout-ms'], 'dest': 'timeout_ms', 'field': 'timeoutMs', 'options': {'type': 'int', 'help': 'default and maximum 120000'}},
        {'flags': ['--wait-ms'], 'dest': 'wait_ms', 'options': {'dest': 'wait_ms', 'help': '==SUPPRESS==', 'type': 'int'}},
    ],
    'route': [
        {'flags': ['pattern'], 'dest': 'pattern', 'field': 'pattern', 'options': {'help': 'URL glob ("**/api/users", "**/*.{png,jpg}"), or a regex with regex'}},
        {'flags': ['--status'], 'dest': 'status', 'field': 'status', 'options': {'type': 'int', 'help': 'HTTP status to return (default 200)'}},
        {'flags': ['--body'], 'dest': 'body', 'field': 'body', 'options': {'help': 'response body (text, JSON)'}},
        {'flags': ['--content-type'], 'dest': 'content_type', 'field': 'contentType', 'options': {'help': "the response's Content-Type"}},
        {'flags': ['--header'], 'dest': 'header', 'field': 'headers', 'options': {'list': 'comma', 'help': '"Name: Value" headers to add (the response\'s, with status or body); comma-separated', 'action': 'append', 'metavar': "'NAME: VALUE'"}},
        {'flags': ['--remove-headers'], 'dest': 'remove_headers', 'field': 'removeHeaders', 'options': {'help': 'request headers to remove, comma-separated'}},
        {'flags': ['--abort'], 'dest': 'abort', 'field': 'abort', 'options': {'action': 'store_true', 'help': 'fail matching requests'}},
        {'flags': ['--resource-type'], 'dest': 'resource_type', 'field': 'resourceType', 'options': {'help': 'only this type: document, script, stylesheet, image, font, fetch, xhr …'}},
        {'flags': ['--regex'], 'dest': 'regex', 'field': 'regex', 'options': {'action': 'store_true', 'help': 'pattern is a regular expression'}},
        {'flags': ['--scope'], 'dest': 'scope', 'field': 'scope', 'options': {'choices': ['session', 'profile'], 'help': "profile: every tab, not only your session's; default: session"}},
    ],
    'routes': [
    ],
    'unroute': [
        {'flags': ['pattern'], 'dest': 'pattern', 'field': 'pattern', 'options': {'help': "the routes' pattern (omit: all)", 'nargs': '?'}},
        {'flags': ['--scope'], 'dest': 'scope', 'field': 'scope', 'options': {'choices': ['session', 'profile'], 'help': "profile: every tab, not only your session's; default: session"}},
    ],
    'network-state': [
        {'flags': ['state'], 'dest': 'state', 'field': 'state', 'options': {'choices': ['online', 'offline']}},
    ],
    'har-start': [
        {'flags': ['--session'], 'dest': 'session', 'field': 'session', 'options': {'action': 'store_true', 'help': 'every tab your session works in'}},
        {'flags': ['--content'], 'dest': 'content', 'field': 'content', 'options': {'choices': ['embed', 'omit'], 'help': 'response bodies; default: embed'}},
    ],
    'har-stop': [
    ],
    'requests': [
        {'flags': ['--filter'], 'dest': 'filter', 'field': 'filter', 'options': {'help': 'only URLs with this text'}},
        {'flags': ['--resource-type'], 'dest': 'resource_type', 'field': 'resourceType', 'options': {'help': 'only this type: document, script, stylesheet, image, font, fetch, xhr …'}},
        {'flags': ['--method'], 'dest': 'method', 'field': 'method', 'options': {'help': 'only this method'}},
        {'flags': ['--status'], 'dest': 'status', 'field': 'status', 'options': {'type': 'int', 'help': 'only this status'}},
        {'flags': ['--failed'], 'dest': 'failed', 'field': 'failed', 'options': {'action': 'store_true', 'help': 'only failed or refused ones'}},
        {'flags': ['--limit'], 'dest': 'limit', 'field': 'limit', 'options': {'type': 'int', 'help': 'the newest this many; default: 100'}},
    ],
    'request': [
        {'flags': ['index'], 'dest': 'index', 'field': 'index', 'options': {'type': 'int', 'help': "the request's number"}},
        {'flags': ['--part'], 'dest': 'part', 'field': 'part', 'options': {'choices': ['request-headers', 'request-body', 'response-headers', 'response-body'], 'help': 'only this part'}},
        {'flags': ['--max-chars'], 'dest': 'max_chars', 'field': 'maxChars', 'options': {'type': 'int', 'help': 'cut each body here; default: 20000'}},
    ],
    'click': [
        {'flags': ['ref'], 'dest': 'ref', 'field': 'ref', 'options': {'help': 'ref from the latest snapshot, e.g. e12'}},
        {'flags': ['--double'], 'dest': 'double', 'field': 'doubleClick', 'options': {'action': 'store_true'}},
        {'flags': ['--button'], 'dest': 'button', 'field': 'button', 'options': {'choices': ['left', 'right', 'middle'], 'help': 'default: left'}},
        {'flags': ['--modifiers'], 'dest': 'modifiers', 'field': 'modifiers', 'options': {'list': 'comma', 'help': '; comma-separated: Alt,Control,ControlOrMeta,Meta,Shift'}},
        {'flags': ['--timeout-ms'], 'dest': 'timeout_ms', 'field': 'timeoutMs', 'options': {'type': 'int', 'help': 'default 8000, clamped to 500–60000'}},
        {'flags': ['--wait-ms'], 'dest': 'wait_ms', 'field': 'waitMs', 'options': {'type': 'int', 'help': 'longest wait in ms for what it caused (navigation, requests); default: the actionWaitMs setting, 0 = none'}},
    ],
    'type': [
        {'flags': ['ref'], 'dest': 'ref', 'field': 'ref', 'options': {'help': 'ref from the latest snapshot, e.g. e12'}},
        {'flags': ['text'], 'dest': 'text', 'field': 'text', 'options': {}},
        {'flags': ['--submit'], 'dest': 'submit', 'field': 'submit', 'options': {'action': 'store_true', 'help': 'press Enter afterwards'}},
        {'flags': ['--slowly'], 'dest': 'slowly', 'field': 'slowly', 'options': {'action': 'store_true', 'help': 'type key by key (for pages that listen to keys)'}},
        {'flags': ['--timeout-ms'], 'dest': 'timeout_ms', 'field': 'timeoutMs', 'options': {'type': 'int', 'help': 'default 8000, clamped to 500–60000'}},
        {'flags': ['--wait-ms'], 'dest': 'wait_ms', 'field': 'waitMs', 'options': {'type': 'int', 'help': 'longest wait in ms for what it caused (navigation, requests); default: the actionWaitMs setting, 0 = none'}},
    ],
    'press': [
        {'flags': ['key'], 'dest': 'key', 'field': 'key', 'options': {'help': 'e.g. Enter, Escape, ArrowDown, Control+A'}},
        {'flags': ['--ref'], 'dest': 'ref', 'field': 'ref', 'options': {'help': 'focus this element first; default: the page'}},
        {'flags': ['--timeout-ms'], 'dest': 'timeout_ms', 'field': 'timeoutMs', 'options': {'type': 'int', 'help': 'default 8000, clamped to 500–60000'}},
        {'flags': ['--wait-ms'], 'dest': 'wait_ms', 'field': 'waitMs', 'options': {'type': 'int', 'help': 'longest wait in ms for what it caused (navigation, requests); default: the actionWaitMs setting, 0 = none'}},
    ],
    'hover': [
        {'flags': ['ref'], 'dest': 'ref', 'field': 'ref', 'options': {'help': 'ref from the latest snapshot, e.g. e12'}},
        {'flags': ['--timeout-ms'], 'dest': 'timeout_ms', 'field': 'timeoutMs', 'options': {'type': 'int', 'help': 'default 8000, clamped to 500–60000'}},
        {'flags': ['--wait-ms'], 'dest': 'wait_ms', 'field': 'waitMs', 'options': {'type': 'int', 'help': 'longest wait in ms for what it caused (navigation, requests); default: the actionWaitMs setting, 0 = none'}},
    ],
    'drag': [
        {'flags': ['start'], 'dest': 'start', 'field': 'startRef', 'options': {'help': 'the element to drag (a ref from the latest snapshot)'}},
        {'flags': ['end'], 'dest': 'end', 'field': 'endRef', 'options': {'help': 'the element to drop it on (a ref)'}},
        {'flags': ['--timeout-ms'], 'dest': 'timeout_ms', 'field': 'timeoutMs', 'options': {'type': 'int', 'help': 'default 8000, clamped to 500–60000'}},
        {'flags': ['--wait-ms'], 'dest': 'wait_ms', 'field': 'waitMs', 'options': {'type': 'int', 'help': 'longest wait in ms for what it caused (navigation, requests); default: the actionWaitMs setting, 0 = none'}},
    ],
    'select': [
        {'flags': ['ref'], 'dest': 'ref', 'field': 'ref', 'options': {'help': 'ref from the latest snapshot, e.g. e12'}},
        {'flags': ['values'], 'dest': 'values', 'field': 'values', 'options': {'nargs': '+', 'help': 'option values or labels'}},
        {'flags': ['--timeout-ms'], 'dest': 'timeout_ms', 'field': 'timeoutMs', 'options': {'type': 'int', 'help': 'default 8000, clamped to 500–60000'}},
        {'flags': ['--wait-ms'], 'dest': 'wait_ms', 'field': 'waitMs', 'options': {'type': 'int', 'help': 'longest wait in ms for what it caused (navigation, requests); default: the actionWaitMs setting, 0 = none'}},
    ],
    'fill': [
        {'flags': ['pairs'], 'dest': 'pairs', 'options': {'nargs': '*', 'metavar': 'REF=VALUE', 'help': 'a field to fill: REF=VALUE'}},
        {'flags': ['--fields'], 'dest': 'fields', 'options': {'help': 'JSON: [{"ref": "e5", "value": "Ada"}, ...]'}},
        {'flags': ['--timeout-ms'], 'dest': 'timeout_ms', 'field': 'timeoutMs', 'options': {'type': 'int', 'help': 'default 8000, clamped to 500–60000'}},
        {'flags': ['--wait-ms'], 'dest': 'wait_ms', 'field': 'waitMs', 'options': {'type': 'int', 'help': 'longest wait in ms for what it caused (navigation, requests); default: the actionWaitMs setting, 0 = none'}},
    ],
    'resize': [
        {'flags': ['width'], 'dest': 'width', 'field': 'width', 'options': {'type': 'int'}},
        {'flags': ['height'], 'dest': 'height', 'field': 'height', 'options': {'type': 'int'}},
        {'flags': ['--timeout-ms'], 'dest': 'timeout_ms', 'field': 'timeoutMs', 'options': {'type': 'int', 'help': 'default 8000, clamped to 500–60000'}},
        {'flags': ['--wait-ms'], 'dest': 'wait_ms', 'field': 'waitMs', 'options': {'type': 'int', 'help': 'longest wait in ms for what it caused (navigation, requests); default: the actionWaitMs setting, 0 = none'}},
    ],
    'wait': [
        {'flags': ['--text'], 'dest': 'text', 'field': 'text', 'options': {'help': 'until this text is visible'}},
        {'flags': ['--text-gone'], 'dest': 'text_gone', 'field': 'textGone', 'options': {'help': 'until this text is gone'}},
        {'flags': ['--selector'], 'dest': 'selector', 'field': 'selector', 'options': {'help': 'until this CSS selector is visible'}},
        {'flags': ['--url-glob', '--until-url'], 'dest': 'url_glob', 'field': 'url', 'options': {'help': 'until the URL matches (glob, e.g. **/done)', 'dest': 'url_glob'}},
        {'flags': ['--load-state'], 'dest': 'load_state', 'field': 'loadState', 'options': {'choices': ['load', 'domcontentloaded', 'networkidle']}},
        {'flags': ['--fn'], 'dest': 'fn', 'field': 'fn', 'options': {'help': 'until this JS function returns truthy'}},
        {'flags': ['--time'], 'dest': 'time', 'field': 'timeMs', 'options': {'type': 'int', 'help': 'just wait this long (ms)'}},
        {'flags': ['--network-quiet'], 'dest': 'network_quiet', 'field': 'networkQuiet', 'options': {'action': 'store_true', 'help': 'until no request is in flight for quietMs (streams open over 5 s aside)'}},
        {'flags': ['--quiet-ms'], 'dest': 'quiet_ms', 'field': 'quietMs', 'options': {'type': 'int', 'help': "networkQuiet's window; default: 500"}},
        {'flags': ['--timeout-ms'], 'dest': 'timeout_ms', 'field': 'timeoutMs', 'options': {'type': 'int', 'help': 'default 8000, clamped to 500–60000'}},
        {'flags': ['--wait-ms'], 'dest': 'wait_ms', 'field': 'waitMs', 'options': {'type': 'int', 'help': 'longest wait in ms for what it caused (navigation, requests); default: the actionWaitMs setting, 0 = none'}},
    ],
    'evaluate': [
        {'flags': ['function'], 'dest': 'function', 'field': 'fn', 'options': {'help': "'() => document.title', or '(el) => …' with ref", 'nargs': '?'}},
        {'flags': ['--fn'], 'dest': 'fn', 'field': 'fn', 'options': {'help': '==SUPPRESS==', 'dest': 'fn'}},
        {'flags': ['--ref'], 'dest': 'ref', 'field': 'ref', 'options': {'help': 'pass this element to the function'}},
        {'flags': ['--timeout-ms'], 'dest': 'timeout_ms', 'field': 'timeoutMs', 'options': {'type': 'int', 'help': 'default 8000, clamped to 500–60000'}},
        {'flags': ['--wait-ms'], 'dest': 'wait_ms', 'field': 'waitMs', 'options': {'type': 'int', 'help': 'longest wait in ms for what it caused (navigation, requests); default: the actionWaitMs setting, 0 = none'}},
    ],
    'scroll': [
        {'flags': ['ref'], 'dest': 'ref', 'field': 'ref', 'options': {'help': 'the element to scroll; default: the page', 'nargs': '?'}},
        {'flags': ['--dx'], 'dest': 'dx', 'field': 'deltaX', 'options': {'type': 'int', 'help': 'pixels right (<0: left); default: 0'}},
        {'flags': ['--dy'], 'dest': 'dy', 'field': 'deltaY', 'options': {'type': 'int', 'help': 'pixels down (<0: up); default: 0'}},
        {'flags': ['--timeout-ms'], 'dest': 'timeout_ms', 'field': 'timeoutMs', 'options': {'type': 'int', 'help': 'default 8000, clamped to 500–60000'}},
        {'flags': ['--wait-ms'], 'dest': 'wait_ms', 'field': 'waitMs', 'options': {'type': 'int', 'help': 'longest wait in ms for what it caused (navigation, requests); default: the actionWaitMs setting, 0 = none'}},
    ],
    'state': [
        {'flags': ['action'], 'dest': 'action', 'options': {'choices': ['save', 'load', 'list', 'rm'], 'help': "save the profile's logins, load them into a profile, list or delete them"}},
        {'flags': ['name'], 'dest': 'name', 'field': 'name', 'options': {'help': "the saved state's name (letters, digits, '_', '.', '-'); kept in browserdeck's data folder, never in a file you can read", 'nargs': '?'}},
    ],
}

# Per page command, in --help's order: its help, the line it prints (words.say) and
# the fields it always sends.
COMMANDS: dict[str, dict[str, Any]] = {
    'snapshot': {'help': 'accessibility snapshot with element refs', 'said': '', 'fields': {}},
    'navigate': {'help': 'go to a URL', 'said': '', 'fields': {}},
    'back': {'help': "go back in the tab's history", 'said': '', 'fields': {'action': 'back'}},
    'forward': {'help': "go forward in the tab's history", 'said': '', 'fields': {'action': 'forward'}},
    'screenshot': {'help': 'screenshot to a file', 'said': '', 'fields': {}},
    'console': {'help': 'console messages and page errors', 'said': '', 'fields': {}},
    'pdf': {'help': 'save the page as PDF (headless only)', 'said': '', 'fields': {}},
    'upload': {'help': 'upload files (arms the next file chooser)', 'said': '', 'fields': {}},
    'dialog': {'help': 'arm the answer to the next dialog', 'said': '', 'fields': {}},
    'route': {'help': 'mock, change or block requests matching a URL pattern', 'said': '', 'fields': {}},
    'routes': {'help': 'list the active network routes', 'said': '', 'fields': {}},
    'unroute': {'help': "remove routes (a pattern's, or all of yours)", 'said': '', 'fields': {}},
    'network-state': {'help': 'take the tab offline or back online', 'said': 'network is now {state}', 'fields': {}},
    'har-start': {'help': "start recording a HAR of the tab (or of the session's tabs)", 'said': '', 'fields': {}},
    'har-stop': {'help': "stop the HAR recording; prints the file's path", 'said': '', 'fields': {}},
    'requests': {'help': "the tab's network requests (filters: URL text, type, method, status)", 'said': '', 'fields': {}},
    'request': {'help': "one request's headers and body", 'said': '', 'fields': {}},
    'click': {'help': 'click an element by ref', 'said': '{doubleClick?double-}clicked {ref}', 'fields': {'kind': 'click'}},
    'type': {'help': 'type into an element (replaces its value)', 'said': 'typed into {ref}{submit? and submitted}', 'fields': {'kind': 'type'}},
    'press': {'help': 'press a key (Enter, Escape, Control+A, ...)', 'said': 'pressed {key}', 'fields': {'kind': 'press'}},
    'hover': {'help': 'hover an element', 'said': 'hovering {ref}', 'fields': {'kind': 'hover'}},
    'drag': {'help': 'drag one element onto another', 'said': 'dragged {startRef} to {endRef}', 'fields': {'kind': 'drag'}},
    'select': {'help': 'select options of a <select>', 'said': '', 'fields': {'kind': 'select'}},
    'fill': {'help': 'fill several fields: REF=VALUE ... or --fields JSON', 'said': '', 'fields': {'kind': 'fill'}},
    'resize': {'help': 'set the viewport size', 'said': 'viewport is {width}x{height}', 'fields': {'kind': 'resize'}},
    'wait': {'help': 'wait for text, a selector, a URL, a load state, network quiet or time', 'said': 'done waiting', 'fields': {'kind': 'wait'}},
    'evaluate': {'help': 'run JavaScript in the page', 'said': '', 'fields': {'kind': 'evaluate'}},
    'scroll': {'help': 'scroll the page (or an element) like a mouse wheel; waits for what it loads', 'said': 'scrolled {ref|the page} by {deltaX|0},{deltaY|0}', 'fields': {'kind': 'scroll'}},
}
# fmt: on
