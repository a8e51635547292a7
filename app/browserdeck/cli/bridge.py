"""``browserdeck mcp``: a thin stdio <-> ``/mcp`` bridge to the running service.

An MCP client spawns it for every agent session, so its start is the first thing a user
feels: it imports the standard library only and carries JSON-RPC lines between the
client's stdio and the service's ``/mcp`` (over the Unix socket, or a TCP URL with the
token). Each request is one POST whose answer (JSON or an event stream) is copied out as
it comes; a GET stream carries what the service sends on its own (``roots/list``). Its
headers name the workspace (``X-Browserdeck-Workspace``), a session of its own
(``X-Browserdeck-Session``) and this pid (``X-Browserdeck-Bridge``). At the end of stdin
the session is deleted; a service that goes away mid-session is started again and the
session opened anew (docs/mcp.md, "a bridge, and the service it may start").
"""

from __future__ import annotations

import contextlib
import http.client
import io
import json
import os
import signal
import socket
import sys
import threading
import uuid
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO
from urllib.parse import quote

Connect = Callable[[], http.client.HTTPConnection]
# Starts the service again; None once it answers, else why it could not.
Restart = Callable[[], "str | None"]

# A tool may wait up to a minute or two (navigation, wait_for); the service bounds it.
TIMEOUT = 300.0


class UnixHTTPConnection(http.client.HTTPConnection):
    """HTTP over a Unix socket; ``Host: localhost``, as the service's guard expects."""

    def __init__(self, path: str, timeout: float | None = TIMEOUT) -> None:
        super().__init__("localhost", timeout=timeout)
        self.socket_path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            sock.connect(self.socket_path)
        except OSError:
            sock.close()
            raise
        self.sock = sock


def sse_messages(stream: BinaryIO) -> Iterator[bytes]:
    """The ``data`` of each server-sent event (empty priming events skipped)."""
    data: list[bytes] = []
    for raw in stream:
        line = raw.rstrip(b"\r\n")
        if not line:
            if data:
                yield b"\n".join(data)
            data = []
        elif line.startswith(b"data:"):
            value = line[5:]
            data.append(value[1:] if value.startswith(b" ") else value)
    if data:
        yield b"\n".join(data)


def workspace_uri(cwd: str) -> str:
    return "file://" + quote(cwd, safe="/")


