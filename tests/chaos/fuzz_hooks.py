"""What the API schema's own string formats mean, for the fuzzer's generator.

The spec names two formats schemathesis does not know: ``css-selector`` (a selector, as
a browser parses it) and ``javascript-function`` (a function or expression run in the
page). Neither grammar is a regular expression, so the schema names them; here the
fuzzer learns to write members of each, the way schemathesis's documentation says to
teach it a custom format. Loaded through ``SCHEMATHESIS_HOOKS`` by tests/chaos/fuzz.py.
"""

from __future__ import annotations

import json

import schemathesis
from hypothesis import strategies as st

_IDENT = st.from_regex(r"[a-zA-Z_][a-zA-Z0-9_-]{0,10}", fullmatch=True)
_TAGS = st.sampled_from(["button", "a", "p", "div", "input", "body", "html", "span", "iframe", "*"])


def _css_text(text: str) -> str:
    # Any text as a CSS string: every character but letters and digits as an escape.
    return '"' + "".join(c if c.isascii() and c.isalnum() else f"\\{ord(c):x} " for c in text) + '"'


_SIMPLE = st.one_of(
    _TAGS,
    _IDENT.map("#{}".format),
    _IDENT.map(".{}".format),
    _IDENT.map("[{}]".format),
    st.builds(lambda a, v: f"[{a}={_css_text(v)}]", _IDENT, st.text(max_size=12)),
    st.builds(lambda t, n: f"{t}:nth-child({n})", _TAGS, st.integers(1, 5)),
    st.sampled_from([":root", "button:first-of-type", "body > *", "a[href]"]),
)
CSS = st.builds(
    lambda parts, joins: parts[0] + "".join(j + p for j, p in zip(joins, parts[1:], strict=False)),
    st.lists(_SIMPLE, min_size=1, max_size=3),
    st.lists(st.sampled_from([" ", " > ", ", ", " + "]), min_size=2, max_size=2),
)

_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)
SCRIPT = st.one_of(
    _VALUE.map(lambda v: f"() => ({json.dumps(v)})"),
    st.sampled_from(
        [
            "() => document.title",
            "() => location.href",
            "() => document.querySelectorAll('*').length",
            "async () => 1",
            "(el) => el ? el.tagName : null",
            "0",
            "1 + 1",
        ]
    ),
)

schemathesis.openapi.format("css-selector", CSS)
schemathesis.openapi.format("javascript-function", SCRIPT)
