"""Issue 31 item 5: browserdeck's own DOM tools run out of the page's reach.

``browser_visible_text`` and ``browser_page_metadata`` (and the other DOM tools of
mcpserver/dom.py) ran their functions in the page's own JavaScript world: a page that
replaced ``String.prototype.trim`` or added ``Object.prototype.toJSON`` rewrote what they
reported. They now run in a world the page cannot reach (engine/isolated.py), the element
of a ref found there too. Through the official MCP client and real Chromium.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import quote

from tests.mcp.harness import call, mcp_config, stdio_client

PAGE = (
    "<title>Real title</title><meta name=description content='Real description'>"
    "<h1>Real heading</h1><p id=para>Real text <b>in bold</b></p>"
    # (spelt in two halves: the page's URL, which the metadata reports, must not say it)
    "<script>const F = 'FOR' + 'GED';"
    "String.prototype.trim = function () { return F; };"
    "String.prototype.replace = function () { return F; };"
    "Object.prototype.toJSON = function () { return F; };"
    "JSON.stringify = () => '\"' + F + '\"';"
    "Element.prototype.getAttribute = () => F;"
    "Document.prototype.querySelectorAll = () => [];"
    "</script>"
)


async def test_dom_tools_report_the_page_not_what_its_scripts_say(
    bd_home: Path, chromium_path: str
) -> None:
    mcp_config(bd_home)
    async with stdio_client(bd_home, chromium_path, "--tools", "all") as client:
        await call(client, "browser_navigate", {"url": "data:text/html," + quote(PAGE)})
        # The page's world really is hostile: a function run there is fooled.
        fooled = await call(client, "browser_evaluate", {"function": "() => ' x '.trim()"})
        assert "FORGED" in fooled

        text = await call(client, "browser_visible_text")
        assert "Real text in bold" in text and "Real heading" in text, text
        assert "FORGED" not in text
        meta = await call(client, "browser_page_metadata")
        assert '"title": "Real title"' in meta and "Real description" in meta, meta
        assert "FORGED" not in meta, meta

        # With a ref: the element is found out of the page's reach as well (the page's
        # querySelectorAll and getAttribute are not asked).
        full = await call(client, "browser_snapshot", {"full": True})
        para = re.search(r"- paragraph \[ref=([^\]]+)\]", full)
        assert para is not None, full
        scoped = await call(client, "browser_visible_text", {"ref": para.group(1)})
        assert "Real text in bold" in scoped and "FORGED" not in scoped, scoped
        attrs = await call(client, "browser_attributes", {"ref": para.group(1)})
        assert '"id": "para"' in attrs and "FORGED" not in attrs, attrs
        styles = await call(
            client, "browser_computed_styles", {"ref": para.group(1), "properties": ["display"]}
        )
        assert '"display": "block"' in styles, styles
