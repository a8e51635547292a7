"""Generated big pages for the big-page tests and bench/bench_bigpages.py (issues 11, 14).

Each function returns a whole HTML document. Names repeat the way real pages repeat them
(every row has an "Edit" and a "Delete" button), so folding and refs are tested on what
agents meet, not on pages where every line is unique.
"""

from __future__ import annotations

_HEAD = "<!doctype html><html><head><meta charset='utf-8'><title>{title}</title></head><body>"
_LOG = (
    "<p id='log'>nothing yet</p><script>function hit(what){"
    "document.getElementById('log').textContent='clicked '+what}</script>"
)


def elements(n: int) -> str:
    """About ``n`` elements: rows of a button and a link (the 10,000-element page)."""
    rows = "".join(
        f"<div class='row' id='r{i}'><button onclick='hit({i})'>Button {i}</button>"
        f"<a href='#r{i}'>Link {i}</a></div>"
        for i in range(n // 3)
    )
    return _HEAD.format(title="Big") + "<h1>Big page</h1>" + _LOG + rows + "</body></html>"


def table(rows: int, *, buttons: int = 2, title: str = "Orders") -> str:
    """A table of ``rows`` rows, each with ``buttons`` buttons ("Edit", "Delete", ...)."""
    labels = ["Edit", "Delete", "Copy", "Share"][:buttons]
    body = "".join(
        f"<tr><td>Order {i}</td><td>{(i * 37) % 1000}.00</td><td>"
        + "".join(f"<button onclick=\"hit('{b} {i}')\">{b}</button>" for b in labels)
        + "</td></tr>"
        for i in range(1, rows + 1)
    )
    return (
        _HEAD.format(title=title)
        + f"<header><nav><a href='/'>Home</a> <a href='/orders'>Orders</a></nav></header>"
        f"<main><h1>{title}</h1>"
        + _LOG
        + "<table id='t'><thead><tr><th>Order</th><th>Total</th><th>Actions</th></tr></thead>"
        f"<tbody>{body}</tbody></table><button onclick=\"hit('export')\">Export</button></main>"
        "<footer><a href='/help'>Help</a></footer></body></html>"
    )


def table_2000() -> str:
    """The 2,000-element table of issue 14: 400 rows of a row, 3 cells and a button."""
    return table(400, buttons=1, title="Big table")


def long_list(items: int) -> str:
    body = "".join(
        f"<li><a href='/item/{i}'>Item {i}</a> posted by user{i % 17}</li>"
        for i in range(1, items + 1)
    )
    return (
        _HEAD.format(title="List")
        + "<main><h1>Latest items</h1>"
        + _LOG
        + f"<ul id='items'>{body}</ul><h2>Archive</h2><a href='/archive'>Older items</a>"
        "</main></body></html>"
    )


def product_grid(cards: int) -> str:
    body = "".join(
        f"<div class='card'><h3>Product {i}</h3><span>${10 + i}.99</span>"
        f"<button onclick=\"hit('cart {i}')\">Add to cart</button>"
        f"<a href='/p/{i}'>Details</a></div>"
        for i in range(1, cards + 1)
    )
    return (
        _HEAD.format(title="Products")
        + "<header><input type='search' aria-label='Search products'>"
        "<button>Search</button></header><main><h1>All products</h1>"
        + _LOG
        + f"<section id='grid'>{body}</section><nav aria-label='Pages'>"
        "<a href='?page=2'>Next page</a></nav></main></body></html>"
    )


ARTICLE_WORDS = ["the", "browser", "keeps", "a", "tree", "of", "elements", "and", "an", "agent", "reads", "it", "before", "it", "acts", "on", "a", "page", "while", "the", "reader", "follows", "one", "paragraph", "after", "another", "without", "any", "buttons", "at", "all"]


def article(paragraphs: int = 40, *, links_every: int = 4) -> str:
    """A text-heavy article: headings, long paragraphs, a link in some of them."""
    parts = []
    for p in range(1, paragraphs + 1):
        words = [ARTICLE_WORDS[(p * 7 + k) % len(ARTICLE_WORDS)] for k in range(90)]
        text = " ".join(words).capitalize() + "."
        if p % links_every == 0:
            text += f" See <a href='/ref/{p}'>reference {p}</a> for more."
        if p % 10 == 1:
            parts.append(f"<h2>Section {p // 10 + 1}</h2>")
        parts.append(f"<p>{text}</p>")
    return (
        _HEAD.format(title="Article")
        + "<article><h1>A long article</h1>"
        + "".join(parts)
        + "</article></body></html>"
    )
