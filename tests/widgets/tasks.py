"""One realistic task per widget library, as an agent does it through MCP, by refs only.

Each task finds elements by name (and role) in the latest snapshot, acts on their refs
and checks the outcome with the server's evaluate tool, reading what the library itself
holds (the editor's content, the grid's first row, the list's order). A task raises
AssertionError (or ``ToolFailed``) when it cannot be done. Written once for every server
(agent.py says how each spells the steps): tests/widgets/test_widgets.py runs them
through browserdeck, bench/bench_widgets.py beside Playwright MCP and
chrome-devtools-mcp.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from tests.widgets.agent import Agent

READY = "() => String(!!(window.editorReady || window.tinymce?.activeEditor?.initialized))"


async def _open(agent: Agent, site: str, page: str, ready: str | None = None) -> None:
    await agent.navigate(f"{site}/{page}")
    if ready is not None:
        answer = await agent.until(ready, "true")
        assert "true" in answer, f"{page} did not finish loading: {answer}"


async def _expect(agent: Agent, function: str, expected: str, what: str) -> None:
    """The page's answer to ``function`` holds ``expected`` (once the page caught up).

    Each server prints the answer its own way (as is, JSON-quoted, in a code block): the
    functions here return plain words, with no quotes to be escaped."""
    answer = await agent.until(function, expected)
    assert expected in answer, f"{what}: expected {expected!r} in {answer!r}"


async def rich_text(agent: Agent, site: str) -> None:
    """TinyMCE (its editable body is an iframe's document): write the post, publish it."""
    await _open(agent, site, "tinymce.html", READY)
    await agent.type(
        await agent.find("Rich Text Area", "generic", "textbox"), "Hello from the agent"
    )
    await agent.click(await agent.find("Publish", "button"))
    await _expect(
        agent,
        "() => document.getElementById('status').textContent",
        "published: Hello from the agent",
        "the published text",
    )


async def data_grid(agent: Agent, site: str) -> None:
    """AG Grid (2,000 rows, virtualised): sort by price, cheapest first."""
    await _open(agent, site, "aggrid.html")
    await agent.click(await agent.find("Price", "columnheader"))
    first = (
        "() => { const row = window.grid.getDisplayedRowAtIndex(0).data; "
        "return 'first id=' + row.id + ' price=' + row.price; }"
    )
    await _expect(agent, first, "first id=997 price=0.99", "the first row after sorting by price")


async def sortable_list(agent: Agent, site: str) -> None:
    """SortableJS (items with a move cursor, no role of their own): move the last step first."""
    await _open(agent, site, "sortable.html")
    last = await agent.find("Announce it", "listitem")
    first = await agent.find("Build the package", "listitem")
    await agent.drag(last, first)
    await _expect(
        agent,
        "() => window.sortable.toArray().join(',')",
        "announce,build",
        "the order after the drag",
    )


async def code_editor(agent: Agent, site: str) -> None:
    """CodeMirror 6 (a contenteditable textbox): write a function."""
    await _open(agent, site, "codemirror.html", READY)
    await agent.type(await agent.find("Script", "textbox"), "const add = (a, b) => a + b;")
    await _expect(
        agent,
        "() => window.view.state.doc.toString()",
        "const add = (a, b) => a + b;",
        "the editor's content",
    )


async def monaco_editor(agent: Agent, site: str) -> None:
    """Monaco (its input has no box: an EditContext element): write a query."""
    await _open(agent, site, "monaco.html", READY)
    await agent.type(await agent.find("Editor content", "textbox"), "SELECT name FROM users;")
    await _expect(
        agent, "() => window.editor.getValue()", "SELECT name FROM users;", "the editor's content"
    )


async def date_picker(agent: Agent, site: str) -> None:
    """flatpickr: open the calendar, pick the 15th."""
    await _open(agent, site, "flatpickr.html")
    await agent.click(await agent.find("Visit date", "textbox"))
    await agent.click(await agent.find("March 15, 2026"))
    await _expect(
        agent, "() => document.getElementById('day').value", "2026-03-15", "the picked date"
    )


async def custom_select(agent: Agent, site: str) -> None:
    """Tom Select: open the combobox, choose an option."""
    await _open(agent, site, "tomselect.html")
    await agent.click(await agent.find("Fruit", "combobox"))
    await agent.click(await agent.find("Banana", "option"))
    await _expect(agent, "() => window.ts.getValue()", "banana", "the chosen fruit")


async def tree(agent: Agent, site: str) -> None:
    """jsTree: open a folder (double-click), select a file in it."""
    await _open(agent, site, "jstree.html")
    await agent.click(await agent.find("src", "treeitem"), double=True)
    await agent.click(await agent.find("util.py", "treeitem"))
    await _expect(
        agent,
        "() => document.getElementById('chosen').textContent",
        "selected: util.py",
        "the selected file",
    )


async def tabs(agent: Agent, site: str) -> None:
    """Bootstrap tabs: switch to a tab, turn on the switch it holds."""
    await _open(agent, site, "tabs.html")
    await agent.click(await agent.find("Security", "tab"))
    await agent.click(await agent.find("Enable two-factor authentication", "switch", "checkbox"))
    await _expect(
        agent,
        "() => String(document.getElementById('tfa').checked)",
        "true",
        "the two-factor switch",
    )


async def modal_dialog(agent: Agent, site: str) -> None:
    """Bootstrap modal: open it, fill it in, send it."""
    await _open(agent, site, "modal.html")
    await agent.click(await agent.find("Invite a member", "button"))
    await agent.type(await agent.find("Name", "textbox"), "Lin")
    await agent.click(await agent.find("Send invite", "button"))
    await _expect(
        agent,
        "() => document.getElementById('members').textContent",
        "Lin",
        "the members after the invite",
    )


async def api_explorer(agent: Agent, site: str) -> None:
    """Swagger UI: open an operation, try it out with a parameter, read the response."""
    await _open(agent, site, "swagger.html")
    await agent.click(await agent.find("GET /pets List pets", "button"))
    await agent.click(await agent.find("Try it out", "button"))
    await agent.type(await agent.find("kind", "textbox"), "cat")
    await agent.click(await agent.find("Execute", "button"))
    body = (
        "() => { const text = [...document.querySelectorAll('.live-responses-table "
        ".microlight')].map((e) => e.textContent).join(' '); return text.includes('Tom') && "
        "!text.includes('Rex') ? 'cats only: Tom' : 'response: ' + text.slice(0, 200); }"
    )
    await _expect(agent, body, "cats only: Tom", "the response to GET /pets?kind=cat")


async def virtual_list(agent: Agent, site: str) -> None:
    """TanStack Virtual (10,000 rows, the ones in view on the page): scroll the list by
    keys until a contact far down is drawn, pick it."""
    await _open(agent, site, "virtual.html")
    await agent.click(await agent.find("Contacts", "generic", "group", "region"))
    for _ in range(20):
        await agent.look()
        if agent.search("Contact 60") is not None:
            break
        await agent.press("PageDown")
    await agent.click(await agent.find("Contact 60"))
    await _expect(
        agent,
        "() => document.getElementById('picked').textContent",
        "picked: Contact 60",
        "the picked contact",
    )


async def editable_table(agent: Agent, site: str) -> None:
    """Tabulator (an editable grid): change one person's city."""
    await _open(agent, site, "tabulator.html")
    await agent.find("Bob 2", "gridcell")
    cells = [e for e in agent.elements if e.role in ("gridcell", "cell", "StaticText")]
    at = next(i for i, e in enumerate(cells) if e.name == "Bob 2")
    await agent.click(cells[at + 1].ref)  # the city, beside the name
    await agent.look()
    field = next(
        (e for e in agent.elements if e.role in ("textbox", "searchbox") and e.name == "Lima"),
        None,
    ) or next(e for e in agent.elements if e.role in ("textbox", "searchbox"))
    await agent.type(field.ref, "Rome", submit=True)
    await _expect(agent, "() => window.table.getRow(2).getData().city", "Rome", "Bob 2's city")


@dataclass(frozen=True)
class Task:
    name: str
    library: str
    kind: str
    run: Callable[[Agent, str], Awaitable[None]]


TASKS = (
    Task("rich_text", "tinymce", "rich text (iframe editor)", rich_text),
    Task("data_grid", "ag-grid-community", "data grid (virtualised)", data_grid),
    Task("sortable_list", "sortablejs", "drag to reorder", sortable_list),
    Task("code_editor", "codemirror", "code editor", code_editor),
    Task("monaco_editor", "monaco-editor", "code editor (box-less input)", monaco_editor),
    Task("date_picker", "flatpickr", "date picker", date_picker),
    Task("custom_select", "tom-select", "custom select", custom_select),
    Task("tree", "jstree", "tree", tree),
    Task("tabs", "bootstrap", "tabs", tabs),
    Task("modal_dialog", "bootstrap", "modal dialog", modal_dialog),
    Task("api_explorer", "swagger-ui-dist", "API explorer", api_explorer),
    Task("virtual_list", "@tanstack/virtual-core", "virtual list", virtual_list),
    Task("editable_table", "tabulator-tables", "data grid (editable)", editable_table),
)
