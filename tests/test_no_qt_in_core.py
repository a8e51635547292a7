"""Contract: only ``browserdeck.gui`` imports Qt (napari-style import contract).

Two checks: an AST scan of every source file outside ``gui/`` (catches imports
hidden in functions, too), and importing every core module in a fresh
interpreter, then asserting no Qt binding got loaded transitively.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import browserdeck

PACKAGE = Path(browserdeck.__file__).parent
QT_MODULES = ("PySide6", "PySide2", "PyQt5", "PyQt6", "shiboken6", "shiboken2", "qasync")


def _core_files() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "gui" not in p.relative_to(PACKAGE).parts)


def _module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def test_no_core_source_imports_qt() -> None:
    offenders = []
    for path in _core_files():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            for name in names:
                if name.split(".")[0] in QT_MODULES:
                    offenders.append(f"{path.relative_to(PACKAGE)}:{node.lineno} imports {name}")
        # The GUI may be reached from the core only lazily (inside a function), as
        # cli_gui does, so importing the CLI never loads Qt.
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                "browserdeck.gui"
            ):
                offenders.append(
                    f"{path.relative_to(PACKAGE)}:{node.lineno} imports "
                    f"{node.module} at module level"
                )
            if isinstance(node, ast.Import) and any(
                a.name.startswith("browserdeck.gui") for a in node.names
            ):
                offenders.append(
                    f"{path.relative_to(PACKAGE)}:{node.lineno} imports the GUI at module level"
                )
    assert not offenders, "Qt outside browserdeck.gui:\n" + "\n".join(offenders)


def test_importing_every_core_module_loads_no_qt() -> None:
    modules = [_module_name(p) for p in _core_files() if p.name != "__main__.py"]
    script = (
        "import importlib, json, sys\n"
        f"modules = {modules!r}\n"
        "failed = {}\n"
        "for name in modules:\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "    except Exception as exc:  # a broken module is reported, the scan goes on\n"
        "        failed[name] = repr(exc)\n"
        f"qt = sorted(m for m in sys.modules if m.split('.')[0] in {QT_MODULES!r})\n"
        "print(json.dumps({'qt': qt, 'failed': failed, 'count': len(modules)}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["count"] > 10
    assert result["qt"] == [], (
        f"importing the core loaded Qt modules {result['qt']}; only browserdeck.gui may"
    )
    # The CLI in particular must stay Qt-free even though it offers the `tray` command.
    assert "browserdeck.cli.main" not in result["failed"], result["failed"]
    assert "browserdeck.cli.gui" not in result["failed"], result["failed"]
