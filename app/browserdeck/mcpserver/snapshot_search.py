"""Reading a snapshot an agent already has: a line diff of two, and search in one.

Split from mcpserver/snapshot.py (which parses and compacts): these work on the rendered
text, line by line, and need none of its tree.
"""

from __future__ import annotations

import difflib
import json
import re


def diff(previous: str, current: str) -> str | None:
    """A line diff of two snapshots (None when identical).

    Refs stay the same across snapshots while an element keeps its role and name,
    so the diff shows what really changed on the page.
    """
    if previous == current:
        return None
    lines = list(
        difflib.unified_diff(previous.splitlines(), current.splitlines(), n=1, lineterm="")
    )
    return "\n".join(line for line in lines[2:])  # without the ---/+++ header


def find(text: str, query: str, *, regex: bool = False, limit: int = 30) -> tuple[list[str], int]:
    """Lines matching ``query`` (substring, case-insensitive; or a regex), each with its parent.

    Returns the rendered matches and the total number of matching lines.
    """
    pattern = _user_regex(query) if regex else None
    needle = query.lower()

    def match(line: str) -> bool:
        return bool(pattern.search(line)) if pattern is not None else needle in line.lower()

    lines = text.splitlines()
    results: list[str] = []
    total = 0
    for i, line in enumerate(lines):
        if not match(line):
            continue
        total += 1
        if len(results) >= limit:
            continue
        indent = len(line) - len(line.lstrip(" "))
        parent = next(
            (
                lines[j].strip()
                for j in range(i - 1, -1, -1)
                if len(lines[j]) - len(lines[j].lstrip(" ")) < indent
            ),
            None,
        )
        results.append(line.strip() + (f"   (in: {parent})" if parent else ""))
    return results, total


def _user_regex(query: str) -> re.Pattern[str]:
    """``/pattern/flags`` or a bare pattern (case-sensitive), as Playwright MCP's find takes it."""
    flags = 0
    m = re.fullmatch(r"/(.*)/([imsx]*)", query, flags=re.S)
    if m:
        query = m.group(1)
        for f in m.group(2):
            flags |= {"i": re.I, "m": re.M, "s": re.S, "x": re.X}[f]
    return re.compile(query, flags)


def quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)
