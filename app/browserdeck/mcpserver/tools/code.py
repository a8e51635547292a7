"""browser_run_code and browser_reset (group code: only with the mcpRunCode setting)."""

from __future__ import annotations

from browserdeck.mcpserver.context import Call, Reply
from browserdeck.mcpserver.schema import n, obj, s
from browserdeck.mcpserver.tools.registry import tool

# --- code (opt-in: mcpRunCode) -------------------------------------------------------------


@tool(
    "browser_run_code",
    "Run Python with Playwright objects in scope: page (this tab), context, browser, state "
    "(a dict kept between calls). Use await; return a value. Runs in its own process; "
    "stopped after timeout seconds (default 30).",
    obj({"code": s(), "timeout": n("seconds, default 30, at most 300")}, ["code"]),
    group="code",
    narrow="Return less",
)
async def run_code(call: Call) -> Reply:
    from browserdeck.mcpserver import runcode

    return Reply(await runcode.run(call, call.args["code"], call.args.get("timeout")))


@tool("browser_reset", "Drop browser_run_code's connection and state.", obj(), group="code")
async def reset(call: Call) -> Reply:
    from browserdeck.mcpserver import runcode

    await runcode.reset(call.session)
    return Reply("reset: the next browser_run_code starts fresh")
