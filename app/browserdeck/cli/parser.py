"""argparse's parser as the CLI builds it: for help, errors and whatever cli.fast leaves.

Apart from cli/main.py so that a call read by ``cli.fast`` imports no argparse.
"""

from __future__ import annotations

import argparse
import os
import sys

from browserdeck.cli.fast import SUPPRESS

# Not `from typing import`: typing costs a CLI call about a fifth of its start-up.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class HelpFormatter(argparse.HelpFormatter):
    """argparse's, as wide as argparse makes it, without importing shutil.

    argparse makes a formatter for every argument it adds (to check its metavar), and
    the first one imports shutil for the terminal's width: with bz2, lzma and fnmatch
    about 3 ms of a CLI call that prints no help at all.
    """

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None, **kwargs: Any) -> None:
        if width is None:
            width = terminal_columns() - 2  # as argparse does
        super().__init__(prog, indent_increment, max_help_position, width, **kwargs)


def terminal_columns() -> int:
    """``shutil.get_terminal_size().columns``: $COLUMNS, else stdout's terminal, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class Parser(argparse.ArgumentParser):
    """An ArgumentParser with ``HelpFormatter``; subparsers are of the same class."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def add_argument(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("help") == SUPPRESS:
            kwargs["help"] = argparse.SUPPRESS  # argparse checks identity, not equality
        return super().add_argument(*args, **kwargs)
