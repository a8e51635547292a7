"""``browser_run_code``/``browser_reset``: agent Python in a child process of its own.

``browser_run_code`` runs Python Playwright snippets, as BrowserForce's execute/reset
do. It is off unless the ``mcpRunCode`` setting is on. The code never runs in this
process: each MCP session gets a child process (``runcode_worker``) with its own
Playwright connection to the profile's CDP endpoint, authenticated with that
endpoint's own token (none for a browser browserdeck does not serve), so it cannot disturb the engine's connection and a ``while True``
cannot freeze the API, the relay or the tray (docs/security.md). A snippet that runs
longer than its time limit is stopped by killing the child; its state goes with it.
``page`` is this session's tab, found by its targetId; ``state`` is a dict that
survives between calls until reset (or a timeout).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import textwrap
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pydantic import ConfigDict

from browserdeck.door.request import Request
from browserdeck.errors import ActionTimeout, BrowserdeckError, InvalidInput

if TYPE_CHECKING:
    from browserdeck.mcpserver.context import AgentSession, Call

DEFAULT_TIMEOUT = 30.0
MAX_TIMEOUT = 300.0


def _check_syntax(code: str) -> None:
    """A syntax error is reported without starting anything."""
    import ast

    try:
        ast.parse(textwrap.dedent(code).strip(), mode="exec")
    except SyntaxError as exc:
        raise InvalidInput(f"syntax error in the code, line {exc.lineno}: {exc.msg}") from None


async def _worker(session: AgentSession) -> asyncio.subprocess.Process:
    proc: asyncio.subprocess.Process | None = session.code_state.get("proc")
    if proc is not None and proc.returncode is None:
        return proc
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "browserdeck.mcpserver.runcode_worker",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        start_new_session=True,  # its own process group: a timeout kills all of it
    )
    session.code_state["proc"] = proc
    return proc


@dataclass
class CodeAnswer:
    """What the code returned or printed, and the addons' notes (what the approval addon
    held back of what the code did)."""

    text: str
    note: str | None = None

    def said(self) -> str:
        return self.text + (f"\nnote: {self.note}" if self.note else "")


class RunCode(Request[CodeAnswer]):
    """``browser_run_code`` at the front door, so addons see (and may refuse) the code."""

    op = "run-code"
    model_config = ConfigDict(strict=False)

    code: str
    timeout: float | None = None


async def run(call: Call, code: str, timeout: float | None = None) -> str:
    _check_syntax(code)
    request = RunCode(code=code, timeout=timeout)
    # On the session's tab: addons see it, and the approval addon watches the page (and the
    # others of its browser) for the code's risky clicks.
    target = await call.tab()
    answer = await call.app.deck.run(
        call.caller(),
        request,
        lambda: _run(call, code, timeout, target),
        profile=call.profile,
        target=target,
    )
    return answer.said()


async def _run(call: Call, code: str, timeout: float | None, target: str) -> CodeAnswer:
    limit = min(max(timeout or DEFAULT_TIMEOUT, 1.0), MAX_TIMEOUT)
    status = await call.app.deck.status(call.caller(), call.profile)
    if status.remote:
        # Its own Playwright connection would be a second browser at the service, not this tab.
        raise InvalidInput(
            f"browser_run_code cannot run on profile {status.profile!r}: it is a "
            "browser service, where a second connection starts a second browser",
            hint="use the other browser_* tools there, or a managed profile for run_code",
            code="unsupported_on_service",
        )
    request = {
        "code": code,
        "cdpUrl": str(status.cdp_url),
        # The profile's own credentials (none for an endpoint browserdeck does not serve).
        "headers": call.app.deck.cdp_credentials(call.profile),
        "target": target,
    }
    proc = await _worker(call.session)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write((json.dumps(request) + "\n").encode())
        await proc.stdin.drain()
        line = await asyncio.wait_for(proc.stdout.readline(), limit)
    except TimeoutError:
        await reset(call.session)
        raise ActionTimeout(
            f"the code ran longer than {limit:g} s and was stopped; its state and "
            "connection were reset",
            hint="make it finish sooner (no endless loops), or pass a larger timeout "
            f"(at most {MAX_TIMEOUT:g} s)",
            code="code_timeout",
        ) from None
    except (BrokenPipeError, ConnectionResetError):
        line = b""
    if not line:
        code_ = proc.returncode
        await reset(call.session)
        raise BrowserdeckError(
            f"the code's process ended (exit code {code_}); its state was reset",
            hint="run it again; if it keeps ending, it may exit or crash the interpreter",
            code="code_error",
        )
    reply = json.loads(line)
    if not reply.get("ok"):
        out = str(reply.get("printed") or "")
        raise BrowserdeckError(
            f"the code raised {reply.get('error')}",
            hint=(f"it printed:\n{out}" if out else None) or "fix the code and run it again",
            code="code_error",
        )
    text = str(reply.get("text") or "")
    return CodeAnswer(text or "done (no output; return a value or print to see one)")


async def reset(session: AgentSession) -> None:
    """Stop the session's code process (and everything it started) and forget its state."""
    proc: asyncio.subprocess.Process | None = session.code_state.pop("proc", None)
    session.code_state.clear()
    if proc is None:
        return
    if proc.returncode is None:
        if hasattr(os, "killpg"):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
    with contextlib.suppress(Exception):
        await asyncio.wait_for(proc.wait(), 5)
    if proc.stdin is not None:
        with contextlib.suppress(Exception):
            proc.stdin.close()
