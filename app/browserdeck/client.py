"""A small synchronous client of the control API, used by the CLI (and handy in scripts).

Finds the service the way a user expects: ``--url``, then ``BROWSERDECK_URL``, then
the running service's Unix socket (``paths.api_socket()``: no token, the kernel tells
the service who we are), then the instance file, then the configured control port
with the token from ``BROWSERDECK_TOKEN`` or the store the service uses.

Every CLI call is a process of its own, so the hot path (the socket) imports only a
few standard modules (util/uds.py); ``http.client``, the token store (keyring), the
port-ownership check and the config are imported only for a TCP URL.
"""

from __future__ import annotations

import os
import sys

from browserdeck.util import fastjson as json  # json's loads/dumps without re
from browserdeck.util import paths, uds

# Not `from typing import`: typing costs a CLI call about a fifth of its start-up.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import http.client
    from argparse import Namespace
    from typing import Any

# urllib.parse (it imports ipaddress: ~3 ms of a CLI call) only where a URL is parsed: a
# call over the socket parses none, and builds its query string itself (query_string).

# What urllib.parse.quote_plus leaves as it is.
_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-~")


def query_string(params: dict[str, Any]) -> str:
    """``urllib.parse.urlencode(params)``, for the values a call sends (str(value), UTF-8)."""
    return "&".join(f"{_quote_plus(str(k))}={_quote_plus(str(v))}" for k, v in params.items())


def _quote_plus(text: str) -> str:
    return "".join(
        chr(b) if b in _UNRESERVED else "+" if b == 0x20 else f"%{b:02X}" for b in text.encode()
    )

CLIENT_NAME = "browserdeck-cli"


class ClientError(Exception):
    """An error to print for a person and exit with ``exit_code``."""

    def __init__(self, message: str, hint: str | None = None, *, exit_code: int = 1,
                 code: str | None = None, status: int | None = None) -> None:
        super().__init__(message)
        self.message, self.hint, self.exit_code = message, hint, exit_code
        self.code, self.status = code, status

    def render(self) -> str:
        return f"error: {self.message}" + (f"\n  hint: {self.hint}" if self.hint else "")

    def to_json(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message, "hint": self.hint}}


def discover_url() -> str:
    env = os.environ.get("BROWSERDECK_URL")
    if env:
        return env.rstrip("/")
    try:
        data = json.loads(paths.instance_file().read_text(encoding="utf-8"))
        return str(data["url"]).rstrip("/")
    except (OSError, ValueError, KeyError):
        pass
    port = 18791
    path = paths.config_file()
    if path.exists():
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            port = int(raw.get("controlPort", port))
        except (OSError, ValueError, TypeError):
            pass
    else:
        from browserdeck import config

        port = config.default_config().control_port
    return f"http://127.0.0.1:{port}"


def _headers(token: str) -> dict[str, str]:
    headers = {"X-Browserdeck-Client": CLIENT_NAME}
    if token:  # none over the socket (the kernel vouches for us), nor for /health
        headers["Authorization"] = f"Bearer {token}"
    # A named CLI client is an agent session of its own: a pooled remote profile gives it
    # its own browser, kept across commands until it idles or `browserdeck stop`.
    name = os.environ.get("BROWSERDECK_CLIENT", "").strip()
    if name:
        headers["X-Browserdeck-Session"] = f"cli:{name}"[:200]
    return headers


def _user(uid: int) -> str:
    try:
        import pwd

        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except (ImportError, KeyError):
        return f"uid {uid}"


