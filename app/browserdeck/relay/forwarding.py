"""Forwarding a client's command to its tab, attaching the tab's debugger on the way.

The debugger attaches to a tab on the first command a client sends it (lazy); commands
that arrive while it attaches wait in the tab's queue and go in order. Replies come back
through the extension link to the client that asked, through the command's hooks.
"""

from __future__ import annotations

import asyncio
from typing import Any

from browserdeck.relay.model import Command, Tab
from browserdeck.relay.protocol import (
    NO_EXTENSION_MESSAGE,
    SERVER_ERROR,
    CdpError,
    error_message,
    result_message,
)
from browserdeck.relay.targets import Targets


class Forwarder:
    """Sends clients' commands (and the relay's own) to tabs through the extension."""

    def __init__(
        self, targets: Targets, *, command_timeout: float, long_command_timeout: float
    ) -> None:
        self._targets = targets
        self.command_timeout = command_timeout
        self.long_command_timeout = long_command_timeout

    async def forward(self, cmd: Command) -> None:
        tab = cmd.tab
        if tab.attached:
            await self._send_command(cmd)
        elif tab.attaching is not None:
            tab.attaching.append(cmd)
        elif tab.removed:
            await self.fail_command(
                cmd, "the tab is no longer shared with the browserdeck extension"
            )
        else:
            tab.attaching = [cmd]
            tab.attach_done = asyncio.Event()
            self._targets.tasks.spawn(self.attach(tab), name=f"relay-attach-{tab.tab_id}")

    async def attach(self, tab: Tab, *, keep: bool = False) -> None:
        error: str | None = None
        try:
            await self._targets.after_detach(tab)
            link = self._targets.require_link()
            result = await link.call(
                "attach", {"tabId": tab.tab_id}, reply_timeout=self._targets.op_timeout
            )
            info = result.get("targetInfo") if isinstance(result, dict) else None
            if isinstance(info, dict):
                self._targets.learn_context_id(info)
                if info.get("url"):
                    tab.url = str(info["url"])
                if info.get("title"):
                    tab.title = str(info["title"])
        except CdpError as exc:
            error = f"could not attach the debugger to tab {tab.target_id[:8]} ({tab.url}): {exc.message}"
        queued = tab.attaching or []
        done, tab.attach_done = tab.attach_done, None
        if error is not None or tab.removed:
            tab.attaching = None
            if done is not None:
                done.set()
            for cmd in queued:
                await self.fail_command(cmd, error or "the tab is no longer shared")
            return
        # Drain in order; commands that arrive meanwhile join the end of the queue.
        while queued:
            await self._send_command(queued.pop(0))
        tab.attaching = None
        tab.attached = True
        if done is not None:
            done.set()
        if not keep:
            self._targets.release_debugger(tab)

    async def _send_command(self, cmd: Command) -> None:
        link = self._targets.link
        if link is None:
            await self.fail_command(cmd, NO_EXTENSION_MESSAGE)
            return
        client, msg_id, reply_sid, hook, after, recorder = (
            cmd.client, cmd.msg_id, cmd.reply_sid, cmd.hook, cmd.after, cmd.recorder
        )  # fmt: skip
        tab = cmd.tab

        def stop_recording() -> None:
            if recorder is not None and recorder in tab.lifecycle_recorders:
                tab.lifecycle_recorders.remove(recorder)

        async def on_reply(body: str | None, error: dict[str, Any] | None) -> None:
            # Every end of the command comes here (reply, timeout, extension gone).
            stop_recording()
            if hook is not None:
                body, error = await hook(body, error)
            if error is not None:
                await client.send(
                    error_message(
                        msg_id,
                        str(error.get("message", "error")),
                        reply_sid,
                        int(error.get("code", SERVER_ERROR)),
                    )
                )
            else:
                await client.send(result_message(msg_id, body or "{}", reply_sid))
                if after is not None:
                    await after()

        if recorder is not None:
            tab.lifecycle_recorders.append(recorder)
        try:
            await link.forward(
                cmd.tab.tab_id,
                cmd.key or None,
                cmd.method,
                cmd.params_json,
                on_reply,
                reply_timeout=self.long_command_timeout if cmd.long else self.command_timeout,
            )
        except CdpError as exc:
            stop_recording()
            await self.fail_command(cmd, exc.message)

    async def fail_command(self, cmd: Command, message: str) -> None:
        await cmd.client.send(error_message(cmd.msg_id, message, cmd.reply_sid))

    async def tab_call(self, tab: Tab, method: str, params: dict[str, Any] | None = None) -> Any:
        """A relay-internal CDP command on a tab's own session (attaching if needed)."""
        link = self._targets.require_link()
        if not tab.attached:
            if tab.attach_done is not None:
                # Piggy-back on the attach under way.
                await tab.attach_done.wait()
            if not tab.attached:
                await self._targets.after_detach(tab)
                await link.call(
                    "attach", {"tabId": tab.tab_id}, reply_timeout=self._targets.op_timeout
                )
                tab.attached = True
        try:
            return await link.cdp(
                tab.tab_id, method, params, reply_timeout=self._targets.op_timeout
            )
        finally:
            self._targets.release_debugger(tab)

    async def learn_context(self, tab: Tab | None = None, *, keep: bool = False) -> None:
        """Before the first announcement, attach to one shared tab to learn Chrome's real
        browserContextId (the extension remembers it afterwards), so tabs and their
        iframes carry the same one. The debugger stays on: a session follows at once."""
        if self._targets.context_known or self._targets.link is None or self._targets.link.closed:
            return
        tab = tab or next(iter(self._targets.shared_tabs()), None)
        if tab is None or tab.attached or tab.attaching is not None:
            return
        tab.attaching = []
        tab.attach_done = asyncio.Event()
        await self.attach(tab, keep=True)
        if not keep:
            self._targets.release_debugger(tab)
