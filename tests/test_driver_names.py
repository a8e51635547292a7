"""Contract: outside drivers/, no code branches on a driver's name.

What differs between drivers is asked of the driver (``ctx.impl``: its methods and class
attributes) or of its spec (``driverspecs.DriverSpec``: ``via_extension``, ``launches``,
``services``, its words), so a new driver is one module and one registration, not a
hunt for ``driver == "extension"`` in the GUI and the CLI. The source is parsed: a
comparison of anything named ``driver`` with a driver's name, a ``match`` on one, or a
table keyed by driver names is refused.
"""

from __future__ import annotations

import ast
from pathlib import Path

import browserdeck
from browserdeck.driverspecs import SPECS

PACKAGE = Path(browserdeck.__file__).parent
NAMES = frozenset(SPECS)
# drivers/ is where a driver's own code lives; driverspecs.py registers the names;
# cli/args.py is generated from the settings (its choices list the names).
EXEMPT = ("drivers/", "driverspecs.py", "cli/args.py")


def _names_in(node: ast.expr) -> set[str]:
    """The driver names a literal holds: "remote", or ("managed", "extension")."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value} & NAMES
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return set().union(*(_names_in(e) for e in node.elts)) if node.elts else set()
    return set()


def _mentions_driver(node: ast.expr) -> bool:
    return "driver" in ast.unparse(node).lower()


def branches(source: str, filename: str = "<source>") -> list[tuple[int, str]]:
    """(line, code) of each place in ``source`` that branches on a driver's name."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source, filename=filename)):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            named = [o for o in operands if _names_in(o)]
            if named and any(_mentions_driver(o) for o in operands if o not in named):
                found.append((node.lineno, ast.unparse(node)))
        elif isinstance(node, ast.Match) and _mentions_driver(node.subject):
            for case in node.cases:
                for sub in ast.walk(case.pattern):
                    if isinstance(sub, ast.MatchValue) and _names_in(sub.value):
                        found.append((sub.lineno, f"case {ast.unparse(sub.value)}"))
        elif isinstance(node, ast.Dict):
            keys = [k for k in node.keys if k is not None and _names_in(k)]
            if len(keys) >= 2:  # a table with a row per driver
                found.append((node.lineno, ast.unparse(node)[:80]))
    return found


def test_no_module_outside_the_drivers_branches_on_a_driver_name() -> None:
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith(EXEMPT):
            continue
        for line, code in branches(path.read_text(encoding="utf-8"), rel):
            offenders.append(f"{rel}:{line}: {code}")
    assert not offenders, (
        "branch on a driver's name outside drivers/; ask the driver (ctx.impl) or its "
        "spec (driverspecs.DriverSpec) instead:\n" + "\n".join(offenders)
    )


def test_the_check_sees_each_kind_of_branch() -> None:
    assert branches('if status.driver == "extension": pass')
    assert branches('ok = p.driver in ("managed", "remote")')
    assert branches('match ctx.driver:\n    case "remote":\n        pass')
    assert branches('VERBS = {"managed": 1, "extension": 2}')
    # Not a driver's name in a branch: a state word, a relay's upgrade kind, a default.
    assert not branches('if state == "extension": pass')
    assert not branches('if upgrade.kind == "extension": pass')
    assert not branches('kind = given.pop("driver", None) or "managed"')
