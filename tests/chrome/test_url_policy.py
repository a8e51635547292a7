"""The URL policy (browserdeck.policy.urls) against the real Chromium: what it refuses, Chromium
refuses too.

A bare headless Chromium reads each host the way a navigation does (``new URL`` uses the
browser's own URL parser, which ``Page.navigate`` checks first: "Cannot navigate to
invalid URL"), and fetches each restricted port (``net::ERR_UNSAFE_PORT``). A URL the
policy lets through that Chromium refuses would reach the browser (and be answered by
the browser's refusal); one it refuses that Chromium loads would be a wrong 400.
"""

from __future__ import annotations

import random
import unicodedata
from typing import Any

from playwright.async_api import async_playwright

from browserdeck.errors import InvalidInput
from browserdeck.policy import urls
from tests.support.browsers import RawChromium

# Hosts that trip each rule of the host check, and their neighbours that pass.
HOSTS = [
    "example.com", "a_b", "a{b", "a`b", "a!b", "a~b", "\u00d1", "\U000c7b3e", "\ufffd",
    "\ue000", "\u200b", "xn--zz", "xn--", "a..b", ".", "..", "a" * 70, "\u2603", "\u00df",
    "\u0130", "\u0645\u062b\u0627\u0644", "a\u05de", "1.2.3.999", "0x100.0.0.1", "a.1", "1a",
    "a.0x", "0x", "09", "08.1", "-a-", "a.", "\u00ad", "\u0378", "\U000e0001", "xn--a",
    "xn--n3h", "a\u0301", "\u0301a", "\u200d", "a\u200db", "\u3002", "a\uff0eb", "c\uff0e1",
    "\u2028", "\x7f", "a^b", "a|b", "a<b", "\x01", "\x80", "\x9f", "\uff01", "\u00b4",
    "xn--zz.\u00fc", "\u00fc.xn--n3h", "\u05d0\u05d1.a", "\u05d0.1a", "\u0627\u0661\u06f1",
]
# Characters the policy refuses on purpose although Chromium takes them (it escapes a
# space to %20 and decodes %41 in a host): the WHATWG URL standard refuses them too.
STRICTER = frozenset(" %")
# The random hosts leave out what changes a URL's parts rather than its host.
PARTS = "/\\?#@:[]"


def _random_hosts(count: int) -> list[str]:
    rng = random.Random(30)
    pools = (
        "abcxyz019-._",
        "".join(chr(c) for c in range(0x20, 0x7F)),
        "".join(chr(c) for c in range(0x80, 0x250)),
        "\u00d1\u00f1\u00fc\u00df\u0130\u0131\u03a9\u2603\u20ac\u2013\u200b\u200c\u200d"
        "\u00ad\ufeff\u2028\u3002\uff0e\uff61\u05d0\u0627\u0661\u0301",
    )
    hosts = []
    for _ in range(count):
        host = ""
        for _ in range(rng.randint(1, 8)):
            roll = rng.random()
            if roll < 0.8:
                pool = pools[0 if roll < 0.35 else 1 if roll < 0.55 else 2 if roll < 0.7 else 3]
                host += rng.choice(pool)
            else:
                code = rng.randint(0x80, 0x10FFFF)
                host += chr(code) if not 0xD800 <= code <= 0xDFFF else "a"
        hosts.append("".join(c for c in host if c not in PARTS) or "a")
    return hosts


def _policy_takes(url: str) -> bool:
    try:
        urls.prepare(url, allow_file_urls=False)
    except InvalidInput:
        return False
    return True


async def _page(chromium: RawChromium) -> Any:
    pw = await async_playwright().start()
    browser = await pw.chromium.connect_over_cdp(chromium.cdp_url)
    return pw, browser, browser.contexts[0].pages[0]


async def test_hosts_the_policy_refuses_are_the_ones_chromium_refuses(
    chromium: RawChromium,
) -> None:
    hosts = HOSTS + _random_hosts(3000)
    pw, browser, page = await _page(chromium)
    try:
        parsed = await page.evaluate(
            "(hosts) => hosts.map((h) => { try { new URL('http://' + h + '/'); return true; }"
            " catch (e) { return false; } })",
            hosts,
        )
    finally:
        await browser.close()
        await pw.stop()
    wrong_refusals, let_through = [], []
    for host, chromium_takes in zip(hosts, parsed, strict=True):
        ours = _policy_takes(f"http://{host}/")
        if chromium_takes and not ours and not STRICTER & set(host):
            wrong_refusals.append(host)
        if ours and not chromium_takes:
            let_through.append(host)
    assert not wrong_refusals, [ascii(h) for h in wrong_refusals]
    # What gets through is only what this Python's Unicode tables do not know (a newer
    # Unicode's code points, where Chromium's and idna's tables differ): the browser's own
    # refusal answers those (urls.refused_by_browser).
    unknown = [h for h in let_through if any(unicodedata.category(c) == "Cn" for c in h)]
    assert unknown == let_through, [ascii(h) for h in let_through if h not in unknown]
    # The kinds of host the fuzzer sent (an unassigned code point, U+FFFD, a private-use or
    # invisible one, a Bidi or joiner mix, a leading mark) are caught before the browser.
    tricky = ["\U000c7b3e", "\ufffd", "\ue000", "\u200b", "a\u05de", "\u0301a", "a\u200db"]
    assert not [h for h in tricky if parsed[hosts.index(h)] or _policy_takes(f"http://{h}/")]


async def test_restricted_ports_are_chromiums(chromium: RawChromium) -> None:
    ports = sorted(urls.RESTRICTED_PORTS)
    neighbours = sorted({p + 1 for p in ports} - urls.RESTRICTED_PORTS)
    pw, browser, page = await _page(chromium)
    failed: dict[str, str] = {}
    try:
        cdp = await page.context.new_cdp_session(page)
        await cdp.send("Network.enable")
        sent: dict[str, str] = {}
        cdp.on("Network.requestWillBeSent", lambda e: sent.__setitem__(e["requestId"], e["request"]["url"]))
        cdp.on("Network.loadingFailed", lambda e: failed.__setitem__(sent.get(e["requestId"], ""), e["errorText"]))
        await page.evaluate(
            "(ports) => Promise.all(ports.map((p) => fetch(`http://127.0.0.1:${p}/`, "
            "{mode: 'no-cors', cache: 'no-store'}).catch(() => 0)))",
            ports + neighbours,
        )
    finally:
        await browser.close()
        await pw.stop()

    def error(port: int) -> str:
        return failed.get(f"http://127.0.0.1:{port}/", "") if port != 80 else ""

    assert [p for p in ports if error(p) != "net::ERR_UNSAFE_PORT"] == []
    assert [p for p in neighbours if error(p) == "net::ERR_UNSAFE_PORT"] == []
