"""Contract: the top level of the package stays small enough to find one's way in.

A newcomer looks for their room among the top-level modules and the packages
(docs/architecture.md, "Where things are"); past about 25 modules the top level reads
as a heap again. A new module goes into the package of its area (cli/, util/, policy/,
secrets/, engine/, ...), or, when it starts an area of its own, a new package.
"""

from __future__ import annotations

from pathlib import Path

import browserdeck

PACKAGE = Path(browserdeck.__file__).parent
MAX_TOP_LEVEL_MODULES = 25


def test_at_most_25_modules_at_the_top_level() -> None:
    # __init__.py is the package itself (its version), not a module at its top level.
    modules = sorted(p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py")
    assert len(modules) <= MAX_TOP_LEVEL_MODULES, (
        f"{len(modules)} modules at the top level of browserdeck/ (at most "
        f"{MAX_TOP_LEVEL_MODULES}): move one into the package of its area: {', '.join(modules)}"
    )
