"""The incremental snapshot paths give what a fresh build gives, on generated texts.

A seeded differential test (no browser): texts shaped like Playwright's ai snapshots
(rows, iframes, links with ``/url``, values, quoted names) are edited a few lines at a
time as an action would (a value, the focus, a name, a ref, a role, an indent, a line
added, gone or blanked, a YAML-quoted key), with a new document now and then (every ref
renamed). Each step's engine output (the ref table's rows, the renames, the numbering,
the render in every format) is compared with a build from nothing, and MCP's tree,
compact form and folds with a whole parse (docs/performance.md, "A text that changed
in a few lines"). Deterministic: the same 200 seeds each run, a few seconds.
"""

from __future__ import annotations

import random
import re
from typing import Any

import pytest

from browserdeck.engine import reftable
from browserdeck.engine import snapshot as esnap
from browserdeck.engine.options import SnapshotOptions
from browserdeck.mcpserver import snapshot as ms
from browserdeck.mcpserver import snapshot_lines as sl
from browserdeck.mcpserver import snapshot_tree as stree
from tests.engine.test_snapshot import table_state

ROLES = ["generic", "button", "link", "textbox", "row", "cell", "listitem", "paragraph",
         "text", "heading", "checkbox", "img", "navigation", "iframe", "option", "none"]  # fmt: skip
NAMES = ['"Save"', '"Edit"', '"Order 1"', '"a \\"q\\" b"', '""', '"x: y"', "\"it's\""]
OPTIONS = [
    SnapshotOptions(),
    SnapshotOptions(format="role"),
    SnapshotOptions(compact=True),
    SnapshotOptions(interactive=True),
    SnapshotOptions(depth=3),
    SnapshotOptions(frame="f1e3"),
]
SAME_INDENT = ["value", "focus", "name", "ref", "role", "pointer", "junk", "dupref"]
ANY = [*SAME_INDENT, "indent", "insert", "delete", "dup", "blank", "quoted", "swap"]


class Texts:
    """Generated snapshot lines; refs numbered on from one counter, as Playwright's."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.n = 0

    def ref(self, prefix: str) -> str:
        self.n += 1
        return f"{prefix}e{self.n}"

    def element(self, indent: int, prefix: str, depth: int, out: list[str]) -> None:
        r = self.rng
        pad = " " * indent
        role = r.choice(ROLES)
        name = " " + r.choice(NAMES) if r.random() < 0.6 else ""
        attrs = " [active]" if r.random() < 0.1 else ""
        if role != "text" and r.random() < 0.85:
            attrs += f" [ref={self.ref(prefix)}]"
        if r.random() < 0.2:
            attrs += " [cursor=pointer]"
        if role == "iframe" and "[ref=" in attrs:
            out.append(f"{pad}- iframe{attrs}:")
            inner = f"f{r.randint(1, 3)}"
            for _ in range(r.randint(1, 3)):
                self.element(indent + 2, inner, depth + 1, out)
        elif role == "link" and r.random() < 0.5:
            out += [f"{pad}- link{name}{attrs}:", f"{pad}  - /url: /p{r.randint(0, 9)}"]
        elif role == "row":
            out.append(f"{pad}- row{name}{attrs}:")
            for _ in range(r.randint(1, 3)):
                out.append(f'{pad}  - cell "{r.randint(0, 99)}" [ref={self.ref(prefix)}]')
            if r.random() < 0.4:
                out.append(f"{pad}  - cell [ref={self.ref(prefix)}]:")
                out.append(f'{pad}    - button "Edit" [ref={self.ref(prefix)}] [cursor=pointer]')
        elif depth < 4 and r.random() < 0.45:
            out.append(f"{pad}- {role}{name}{attrs}:")
            for _ in range(r.randint(1, 4)):
                self.element(indent + 2, prefix, depth + 1, out)
        elif r.random() < 0.3:
            out.append(f"{pad}- {role}{name}{attrs}: value {r.randint(0, 9)}")
        else:
            out.append(f"{pad}- {role}{name}{attrs}")

    def page(self, count: int) -> list[str]:
        out = ["- generic [ref=e999]:"]
        while len(out) < count:
            self.element(2, self.rng.choice(["", "", "f7"]), 0, out)
        return out


def edit(rng: random.Random, lines: list[str], texts: Texts, kinds: list[str]) -> list[str]:
    """One action's change to the page's lines."""
    lines = list(lines)
    kind = rng.choice(kinds)
    i = rng.randrange(len(lines))
    line = lines[i]
    pad = " " * (len(line) - len(line.lstrip(" ")))
    if kind == "value" and not line.endswith(":"):
        lines[i] = line.split(": ")[0] + f": v{rng.randint(0, 99)}"
    elif kind == "focus":
        lines[i] = (
            line.replace(" [active]", "")
            if "[active]" in line
            else line.replace(" [ref=", " [active] [ref=", 1)
        )
    elif kind == "name":
        lines[i] = line.replace('"', '"X', 1) if '"' in line else line + ' "N"'
    elif kind == "ref":
        step = rng.choice([1, -1, 500])
        lines[i] = re.sub(
            r"\[ref=(f\d+)?e(\d+)\]",
            lambda m: f"[ref={m.group(1) or ''}e{int(m.group(2)) + step}]",
            line,
            count=1,
        )
    elif kind == "dupref":
        refs = re.findall(r"\[ref=([^\]]+)\]", "\n".join(lines))
        if refs:
            lines[i] = re.sub(r"\[ref=[^\]]+\]", f"[ref={rng.choice(refs)}]", line, count=1)
    elif kind == "role":
        head, _, rest = line.lstrip(" ")[2:].partition(" ")
        tail = ":" if head.endswith(":") and not rest else ""
        lines[i] = f"{pad}- {rng.choice(ROLES)}{' ' + rest if rest else ''}{tail}"
    elif kind == "pointer":
        lines[i] = (
            line.replace(" [cursor=pointer]", "")
            if "pointer" in line
            else line + " [cursor=pointer]"
        )
    elif kind == "junk":
        lines[i] = pad + rng.choice(["some junk", "- [ref=e5", "- text: [ref=e2] x"])
    elif kind == "indent":
        lines[i] = " " * rng.choice([0, 2, 4, 6, 1]) + line.lstrip(" ")
    elif kind == "insert":
        more: list[str] = []
        texts.element(len(pad), "", 3, more)
        lines[i:i] = more[: rng.randint(1, len(more))]
    elif kind == "delete" and len(lines) > 1:
        del lines[i]
    elif kind == "dup":
        lines.insert(i, line)
    elif kind == "blank":
        lines[i] = rng.choice(["", "   ", pad])
    elif kind == "quoted":
        lines[i] = pad + "- 'link \"a: b\" [ref=e3]':"
    elif kind == "swap":
        j = rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    return lines


def engine(state: Any, text: str, opts: SnapshotOptions, lines: bool) -> tuple[Any, ...]:
    table, renamed = reftable.build_table(state, text, opts, "aria")
    build = state.memory.last_build
    kept = build.lines if lines and build is not None else None
    out = esnap.render(text, opts, table, renamed, kept)
    numbering = (dict(state.memory.bases), state.memory.issued_max)
    return dict(table.refs.items()), dict(renamed), out, numbering


def fresh_engine(state: Any, text: str, opts: SnapshotOptions) -> tuple[Any, ...]:
    """A build with the tab's numbering and nothing of its last build."""
    alone = table_state([state.epoch_key(True)])
    alone.memory.bases = dict(state.memory.bases)
    alone.memory.issued_max = state.memory.issued_max
    table, renamed = reftable.build_table(alone, text, opts, "aria")
    out = esnap.render(text, opts, table, dict(renamed))
    numbering = (dict(alone.memory.bases), alone.memory.issued_max)
    return dict(table.refs.items()), dict(renamed), out, numbering