class _Unreached(Exception):
    """The request never reached the service (nothing listens): safe to send again."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


class Bridge:
    def __init__(
        self,
        connect: Connect,
        path: str,
        *,
        headers: dict[str, str] | None = None,
        out: BinaryIO | None = None,
        where: str = "the browserdeck service",
        restart: Restart | None = None,
        identity: Callable[[], object] | None = None,
    ) -> None:
        self.connect = connect
        self.path = path  # /mcp plus the query (?tools=…&profile=…)
        self.where = where
        # How to start the service again when it went away (None: we may not, e.g. --url),
        # and what tells one service process from the next (the socket file's inode).
        self.restart = restart
        self.identity = identity or (lambda: None)
        self._upstream: object = None  # identity of the service our session lives on
        # The client's handshake as it sent it, to open the session again on a new service.
        self._handshake: list[bytes] = []
        self._recover_lock = threading.Lock()
        self._generation = 0  # sessions opened again so far
        self.out = out or sys.stdout.buffer
        self._out_lock = threading.Lock()
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        self._stream_started = False
        self._stream_open = threading.Event()
        self._closed = threading.Event()
        self.headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "X-Browserdeck-Session": f"stdio-{os.getpid()}-{uuid.uuid4().hex[:8]}",
            "X-Browserdeck-Bridge": str(os.getpid()),
            **(headers or {}),
        }
        with contextlib.suppress(OSError):  # the working directory may have been removed
            self.headers["X-Browserdeck-Workspace"] = workspace_uri(os.getcwd())

    # --- output ------------------------------------------------------------------
    def write(self, data: bytes) -> None:
        # The client closed our stdout: it is going, and the end of stdin ends us too.
        # Never an OSError here, which would read as the service going away.
        with self._out_lock, contextlib.suppress(OSError, ValueError):
            self.out.write(data.strip() + b"\n")
            self.out.flush()

    def write_error(self, msg_id: Any, message: str, code: int = -32603) -> None:
        if msg_id is None:
            return  # a notification gets no answer
        error = {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}
        self.write(json.dumps(error).encode())

    # --- requests ----------------------------------------------------------------
    def _request_headers(self) -> dict[str, str]:
        headers = dict(self.headers)
        if self.session_id:
            headers["Mcp-Session-Id"] = self.session_id
        if self.protocol_version:
            headers["Mcp-Protocol-Version"] = self.protocol_version
        return headers

    def post(self, body: bytes, msg: dict[str, Any]) -> None:
        """Send one message; copy whatever the service answers to stdout.

        When the service went away and ``restart`` may start it, the request is sent again
        to the new one (if it never reached the old one) after the session is opened anew.
        """
        msg_id = msg.get("id") if "method" in msg else None
        method = msg.get("method")
        if method == "initialize":
            self._handshake = [body]
        for attempt in range(2):
            generation = self._generation
            try:
                self._send(body, msg_id, method)
            except _Unreached as exc:
                if attempt == 0 and self.restart is not None:
                    problem = self._recover(generation, reopen=method != "initialize")
                    if problem is None:
                        continue
                    self.write_error(msg_id, self._restart_failed(problem))
                    return
                self.write_error(
                    msg_id,
                    f"{self.where} does not answer ({exc.why}); start browserdeck again "
                    "(`browserdeck serve` or the tray app) and reconnect this MCP server",
                )
            except (OSError, http.client.HTTPException) as exc:
                # The service took the request and went away before answering it.
                why = exc.strerror if isinstance(exc, OSError) and exc.strerror else repr(exc)
                if self.restart is None:
                    self.write_error(msg_id, f"{self.where} broke off its answer: {why}")
                    return
                problem = self._recover(generation, reopen=method != "initialize")
                if problem is not None:
                    self.write_error(msg_id, self._restart_failed(problem))
                    return
                self.write_error(
                    msg_id,
                    f"{self.where} stopped while it carried out this call ({why}). It runs "
                    "again, but what the call did is unknown, and the tabs and element refs "
                    "from before are gone: take a new snapshot (browser_snapshot), then "
                    "call again",
                )
            else:
                if method == "initialize" and self.session_id:
                    self._upstream = self.identity()
                elif method == "notifications/initialized" and len(self._handshake) == 1:
                    self._handshake.append(body)
            return

    def _restart_failed(self, problem: str) -> str:
        return (
            f"{self.where} went away and could not be started again: {problem}. Start "
            "browserdeck yourself (`browserdeck serve` or the tray app), then call again"
        )

    def _send(self, body: bytes, msg_id: Any, method: Any) -> None:
        with self._recover_lock:
            pass  # a session being opened again on a new service: send once it is open
        conn = self.connect()
        try:
            try:
                conn.connect()
            except OSError as exc:
                raise _Unreached(str(exc.strerror or exc)) from exc
            conn.request("POST", self.path, body=body, headers=self._request_headers())
            resp = conn.getresponse()
            if resp.status == 404 and self.restart is not None and self._replaced():
                # Our session lived on a service that is gone; this one never knew it.
                resp.read()
                raise _Unreached("the service was started again by another client")
            if method == "initialize":
                self.session_id = resp.getheader("mcp-session-id") or self.session_id
            self._copy(resp, msg_id, initialize=method == "initialize")
        finally:
            conn.close()

    def _replaced(self) -> bool:
        """Whether the service now answering is another process than our session's."""
        return self._upstream is not None and self.identity() != self._upstream

    def _answers(self) -> bool:
        conn = self.connect()
        try:
            conn.connect()
            return True
        except OSError:
            return False
        finally:
            conn.close()

    def _recover(self, generation: int, *, reopen: bool) -> str | None:
        """The service went away: start it again and open our session on it anew.

        None when that worked (or another request's thread did it meanwhile), else why not.
        """
        with self._recover_lock:
            if self._generation != generation:
                return None
            assert self.restart is not None
            if not self._answers():
                problem = self.restart()
                if problem is not None:
                    return problem
            self._generation += 1
            return self._reopen() if reopen else None

    def _reopen(self) -> str | None:
        """Replay the client's handshake to the new service; its answers stay here."""
        self.session_id = None
        if not self._handshake:
            return None  # the stateless protocol: every request stands on its own
        for body in self._handshake:
            conn = self.connect()
            try:
                conn.request("POST", self.path, body=body, headers=self._request_headers())
                resp = conn.getresponse()
                if resp.status >= 400:
                    return f"it refused to open the session again (HTTP {resp.status})"
                if self.session_id is None:
                    self.session_id = resp.getheader("mcp-session-id")
                raw = resp.read()
                for data in sse_messages(io.BytesIO(raw)) if b"data:" in raw else [raw]:
                    self._note_version(data)
            except (OSError, http.client.HTTPException) as exc:
                return f"opening the session again failed: {exc!r}"
            finally:
                conn.close()
        self._upstream = self.identity()
        if len(self._handshake) > 1 and self.session_id:
            self._open_stream()
        return None

    def _open_stream(self) -> None:
        """The GET stream for what the service sends on its own, open before we go on:
        a ``roots/list`` sent while none is open would be lost, and the roots with it."""
        self._stream_open.clear()
        threading.Thread(target=self._listen, name="mcp-stream", daemon=True).start()
        self._stream_open.wait(5.0)

    def _copy(self, resp: http.client.HTTPResponse, msg_id: Any, *, initialize: bool) -> None:
        ctype = (resp.getheader("content-type") or "").split(";")[0].strip().lower()
        if resp.status == 202 or (resp.status < 400 and not ctype):
            resp.read()
            return
        if resp.status >= 400:
            raw = resp.read()
            self._forward_error(raw, resp.status, msg_id)
            return
        if ctype == "text/event-stream":
            for data in sse_messages(resp):
                if initialize:
                    self._note_version(data)
                self.write(data)
            return
        data = resp.read()
        if initialize:
            self._note_version(data)
        if data.strip():
            self.write(data)

    def _note_version(self, data: bytes) -> None:
        try:
            version = json.loads(data)["result"]["protocolVersion"]
        except (ValueError, KeyError, TypeError):
            return
        if isinstance(version, str):
            self.protocol_version = version

    def _forward_error(self, raw: bytes, status: int, msg_id: Any) -> None:
        try:
            parsed = json.loads(raw)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and parsed.get("jsonrpc") == "2.0":
            if parsed.get("id") is None and msg_id is not None:
                parsed["id"] = msg_id
            if parsed.get("id") is not None:
                self.write(json.dumps(parsed).encode())
            return
        # One of browserdeck's own errors ({"error": {code, message, hint}}), e.g. the guard.
        message = f"HTTP {status} from {self.where}"
        if isinstance(parsed, dict) and isinstance(parsed.get("error"), dict):
            err = parsed["error"]
            message = str(err.get("message") or message)
            if err.get("hint"):
                message += f" (hint: {err['hint']})"
        self.write_error(msg_id, message)

    # --- the service's own stream ---------------------------------------------------
    def _listen(self) -> None:
        """GET /mcp: what the service sends outside a request (roots/list)."""
        try:
            conn = self.connect()
            conn.timeout = None  # open for the whole session
            headers = self._request_headers()
            headers["Accept"] = "text/event-stream"
            del headers["Content-Type"]
            conn.request("GET", self.path, headers=headers)
            resp = conn.getresponse()
            self._stream_open.set()
            if resp.status != 200:
                resp.read()
                return
            for data in sse_messages(resp):
                self.write(data)
        except (OSError, http.client.HTTPException):
            return  # the service went away; requests say so
        finally:
            self._stream_open.set()

    # --- the loop --------------------------------------------------------------------
    def handle(self, line: bytes) -> None:
        try:
            msg = json.loads(line)
        except ValueError:
            self.write_error(None, "parse error")
            return
        if not isinstance(msg, dict):  # a batch: forward as it is, in order
            self.post(line, {})
            return
        method = msg.get("method")
        if method == "initialize" or "method" not in msg or "id" not in msg:
            # The handshake in order (its answer names the session), and notifications and
            # answers to the service's requests: these answer at once (202).
            self.post(line, msg)
            if method == "notifications/initialized" and self.session_id and not self._stream_started:
                self._stream_started = True
                self._open_stream()
            return
        threading.Thread(target=self.post, args=(line, msg), name="mcp-call", daemon=True).start()

    def run(self, stdin: BinaryIO | None = None) -> None:
        source = stdin or sys.stdin.buffer
        try:
            for line in source:
                if line.strip():
                    self.handle(line)
        finally:
            self.close()

    def close(self) -> None:
        """End the session on the service (its tabs are given back); quick, bounded."""
        if self._closed.is_set():
            return
        self._closed.set()
        try:
            conn = self.connect()
            conn.timeout = 2.0
            headers = self._request_headers()
            del headers["Content-Type"]
            conn.request("DELETE", self.path, headers=headers)
            conn.getresponse().read()
            conn.close()
        except (OSError, http.client.HTTPException):
            pass


def _stop_on_signals() -> None:
    def stop(signum: int, frame: Any) -> None:
        raise SystemExit(0)

    for name in ("SIGTERM", "SIGINT", "SIGHUP"):
        sig = getattr(signal, name, None)
        if sig is not None:
            signal.signal(sig, stop)


def run(bridge: Bridge) -> int:
    _stop_on_signals()
    try:
        bridge.run()
    except SystemExit:
        bridge.close()
    except KeyboardInterrupt:
        bridge.close()
    return 0