def unproven_server(url: str) -> tuple[str, str] | None:
    """Why the server at ``url`` must not get the API token, as ``(code, message)`` with
    code ``not_running`` or ``not_our_server``; None when it is ours.

    The one place that decides whether a loopback URL may receive ``Authorization:
    Bearer``: another local user can listen on the control port while browserdeck is
    not running (docs/security.md). Every socket that could take our connection must be
    owned by our own uid; and when the instance file names a live browserdeck for this
    port, that very process must hold the socket (a second program of ours on the port,
    e.g. a dev server, is not browserdeck either). psutil lists the sockets; where
    it cannot list other users' (macOS without root) the check is skipped (docs/security.md). A non-loopback URL is one the user
    typed (``--url``/``BROWSERDECK_URL``, a tunnel) and is trusted as given.
    """
    from urllib.parse import urlsplit

    from browserdeck.chrome import procs
    from browserdeck.policy import guard

    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if not guard.is_loopback_name(host):
        return None
    port = parts.port or (443 if parts.scheme == "https" else 80)
    listeners = procs.loopback_listeners(port)
    if listeners is None:
        return None
    if not listeners:
        return "not_running", f"nothing listens on {host}:{port}"
    me = os.getuid()
    # A listener whose process we cannot see is another user's (ours are always visible).
    strangers = sorted({lst.uid if lst.uid is not None else -1 for lst in listeners} - {me})
    if strangers:
        who = "another user" if strangers[-1] == -1 else _user(strangers[-1])
        return "not_our_server", (
            f"the program listening on {host}:{port} runs as {who}, not as "
            f"you ({_user(me)}): it is not your browserdeck, so your API token was not sent"
        )
    try:
        data = json.loads(paths.instance_file().read_text(encoding="utf-8"))
        pid, recorded = int(data["pid"]), urlsplit(str(data["url"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if recorded.port == port and pid != os.getpid() and procs.pid_alive(pid) and not any(
        lst.pid == pid for lst in listeners
    ):
        return "not_our_server", (
            f"{host}:{port} is held by another program, not by the browserdeck process "
            f"(pid {pid}) that {paths.instance_file()} names, so your API token was not sent"
        )
    return None


NOT_OURS_HINT = (
    "stop the program on that port (`ss -ltnp` shows it) and start browserdeck, or point "
    "--url / BROWSERDECK_URL at your own browserdeck"
)


def tcp_connection(url: str, timeout: float | None) -> http.client.HTTPConnection:
    """A connection to the API at a TCP ``url`` (http or https): for one request (the CLI)
    or one long stream (the MCP bridge). Prove the server first (``unproven_server``)."""
    import http.client
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    return cls(parts.hostname or "", parts.port, timeout=timeout)


def stored_token() -> str:
    """The API token from the store the service keeps it in ("" when there is none)."""
    from browserdeck.secrets import tokens

    return tokens.get_token("api", create=False) or ""


def api_socket_path() -> str | None:
    """The running service's API socket, if its file is there (it may still be stale)."""
    try:
        path = paths.api_socket_path()
    except OSError:
        return None
    return path if path is not None and os.path.exists(path) else None


NOT_RUNNING_HINT = (
    "start it with `browserdeck serve` (headless service) or `browserdeck` (tray app)"
)


# A call may wait for a person to allow it (approvalTimeoutSeconds, at most 300 s) before
# it runs (up to a minute or so): the service bounds both.
CALL_TIMEOUT = 90.0 + 300.0


class ApiClient:
    def __init__(self, url: str | None = None, token: str | None = None,
                 timeout: float = CALL_TIMEOUT) -> None:
        self.timeout = timeout
        self._token = token
        self._proven = False
        explicit = url or os.environ.get("BROWSERDECK_URL")
        self.socket_path = None if explicit else api_socket_path()
        self.url = "" if self.socket_path else (explicit or discover_url()).rstrip("/")
        if self.url:
            self._check_url()

    def _check_url(self) -> None:
        from urllib.parse import urlsplit

        try:
            parts = urlsplit(self.url)
            ok = parts.scheme in ("http", "https") and bool(parts.hostname)
            parts.port  # noqa: B018 - raises on a bad port
        except ValueError:
            ok = False
        if not ok:
            raise ClientError(f"invalid control API URL {self.url!r}",
                              "check --url / BROWSERDECK_URL (e.g. http://127.0.0.1:18791)",
                              exit_code=2, code="invalid_url")

    @property
    def where(self) -> str:
        return self.url or f"the API socket {self.socket_path}"

    def close(self) -> None:
        """Nothing stays open between requests (kept for callers of the old client)."""

    def _headers(self) -> dict[str, str]:
        if self.socket_path:
            return _headers("")
        if self._token is None:
            self._token = stored_token()
        return _headers(self._token)

    def _exchange(self, method: str, target: str, headers: dict[str, str],
                  body: bytes | None) -> tuple[int, str, bytes]:
        """(status, content type, body): over the socket with uds.request, else TCP."""
        if self.socket_path:
            status, answer, data = uds.request(self.socket_path, method, target, headers=headers,
                                               body=body, timeout=self.timeout)
            return status, answer.get("content-type", ""), data
        import http.client

        # One connection per request: a kept-alive one the server closed while a long
        # call ran would fail the next request half-way.
        conn = tcp_connection(self.url, self.timeout)
        try:
            conn.request(method, target, body=body, headers=headers)
            resp = conn.getresponse()
            return resp.status, resp.getheader("content-type") or "", resp.read()
        except http.client.HTTPException as exc:
            raise uds.HttpError(str(exc)) from None
        finally:
            conn.close()

    def request(self, method: str, path: str, *, params: dict[str, Any] | None = None,
                json_body: Any = None, headers: dict[str, str] | None = None) -> Any:
        clean = {k: v for k, v in (params or {}).items() if v is not None}
        if not self.socket_path and not self._proven:
            self._prove_server()
        target = path
        if self.url:
            from urllib.parse import urlsplit

            target = urlsplit(self.url).path.rstrip("/") + path
        if clean:
            target += "?" + query_string(clean)
        headers = {**self._headers(), **(headers or {})}
        body = None
        if json_body is not None:
            body = json.dumps(json_body).encode()
            headers["Content-Type"] = "application/json"
        try:
            status, ctype, data = self._exchange(method, target, headers, body)
        except (ConnectionRefusedError, FileNotFoundError):
            if self.socket_path:
                # A socket file left by a service that died: look the TCP way instead,
                # which says plainly whether anything runs.
                self.socket_path, self.url = None, discover_url()
                return self.request(method, path, params=params, json_body=json_body,
                                    headers=headers)
            raise ClientError(f"browserdeck is not running at {self.where}", NOT_RUNNING_HINT,
                              exit_code=3, code="not_running") from None
        except TimeoutError:
            raise ClientError(f"browserdeck at {self.where} did not answer in time",
                              "check `browserdeck status`; the browser may be busy", exit_code=1,
                              code="timeout") from None
        except (OSError, uds.HttpError) as exc:
            raise ClientError(f"cannot reach browserdeck at {self.where}: {exc}",
                              "check --url / BROWSERDECK_URL (e.g. http://127.0.0.1:18791)",
                              exit_code=3, code="unreachable") from None
        if status >= 400:
            text = data.decode("utf-8", "replace")
            try:
                err = json.loads(data)["error"]
                raise ClientError(err.get("message", text), err.get("hint"),
                                  code=err.get("code"), status=status)
            except (ValueError, KeyError, TypeError):
                raise ClientError(f"HTTP {status}: {text[:300]}", status=status) from None
        if ctype.startswith("application/json"):
            return json.loads(data)
        return data

    def _prove_server(self) -> None:
        problem = unproven_server(self.url)
        if problem is not None and problem[0] == "not_running":
            raise ClientError(f"browserdeck is not running at {self.url}", NOT_RUNNING_HINT,
                              exit_code=3, code="not_running")
        if problem is not None:
            raise ClientError(problem[1], NOT_OURS_HINT, exit_code=3, code=problem[0])
        self._proven = True

    def get(self, path: str, *, params: dict[str, Any] | None = None) -> Any:
        return self.request("GET", path, params=params)

    def post(self, path: str, *, json: Any = None, params: dict[str, Any] | None = None,
             headers: dict[str, str] | None = None) -> Any:
        return self.request("POST", path, params=params, json_body=json, headers=headers)

    def delete(self, path: str, *, params: dict[str, Any] | None = None) -> Any:
        return self.request("DELETE", path, params=params)

    @staticmethod
    def print_result(data: Any, args: Namespace, text: str | None = None) -> None:
        """``--json`` prints the JSON; otherwise ``text`` (or a compact key: value form)."""
        if getattr(args, "json", False):
            print(json.dumps(data, indent=2))
        elif text is not None:
            print(text)
        elif isinstance(data, dict):
            for key, value in data.items():
                print(f"{key}: {value if not isinstance(value, dict | list) else json.dumps(value)}")
        else:
            print(data)


def fail(err: ClientError, as_json: bool) -> int:
    if as_json:
        print(json.dumps(err.to_json(), indent=2))
    else:
        print(err.render(), file=sys.stderr)
    return err.exit_code