def shape(nodes: list[sl.Node]) -> list[Any]:
    return [
        (n.raw, n.indent, n.role, n.name, n.attrs, n.value, n.ref, n.index, shape(n.children))
        for n in nodes
    ]


def run(seed: int, steps: int = 6) -> None:
    rng = random.Random(seed)
    texts = Texts(rng)
    lines = texts.page(rng.choice([16, 24, 40, 80]))
    opts = rng.choice(OPTIONS[:1] * 3 + OPTIONS[1:4])
    key = [(1, 1)]
    state = table_state(key)
    kinds = rng.choice([SAME_INDENT, ANY, ["value", "focus"], ["ref", "dupref", "name"]])
    for step in range(steps):
        if step:
            if rng.random() < 0.2:
                key[0] = (key[0][0] + 1, 1)  # a new document: every ref renamed
            for _ in range(rng.choice([1, 1, 2, 3, 5])):
                lines = edit(rng, lines, texts, kinds)
            if rng.random() < 0.15:
                opts = rng.choice(OPTIONS)
        text = "\n".join(lines)
        if rng.random() < 0.1:  # another tab's snapshot in between (module memories)
            other = texts.page(16)
            reftable.build_table(table_state([(9, 9)]), "\n".join(other), opts, "aria")
            ms.compact_form("\n".join(other))
        expected = fresh_engine(state, text, opts)
        got = engine(state, text, opts, lines=rng.random() < 0.7)
        assert got == expected, (seed, step, text)
        shown = got[2] if rng.random() < 0.5 else text
        roots, body = ms.compact_form(shown)
        whole = stree.parse_tree(shown).roots
        assert shape(roots) == shape(whole), (seed, step, shown)
        assert body == ms.compact(shown, whole), (seed, step, shown)
        for cap in (60, 300):
            assert ms.folded(shown, cap, roots=roots, size=len(body)) == ms.folded(
                shown, cap, roots=stree.parse_tree(shown).roots
            ), (seed, step, cap, shown)


@pytest.mark.parametrize("first", range(0, 200, 50))
def test_incremental_paths_give_what_a_fresh_build_gives(first: int) -> None:
    for seed in range(first, first + 50):
        run(seed)
