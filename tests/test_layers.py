"""Contract: the import layers of browserdeck (issue 13, in the spirit of test_no_qt_in_core).

    core -> engine -> service / front door -> api, mcp -> gui -> composition root -> cli

A module may import its own layer and the layers below it, never one above, and no
two modules import each other round a loop. The source is parsed, not imported, so
imports hidden inside functions count too: they are how the old
``service.py <-> api/ <-> mcpserver/`` loop stayed out of sight. Imports under
``if TYPE_CHECKING:`` count for the layers (a type named upward is still an upward
dependency) but not for cycles (they never run).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import browserdeck

PACKAGE = Path(browserdeck.__file__).parent

# Layer of each unit: a top-level module or a subpackage of browserdeck. Every unit is
# listed, and only units that exist (test_every_unit_is_placed_and_every_place_exists);
# a new one is placed here on purpose.
LAYERS: dict[str, int] = {
    # 0: the core, plain Python: settings, errors, processes, relays, and the packages
    # util/ (paths, files, JSON, tasks), policy/ (endpoints, URLs, origins, files,
    # elements) and secrets/ (the vault, one-time codes, tokens, the redactions).
    **dict.fromkeys(
        (
            "browserdeck",  # the package's face: version only
            "artifacts",
            "authstates",  # saved auth states on disk
            "autostart",
            "client",  # the control API's client: the CLI's, the tray's, MCP's config snippet
            "config",
            "desktop",
            "driverspecs",
            "errors",
            "events",
            "pidwatch",
            "policy",
            "recorded",
            "results",
            "results_network",
            "secrets",
            "session",
            "states",
            "tabs",
            "util",
            "chrome",
            "relay",
        ),
        0,
    ),
    # 1: the Playwright engine (with the driver `serve` spawns early), and the front
    # door's vocabulary (requests, calls, addons), whose admin requests share the
    # engine's field types.
    "engine": 1,
    "door": 1,
    # 2: the service (profiles, browsers, relays) and the typed front door on it.
    **dict.fromkeys(
        (
            "service", "profiles", "deck", "deck_recording", "deck_logins", "drivers",
            "reconfig", "sessions", "recording",
        ),
        2,
    ),
    # 3: the ways in: HTTP API and MCP.
    **dict.fromkeys(("api", "mcpserver"), 3),
    # 4: the tray app.
    "gui": 4,
    # 5: the composition root that wires service, API and MCP together.
    "master": 5,
    # 6: the entry points: the command line (`browserdeck serve` and `tray` start the root
    # or the tray; the other commands call a running service) and `python -m browserdeck`.
    # Nothing below imports them.
    **dict.fromkeys(("cli", "__main__"), 6),
}
NAMES = {
    0: "core", 1: "engine", 2: "service/front door", 3: "api/mcp", 4: "gui", 5: "root",
    6: "cli",
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES: dict[str, Path] = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(module: str) -> Iterator[tuple[str, int, bool]]:
    """(imported browserdeck module, line, only under TYPE_CHECKING) for every import."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]

    def targets(node: ast.Import | ast.ImportFrom) -> list[str]:
        if isinstance(node, ast.Import):
            return [alias.name for alias in node.names]
        base = node.module or ""
        if node.level:
            anchor = package[: len(package) - (node.level - 1)]
            base = ".".join(anchor + ([base] if base else []))
        # `from browserdeck import config` names a module; `from x import Name` names x.
        return [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]

    def visit(node: ast.AST, typing_only: bool) -> Iterator[tuple[str, int, bool]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                for stmt in child.body:
                    yield from visit_stmt(stmt, True)
                for stmt in child.orelse:
                    yield from visit_stmt(stmt, typing_only)
                continue
            yield from visit_stmt(child, typing_only)

    def visit_stmt(node: ast.AST, typing_only: bool) -> Iterator[tuple[str, int, bool]]:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for target in targets(node):
                while target and target not in MODULES:
                    target = target.rpartition(".")[0]
                if target and target != module:
                    yield target, node.lineno, typing_only
        yield from visit(node, typing_only)

    yield from visit(tree, False)


def test_no_module_imports_a_layer_above_its_own() -> None:
    upward = []
    for module in MODULES:
        mine = LAYERS.get(_unit(module), 0)
        for target, line, _ in _imports(module):
            theirs = LAYERS.get(_unit(target), 0)
            if theirs > mine:
                upward.append(
                    f"{MODULES[module].relative_to(PACKAGE)}:{line} ({NAMES[mine]}) imports "
                    f"{target} ({NAMES[theirs]})"
                )
    assert not upward, (
        "imports that run up the layers (a module not in LAYERS counts as core):\n"
        + "\n".join(upward)
    )


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def strong(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                strong(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            strong(node)
    return found


def test_no_import_cycle() -> None:
    graph = {
        module: {target for target, _, typing_only in _imports(module) if not typing_only}
        for module in MODULES
    }
    cycles = _cycles(graph)
    assert not cycles, "modules that import each other round a loop:\n" + "\n".join(
        " <-> ".join(c) for c in cycles
    )


def test_every_unit_is_placed_and_every_place_exists() -> None:
    units = {_unit(module) for module in MODULES}
    assert not units - set(LAYERS), f"units with no layer: {sorted(units - set(LAYERS))}"
    assert not set(LAYERS) - units, f"layers of units that do not exist: {sorted(set(LAYERS) - units)}"


def test_the_contract_sees_imports_inside_functions() -> None:
    # The checks above are only as good as the parser: a lazy import must be seen.
    found = {target for target, _, _ in _imports("browserdeck.cli.gui")}
    assert "browserdeck.gui.launch" in found


def test_drivers_and_profiles_reach_the_service_only_through_their_host() -> None:
    """A driver is given a ``drivers.host.ProfileHost``, a profile a ``ServiceHost``:
    neither names the class above it, not even for types."""
    above = {
        "browserdeck.profiles": {"browserdeck.service"},
        **{
            m: {"browserdeck.service", "browserdeck.profiles"}
            for m in MODULES
            if m.startswith("browserdeck.drivers")
        },
    }
    named = [
        f"{module}:{line} imports {target}"
        for module, banned in above.items()
        for target, line, _ in _imports(module)
        if target in banned
    ]
    assert not named, "\n".join(named)
