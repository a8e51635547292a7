"""``say``: a request's line ("clicked e12") from its template and its fields.

Plain Python with no imports: the CLI fills these templates at every call, and a CLI call
imports as little as it can (docs/performance.md).

In a template ``{name}`` is the field's value, ``{name|text}`` the value or ``text``
when it was not given, and ``{name?text}`` is ``text`` when the field is true.
"""

from __future__ import annotations


def say(template: str, values: dict[str, object]) -> str:
    """``template`` filled from ``values`` (a request's JSON fields)."""
    out: list[str] = []
    rest = template
    while "{" in rest:
        head, _, tail = rest.partition("{")
        inner, _, rest = tail.partition("}")
        out.append(head)
        if "?" in inner:
            name, _, text = inner.partition("?")
            out.append(text if values.get(name) else "")
        else:
            name, _, fallback = inner.partition("|")
            value = values.get(name)
            out.append(fallback if value is None or value == "" else str(value))
    out.append(rest)
    return "".join(out)
