"""The child process that runs ``browser_run_code`` snippets (``python -m`` this module).

One per MCP session, started by ``runcode.run``: agent code never runs inside the MCP
server or the service, so a ``while True`` cannot freeze the API, the relay or the tray;
the parent kills this process when a snippet overruns its time limit. It opens its own
Playwright connection to the profile's CDP endpoint with the headers the parent gives
it (the endpoint's token), and keeps ``state`` and the connection between snippets.

Protocol: one JSON request per line on stdin ``{"code", "cdpUrl", "headers",
"target"}``; one JSON reply per line on the original stdout ``{"ok", "text"}`` or
``{"ok": false, "error", "printed"}``. The snippet's own prints are captured.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import io
import json
import signal
import sys
import textwrap
from typing import Any


def compile_snippet(code: str) -> Any:
    """The snippet as an async function; a lone expression is returned, as in a REPL."""
    tree = ast.parse(textwrap.dedent(code).strip(), mode="exec")
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = tree.body[-1]
        tree.body[-1] = ast.copy_location(ast.Return(value=last.value), last)
    module = ast.parse("async def __browser_run_code(page, context, browser, state):\n  pass\n")
    func = module.body[0]
    assert isinstance(func, ast.AsyncFunctionDef)
    func.body = tree.body or [ast.Pass()]
    ast.fix_missing_locations(module)
    namespace: dict[str, Any] = {}
    exec(compile(module, "<browser_run_code>", "exec"), namespace)
    return namespace["__browser_run_code"]


class Worker:
    def __init__(self) -> None:
        self.pw: Any = None
        self.browser: Any = None
        self.cdp_url = ""
        self.pages: dict[str, Any] = {}
        self.state: dict[str, Any] = {}

    async def page_for(self, cdp_url: str, headers: dict[str, str], target: str) -> Any:
        from playwright.async_api import async_playwright

        if self.browser is None or not self.browser.is_connected() or self.cdp_url != cdp_url:
            if self.pw is None:
                self.pw = await async_playwright().start()
            try:
                self.browser = await self.pw.chromium.connect_over_cdp(cdp_url, headers=headers)
            except Exception as exc:
                raise RuntimeError(f"could not connect to {cdp_url}: {exc}") from None
            self.cdp_url = cdp_url
            self.pages = {}
        page = self.pages.get(target)
        if page is not None and not page.is_closed():
            return page
        for ctx in self.browser.contexts:
            for candidate in ctx.pages:
                cdp = await ctx.new_cdp_session(candidate)
                try:
                    info = await cdp.send("Target.getTargetInfo")
                finally:
                    await cdp.detach()
                if info["targetInfo"]["targetId"] == target:
                    self.pages[target] = candidate
                    return candidate
        raise RuntimeError(f"cannot see this session's tab {target[:8]}; call browser_reset")

    async def run(self, request: dict[str, Any]) -> dict[str, Any]:
        printed = io.StringIO()
        try:
            func = compile_snippet(str(request["code"]))
            page = await self.page_for(
                str(request["cdpUrl"]), dict(request.get("headers") or {}), str(request["target"])
            )
            with contextlib.redirect_stdout(printed):
                result = await func(page, page.context, self.browser, self.state)
        except Exception as exc:
            return {
                "ok": False,
                "error": f"{type(exc).__name__}: {exc}",
                "printed": printed.getvalue(),
            }
        parts = [printed.getvalue().rstrip()]
        if result is not None:
            try:
                parts.append(json.dumps(result, ensure_ascii=False, indent=1, default=repr))
            except (TypeError, ValueError):
                parts.append(repr(result))
        return {"ok": True, "text": "\n".join(p for p in parts if p)}


def _die_with_parent() -> None:
    # A snippet stuck in a loop never reads stdin's EOF: let the kernel end us instead.
    if sys.platform.startswith("linux"):
        with contextlib.suppress(Exception):
            import ctypes

            ctypes.CDLL("libc.so.6", use_errno=True).prctl(
                1, int(signal.SIGKILL)
            )  # PR_SET_PDEATHSIG


async def main() -> None:
    _die_with_parent()
    out = sys.stdout
    sys.stdout = sys.stderr  # nothing but replies goes to the parent's pipe
    worker = Worker()
    loop = asyncio.get_running_loop()
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line:
            break
        try:
            reply = await worker.run(json.loads(line))
        except Exception as exc:  # a broken request: say so, keep serving
            reply = {"ok": False, "error": f"{type(exc).__name__}: {exc}", "printed": ""}
        out.write(json.dumps(reply) + "\n")
        out.flush()
    if worker.pw is not None:
        with contextlib.suppress(Exception):
            await worker.pw.stop()


if __name__ == "__main__":
    asyncio.run(main())
