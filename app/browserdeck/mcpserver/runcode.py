"""A session's own Playwright connection: ``browser_run_code``/``browser_reset``.

``browser_run_code`` runs Python Playwright snippets, as BrowserForce's execute/reset
do. It is off unless the ``mcpRunCode`` setting is on: the code runs with this
process's rights. It gets its own Playwright connection to the profile's CDP
endpoint (from ``GET /``), so it cannot disturb the engine's connection. ``page``
is this session's tab, found by its targetId; ``state`` is a dict that survives
between calls until reset.
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import textwrap
from typing import TYPE_CHECKING, Any

from browserdeck import secrets
from browserdeck.errors import BrowserdeckError, InvalidInput

if TYPE_CHECKING:
    from browserdeck.mcpserver.context import AgentSession, Call


def _compile(code: str) -> Any:
    """The snippet as an async function; a lone expression is returned, as in a REPL."""
    code = textwrap.dedent(code).strip()
    try:
        tree = ast.parse(code, mode="exec")
    except SyntaxError as exc:
        raise InvalidInput(f"syntax error in the code, line {exc.lineno}: {exc.msg}") from None
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


async def page_for(call: Call) -> tuple[Any, Any, Any]:
    from playwright.async_api import async_playwright

    st = call.session.code_state
    target = await call.tab()
    status = await call.api("GET", "/")
    cdp_url = str(status["cdpUrl"])
    browser = st.get("browser")
    if browser is None or not browser.is_connected() or st.get("cdp_url") != cdp_url:
        await reset(call.session)
        pw = await async_playwright().start()
        headers = None
        if status.get("driver") == "managed" and not status.get("attachOnly"):
            # A managed browser's CDP endpoint takes the API token (issue 10 item 2).
            headers = {"Authorization": f"Bearer {secrets.get_token('api', create=False) or ''}"}
        try:
            browser = await pw.chromium.connect_over_cdp(cdp_url, headers=headers)
        except Exception as exc:
            await pw.stop()
            raise BrowserdeckError(
                f"browser_run_code could not connect to {cdp_url}: {exc}",
                hint="check the profile runs (browser_profiles action=list)",
                code="connect_failed",
            ) from None
        st.update(pw=pw, browser=browser, cdp_url=cdp_url, pages={})
    pages: dict[str, Any] = st["pages"]
    page = pages.get(target)
    if page is None or page.is_closed():
        page = None
        for ctx in browser.contexts:
            for candidate in ctx.pages:
                cdp = await ctx.new_cdp_session(candidate)
                try:
                    info = await cdp.send("Target.getTargetInfo")
                finally:
                    await cdp.detach()
                if info["targetInfo"]["targetId"] == target:
                    page = candidate
                    break
            if page is not None:
                break
        if page is None:
            raise BrowserdeckError(
                f"browser_run_code cannot see this session's tab {target[:8]}",
                hint="call browser_reset and try again",
                code="tab_not_found",
            )
        pages[target] = page
    return page, page.context, browser


async def run(call: Call, code: str) -> str:
    func = _compile(code)
    page, context, browser = await page_for(call)
    state = call.session.code_state.setdefault("state", {})
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            result = await func(page, context, browser, state)
    except Exception as exc:
        out = printed.getvalue()
        raise BrowserdeckError(
            f"the code raised {type(exc).__name__}: {exc}",
            hint=(f"it printed:\n{out}" if out else None) or "fix the code and run it again",
            code="code_error",
        ) from None
    parts = [printed.getvalue().rstrip()]
    if result is not None:
        try:
            parts.append(json.dumps(result, ensure_ascii=False, indent=1, default=repr))
        except (TypeError, ValueError):
            parts.append(repr(result))
    text = "\n".join(p for p in parts if p)
    return text or "done (no output; return a value or print to see one)"


async def reset(session: AgentSession) -> None:
    st = session.code_state
    pw = st.pop("pw", None)
    st.pop("browser", None)
    st.pop("pages", None)
    st.pop("cdp_url", None)
    st.pop("state", None)
    if pw is not None:
        with contextlib.suppress(Exception):
            await pw.stop()
