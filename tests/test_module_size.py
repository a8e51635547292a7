"""Issue 13: no module over about 500 lines without a reason written at its top.

A long module either says in its docstring why it is one module ("Why one module") or
gets split along its seams; this keeps a new one from growing past that unnoticed.
"""

from __future__ import annotations

import ast
from pathlib import Path

import browserdeck

PACKAGE = Path(browserdeck.__file__).parent
LIMIT = 500
# Modules being split by their owner: remove each from here once it is short or says why it
# is one module. (relay/server.py was split; relay/core.py says why it is one module.)
PENDING: set[str] = set()


def _long_modules_without_a_reason() -> set[str]:
    found = set()
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if text.count("\n") <= LIMIT:
            continue
        doc = ast.get_docstring(ast.parse(text)) or ""
        if "Why one module" not in doc:
            found.add(path.relative_to(PACKAGE).as_posix())
    return found


def test_long_modules_say_why_they_are_one_module() -> None:
    missing = _long_modules_without_a_reason() - PENDING
    assert not missing, (
        f"modules over {LIMIT} lines without a 'Why one module' paragraph in their "
        f"docstring: {', '.join(sorted(missing))}; split them along their seams or say why not"
    )
