"""An agent's way of driving a browser MCP server: find by role and name, act on the ref.

The widget tasks (tasks.py) are written once against ``Agent``; each ``Dialect`` says how
one server spells the same steps: browserdeck and Playwright MCP (``browser_*`` tools,
YAML snapshots with ``[ref=eN]``) and chrome-devtools-mcp (``take_snapshot`` lines
``uid=1_5 button "Save"``, tools that take a ``pageId``). Nothing here reads the page
behind the server's back: an element is found only in the latest snapshot the server
returned, and the page's state is read with the server's own evaluate tool, as an agent
checks its work.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass, field
from typing import Any

from mcp import Client

# One element of a YAML snapshot line (several on an inline row or list item): role,
# name, attrs with a ref, then the inline text of an element with no name.
_YAML_ITEM = re.compile(
    r'(?:^|(?<=[\s|:]))(?P<role>[A-Za-z][\w-]*)(?: "(?P<name>(?:[^"\\]|\\.)*)")?'
    r"(?P<attrs>(?: \[[^\]]*\])*) ?\[ref=(?P<ref>[^\]]+)\](?P<more>(?: \[[^\]]*\])*)"
    r"(?::\s(?P<text>[^|]*))?"
)
_CDT_LINE = re.compile(
    r'^\s*uid=(?P<ref>\S+)(?: (?P<role>[A-Za-z][\w-]*))?(?: "(?P<name>(?:[^"\\]|\\.)*)")?'
)


@dataclass
class Element:
    role: str
    name: str
    ref: str
    line: str


def _unescape(raw: str | None) -> str:
    if not raw:
        return ""
    if "\\" in raw:
        try:
            return str(json.loads(f'"{raw}"'))
        except ValueError:
            return raw
    return raw


def _text(result: Any) -> str:
    return "\n".join(c.text for c in result.content if c.type == "text")


class ToolFailed(AssertionError):
    """A tool call the server refused (the task fails: an agent would be stuck)."""


@dataclass
class Agent:
    """One agent session on one MCP server."""

    client: Client
    dialect: Dialect
    snapshot: str = ""
    elements: list[Element] = field(default_factory=list)
    calls: int = 0
    snapshot_chars: list[int] = field(default_factory=list)

    async def tool(self, name: str, args: dict[str, Any]) -> str:
        self.calls += 1
        result = await self.client.call_tool(name, args)
        text = _text(result)
        if result.is_error:
            raise ToolFailed(f"{name} {json.dumps(args)[:200]} failed: {text[:600]}")
        return text

    async def navigate(self, url: str) -> None:
        await self.dialect.navigate(self, url)

    async def look(self) -> str:
        """A new snapshot; its elements are what ``find`` searches."""
        text = await self.dialect.snapshot(self)
        self.snapshot = text
        self.snapshot_chars.append(len(text))
        self.elements = self.dialect.parse(text)
        return text

    def search(self, name: str, roles: tuple[str, ...] = ()) -> Element | None:
        """The first element of the latest snapshot with this exact name (or inline text),
        preferring the given roles; any role when none of them has it."""
        named = [e for e in self.elements if e.name == name]
        for role in roles:
            for element in named:
                if element.role == role:
                    return element
        return named[0] if named else None

    async def find(self, name: str, *roles: str, tries: int = 25) -> str:
        """The ref of the element named ``name`` in a new snapshot, looking again while a
        page is still drawing it (an agent's loop: up to ``tries`` snapshots)."""
        for attempt in range(tries):
            await self.look()
            found = self.search(name, roles)
            if found is not None:
                return found.ref
            if attempt < tries - 1:
                await asyncio.sleep(0.2)
        raise AssertionError(
            f"no element named {name!r} ({'/'.join(roles) or 'any role'}) with a ref in the "
            f"snapshot:\n{self.snapshot[:3000]}"
        )

    async def click(self, ref: str, *, double: bool = False) -> None:
        await self.dialect.click(self, ref, double)

    async def type(
        self, ref: str, text: str, *, slowly: bool = False, submit: bool = False
    ) -> None:
        await self.dialect.type(self, ref, text, slowly, submit)

    async def drag(self, start: str, end: str) -> None:
        await self.dialect.drag(self, start, end)

    async def press(self, key: str) -> None:
        await self.dialect.press(self, key)

    async def evaluate(self, function: str) -> str:
        """The page's answer to ``function`` as the server prints it."""
        return await self.dialect.evaluate(self, function)

    async def until(self, function: str, expected: str, tries: int = 25) -> str:
        """Evaluate ``function`` until its answer holds ``expected`` (a page that updates a
        moment after an action); the last answer either way."""
        answer = ""
        for _ in range(tries):
            answer = await self.evaluate(function)
            if expected in answer:
                break
            await asyncio.sleep(0.2)
        return answer


class Dialect:
    name = ""

    async def navigate(self, agent: Agent, url: str) -> None:
        await agent.tool("browser_navigate", {"url": url})

    async def snapshot(self, agent: Agent) -> str:
        return await agent.tool("browser_snapshot", {})

    def parse(self, text: str) -> list[Element]:
        out: list[Element] = []
        for line in text.splitlines():
            for m in _YAML_ITEM.finditer(line):
                name = _unescape(m.group("name"))
                if not name and m.group("text"):
                    name = m.group("text").strip().strip('"')
                out.append(Element(m.group("role"), name, m.group("ref"), line))
        return out

    async def click(self, agent: Agent, ref: str, double: bool) -> None:
        args: dict[str, Any] = {self.ref_arg: ref}
        if double:
            args["doubleClick"] = True
        await agent.tool("browser_click", args)

    async def type(self, agent: Agent, ref: str, text: str, slowly: bool, submit: bool) -> None:
        args: dict[str, Any] = {self.ref_arg: ref, "text": text}
        if slowly:
            args["slowly"] = True
        if submit:
            args["submit"] = True
        await agent.tool("browser_type", args)

    async def drag(self, agent: Agent, start: str, end: str) -> None:
        await agent.tool("browser_drag", {self.start_arg: start, self.end_arg: end})

    async def press(self, agent: Agent, key: str) -> None:
        await agent.tool("browser_press_key", {"key": key})

    async def evaluate(self, agent: Agent, function: str) -> str:
        return await agent.tool("browser_evaluate", {"function": function})

    ref_arg = "ref"
    start_arg, end_arg = "startRef", "endRef"


class Browserdeck(Dialect):
    name = "browserdeck"


class PlaywrightMcp(Dialect):
    name = "Playwright MCP"
    ref_arg = "target"
    start_arg, end_arg = "startTarget", "endTarget"

    async def snapshot(self, agent: Agent) -> str:
        text = await agent.tool("browser_snapshot", {})
        m = re.search(r"```yaml\n(.*?)```", text, re.S)
        return m.group(1) if m else text


class ChromeDevtoolsMcp(Dialect):
    name = "chrome-devtools-mcp"
    page_id: int | None = None

    async def _page(self, agent: Agent) -> int:
        if self.page_id is None:
            listed = await agent.tool("list_pages", {})
            m = re.search(r"^(\d+):.*\[selected\]", listed, re.M) or re.search(
                r"^(\d+):", listed, re.M
            )
            self.page_id = int(m.group(1)) if m else 1
        return self.page_id

    async def navigate(self, agent: Agent, url: str) -> None:
        await agent.tool(
            "navigate_page", {"pageId": await self._page(agent), "type": "url", "url": url}
        )

    async def snapshot(self, agent: Agent) -> str:
        return await agent.tool("take_snapshot", {"pageId": await self._page(agent)})

    def parse(self, text: str) -> list[Element]:
        out = []
        for line in text.splitlines():
            m = _CDT_LINE.match(line)
            if m is not None:
                role = m.group("role") or "StaticText"
                out.append(Element(role, _unescape(m.group("name")), m.group("ref"), line))
        return out

    async def click(self, agent: Agent, ref: str, double: bool) -> None:
        args: dict[str, Any] = {"pageId": await self._page(agent), "uid": ref}
        if double:
            args["dblClick"] = True
        await agent.tool("click", args)

    async def type(self, agent: Agent, ref: str, text: str, slowly: bool, submit: bool) -> None:
        page = await self._page(agent)
        if slowly:
            await agent.tool("click", {"pageId": page, "uid": ref})
            args: dict[str, Any] = {"pageId": page, "text": text}
            if submit:
                args["submitKey"] = "Enter"
            await agent.tool("type_text", args)
            return
        await agent.tool("fill", {"pageId": page, "uid": ref, "value": text})
        if submit:
            await agent.tool("press_key", {"pageId": page, "key": "Enter"})

    async def drag(self, agent: Agent, start: str, end: str) -> None:
        await agent.tool(
            "drag", {"pageId": await self._page(agent), "from_uid": start, "to_uid": end}
        )

    async def press(self, agent: Agent, key: str) -> None:
        await agent.tool("press_key", {"pageId": await self._page(agent), "key": key})

    async def evaluate(self, agent: Agent, function: str) -> str:
        return await agent.tool(
            "evaluate_script", {"pageId": await self._page(agent), "function": function}
        )
