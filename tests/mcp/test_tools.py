"""The tools, end to end: the official MCP client drives `browserdeck mcp` over stdio.

No service runs, so each server starts its own in-process service and headless
Chromium on the first call (the fallback path); the pages come from the test site.
Every check looks at the page's real state, not only at "no error".
"""

from __future__ import annotations

import asyncio
import base64
import io
import re
from pathlib import Path

from PIL import Image

from browserdeck.mcpserver.output import saved_dir
from browserdeck.mcpserver.snapshot import refs_in
from tests.mcp.harness import call, call_error, mcp_config, ref_of, stdio_client


async def test_navigate_snapshot_click_type_find_screenshot(
    bd_home: Path, chromium_path: str, site: str
) -> None:
    mcp_config(bd_home, screenshot_max_dimension=640)
    async with stdio_client(bd_home, chromium_path) as client:
        nav = await call(client, "browser_navigate", {"url": f"{site}/shop.html"})
        assert 'page: "Shop demo"' in nav and "(HTTP 200)" in nav and "[ref=" not in nav

        snap = await call(client, "browser_snapshot")
        assert snap.startswith('page: "Shop demo"')
        add = ref_of(snap, "button", "Add to cart")
        search = ref_of(snap, "searchbox", "Search")
        assert '- link "Details"' in snap and "[url=/p/1]" in snap
        assert "[ref=" not in next(line for line in snap.splitlines() if "- heading" in line)

        clicked = await call(client, "browser_click", {"ref": add, "snapshot": True})
        assert clicked.startswith(f"clicked {add}")
        assert "changes since your last snapshot" in clicked and "+" in clicked
        assert "1 item" in clicked
        assert await call(client, "browser_snapshot", {"diff": True}) == (
            f'page: "Shop demo" — {site}/shop.html\nno changes since your last snapshot'
        )

        typed = await call(client, "browser_type", {"ref": search, "text": "chair"})
        assert typed == f"typed into {search}"
        value = await call(
            client, "browser_evaluate", {"function": "(el) => el.value", "ref": search}
        )
        assert value == "chair"
        # Playwright MCP's argument names work too (target for ref, element ignored), and
        # its filename saves a result to a file instead of returning it.
        await call(client, "browser_click", {"target": add, "element": "Add to cart button"})
        saved = await call(client, "browser_snapshot", {"filename": "s.yml"})
        assert saved.startswith("saved ") and "[ref=" in (saved_dir() / "s.yml").read_text()
        # Nowhere else: a path is reduced to its file name, in the output folder.
        outside = bd_home.parent / "outside.yml"
        saved = await call(client, "browser_snapshot", {"filename": str(outside)})
        assert not outside.exists() and (saved_dir() / "outside.yml").is_file(), saved
        assert not outside.exists()

        found = await call(client, "browser_find", {"text": "details"})
        assert found.startswith("2 match(es)") and "[ref=" in found
        found = await call(client, "browser_find", {"regex": "/clickable/i"})
        assert "Clickable div" in found
        assert "no match" in await call(client, "browser_find", {"text": "zebra"})

        line = next(x for x in snap.splitlines() if "Clickable div" in x)
        div_ref = refs_in(line).pop()
        await call(client, "browser_click", {"ref": div_ref})
        assert "div clicked" in await call(client, "browser_find", {"text": "div clicked"})

        result = await client.call_tool("browser_take_screenshot", {"labels": True})
        assert not result.is_error
        images = [c for c in result.content if c.type == "image"]
        assert len(images) == 1 and images[0].mime_type == "image/png"
        image = Image.open(io.BytesIO(base64.b64decode(images[0].data)))
        assert max(image.size) <= 640  # screenshotMaxDimension
        label_text = "\n".join(c.text for c in result.content if c.type == "text")
        # Each label's box in numbers (ref: x,y width x height), read from the typed label.
        assert re.search(rf"^{add}: [\d.]+,[\d.]+ [\d.]+x[\d.]+$", label_text, re.M), label_text

        stale = await call_error(client, "browser_click", {"ref": "e999"})
        assert "e999" in stale and "snapshot" in stale
        # A ref from before a navigation fails closed, even though the server prepared
        # the new page for a snapshot in the background.
        # (long.html has an element with that ref number too: a link.)
        await call(client, "browser_navigate", {"url": f"{site}/long.html"})
        await call(client, "browser_wait_for", {"time": 0.5})
        stale = await call_error(client, "browser_click", {"ref": add})
        assert "snapshot" in stale
        assert "/long.html" in await call(
            client, "browser_evaluate", {"function": "() => location.href"}
        )
        await call(client, "browser_navigate_back")

        console = await call(client, "browser_console_messages")
        assert "[page] log: shop ready" in console and "[page] error: shop error line" in console
        assert "shop error line" in await call(
            client, "browser_console_messages", {"level": "error", "clear": True}
        )
        assert "no console messages" in await call(client, "browser_console_messages")

        requests = await call(client, "browser_network_requests", {"filter": "shop"})
        assert f"GET 200 {site}/shop.html" in requests

        await call(client, "browser_navigate", {"url": f"{site}/next.html"})
        back = await call(client, "browser_navigate_back")
        assert "Shop demo" in back
        forward = await call(client, "browser_navigate_forward")
        assert "Next page" in forward
        resized = await call(client, "browser_resize", {"width": 800, "height": 600})
        assert resized == "viewport is 800x600"
        assert await call(client, "browser_evaluate", {"function": "() => innerWidth"}) == "800"


async def test_forms_dialogs_upload_keys(
    bd_home: Path, chromium_path: str, site: str, tmp_path: Path
) -> None:
    files = tmp_path / "files"  # uploads come only from allowed roots (uploadRoots here)
    files.mkdir()
    mcp_config(bd_home, upload_roots=[str(files)])
    upload = files / "report.txt"
    upload.write_text("hello", encoding="utf-8")
    async with stdio_client(bd_home, chromium_path) as client:
        await call(client, "browser_navigate", {"url": f"{site}/form.html"})
        snap = await call(client, "browser_snapshot")
        email = ref_of(snap, "textbox", "Email")
        agree = ref_of(snap, "checkbox", "I agree")
        freq = ref_of(snap, "combobox", "Frequency")
        filled = await call(
            client,
            "browser_fill_form",
            {
                "fields": [
                    {"ref": email, "type": "textbox", "value": "a@b.c"},
                    {"ref": agree, "type": "checkbox", "value": "true"},
                ]
            },
        )
        # Each field as the engine reports it set (ActResult.filled), not the request echoed.
        assert filled.startswith(f"filled 2 field(s): {email} = 'a@b.c'; {agree} checked")
        selected = await call(client, "browser_select_option", {"ref": freq, "values": ["Monthly"]})
        assert selected.startswith(f"selected 'Monthly' in {freq}"), selected
        state = await call(
            client,
            "browser_evaluate",
            {
                "function": "() => [document.querySelector('[name=email]').value, "
                "document.querySelector('[name=agree]').checked, "
                "document.querySelector('[name=freq]').value]"
            },
        )
        assert re.sub(r"\s", "", state) == '["a@b.c",true,"Monthly"]'
        await call(client, "browser_click", {"ref": ref_of(snap, "button", "Subscribe")})
        await call(client, "browser_wait_for", {"text": "sent a@b.c Monthly"})

        # A dialog with nothing armed is dismissed and reported; an armed one is answered.
        ask = ref_of(snap, "button", "Ask")
        reported = await call(client, "browser_click", {"ref": ask})
        assert 'confirm dialog "Sure?" was dismissed' in reported
        assert "browser_handle_dialog" in reported
        armed = await call(client, "browser_handle_dialog", {"accept": True})
        assert "armed" in armed
        await call(client, "browser_click", {"ref": ask})
        await call(client, "browser_wait_for", {"text": "confirm: true"})
        await call(client, "browser_handle_dialog", {"accept": True, "promptText": "Ada"})
        await call(client, "browser_click", {"ref": ref_of(snap, "button", "Prompt")})
        await call(client, "browser_wait_for", {"text": "prompt: Ada"})

        # Upload straight into the input (by its ref)...
        file_input = ref_of(snap, "button", "Upload")
        done = await call(
            client, "browser_file_upload", {"paths": [str(upload)], "ref": file_input}
        )
        assert "uploaded 1 file" in done
        await call(client, "browser_wait_for", {"text": "report.txt"})
        # ...or arm the next file chooser, then click what opens it.
        other = files / "second.txt"
        other.write_text("again", encoding="utf-8")
        armed = await call(client, "browser_file_upload", {"paths": [str(other)]})
        assert armed.startswith("armed")
        clicked = await call(client, "browser_click", {"ref": file_input})
        waited = await call(client, "browser_wait_for", {"text": "second.txt"})
        # Reported with the click, or with the next call if the files landed just after.
        assert "the file chooser got second.txt" in clicked + waited
        missing = await call_error(
            client,
            "browser_file_upload",
            {"paths": [str(files / "nope.txt")], "ref": file_input},
        )
        assert "nope.txt" in missing

        hover = ref_of(snap, "button", "Hover me")
        await call(client, "browser_hover", {"ref": hover})
        await call(client, "browser_wait_for", {"text": "hovered"})
        await call(client, "browser_click", {"ref": ref_of(snap, "textbox", "Keys")})
        assert await call(client, "browser_press_key", {"key": "ArrowDown"}) == "pressed ArrowDown"
        await call(client, "browser_wait_for", {"text": "ArrowDown"})
        waited = await call(client, "browser_wait_for", {"time": 0.1})
        assert waited == "waited 0.1 s"

        # What the page chose is said (ActResult.selected): the option's value, asked by label.
        sizes = "data:text/html,<select aria-label=Size><option value=m>Medium</option></select>"
        await call(client, "browser_navigate", {"url": sizes})
        size = ref_of(await call(client, "browser_snapshot"), "combobox", "Size")
        chose = await call(client, "browser_select_option", {"ref": size, "values": ["Medium"]})
        assert chose.startswith(f"selected 'm' in {size}"), chose


async def test_output_cap_offloads_to_a_file(bd_home: Path, chromium_path: str, site: str) -> None:
    mcp_config(bd_home)
    async with stdio_client(bd_home, chromium_path, "--max-chars", "3000") as client:
        await call(client, "browser_navigate", {"url": f"{site}/long.html"})
        # 1,500 look-alike paragraphs fold to fit (tests/mcp/test_bigpages.py); the whole
        # snapshot still goes to a file.
        snap = await call(client, "browser_snapshot")
        assert len(snap) <= 3000
        match = re.search(r"the whole snapshot \(([\d,]+) characters\) is in (\S+?)\]", snap)
        assert match, snap[-400:]
        full = Path(match.group(2)).read_text(encoding="utf-8")
        assert 'link "link 700"' in full and 'link "link 700"' not in snap
        assert bd_home in Path(match.group(2)).parents
        found = await call(client, "browser_find", {"text": "link 700"})
        assert "[ref=" in found
        # What cannot fold is cut, and saved whole.
        text = await call(client, "browser_evaluate", {"function": "() => 'x'.repeat(9000)"})
        match = re.search(
            r"\[output cut: ([\d,]+) of ([\d,]+) characters not shown; the full "
            r"text is in (\S+?)\. ",
            text,
        )
        assert match, text[-400:]
        assert len(Path(match.group(3)).read_text(encoding="utf-8")) == int(
            match.group(2).replace(",", "")
        )


async def test_all_tools_dom_exploration(
    bd_home: Path, chromium_path: str, site: str, tmp_path: Path
) -> None:
    files = tmp_path / "files"  # browser_read_image reads only inside allowed roots
    files.mkdir()
    mcp_config(bd_home, mcp_run_code=True, upload_roots=[str(files)])
    image = files / "big.png"
    Image.new("RGB", (3000, 1000), "red").save(image)
    async with stdio_client(bd_home, chromium_path, "--tools", "all") as client:
        await call(client, "browser_navigate", {"url": f"{site}/form.html"})
        snap = await call(client, "browser_snapshot")
        email = ref_of(snap, "textbox", "Email")
        await call(client, "browser_type", {"ref": email, "text": "x@y.z"})

        dom = await call(client, "browser_query_dom", {"selector": "button", "limit": 2})
        assert '"total": 3' in dom and '"tag": "button"' in dom
        text = await call(client, "browser_visible_text", {"selector": "#out"})
        # Page content, marked as such (engine/pagetext.py).
        assert text.splitlines()[1] == "not sent" and len(text.splitlines()) == 3, text
        assert text.startswith("--- begin visible text") and "nonce=" in text
        styles = await call(
            client, "browser_computed_styles", {"ref": email, "properties": ["display"]}
        )
        assert '"display": "inline-block"' in styles
        vis = await call(client, "browser_check_visibility", {"selector": "#out"})
        assert '"visible": true' in vis and '"inViewport": true' in vis
        attrs = await call(client, "browser_attributes", {"ref": email})
        assert '"name": "email"' in attrs and '"type": "email"' in attrs
        counts = await call(client, "browser_count_elements", {"selectors": ["input", "p", "!"]})
        assert '"p": 4' in counts and "invalid selector" in counts
        meta = await call(client, "browser_page_metadata")
        assert '"title": "Form"' in meta
        hits = await call(client, "browser_find_by_text", {"text": "not sent"})
        assert '"total": 1' in hits and "#out" in hits
        values = await call(client, "browser_form_values")
        assert '"value": "x@y.z"' in values and '"type": "checkbox"' in values
        state = await call(client, "browser_element_state", {"ref": email})
        assert '"editable": true' in state and '"value": "x@y.z"' in state
        need = await call_error(client, "browser_attributes", {})
        assert "needs ref or selector" in need

        workers = await call(client, "browser_service_workers")
        assert '"supported": true' in workers and '"registrations": []' in workers
        sources = await call(client, "browser_network_sources")
        assert f"{site}/form.html" in sources and '"network"' in sources

        result = await client.call_tool("browser_read_image", {"path": str(image)})
        assert not result.is_error
        img = next(c for c in result.content if c.type == "image")
        assert max(Image.open(io.BytesIO(base64.b64decode(img.data))).size) <= 1568
        missing = await call_error(client, "browser_read_image", {"path": str(files / "x.png")})
        assert "cannot read" in missing and "x.png" in missing

        fetch = "() => fetch('/next.html').then(r => r.status, e => 'failed: ' + e.name)"
        assert await call(client, "browser_evaluate", {"function": fetch}) == "200"
        assert "offline" in await call(client, "browser_set_offline", {"offline": True})
        assert "failed: TypeError" in await call(client, "browser_evaluate", {"function": fetch})
        assert "back online" in await call(client, "browser_set_offline", {"offline": False})
        assert await call(client, "browser_evaluate", {"function": fetch}) == "200"

        # Opt-in Python with Playwright objects; state survives until browser_reset.
        code = "state['n'] = state.get('n', 0) + 1\nprint('hi')\n[await page.title(), state['n']]"
        first = await call(client, "browser_run_code", {"code": code})
        assert first.startswith("hi") and '"Form"' in first and "1" in first.splitlines()[-2]
        second = await call(client, "browser_run_code", {"code": code})
        assert "2" in second.splitlines()[-2]
        assert "reset" in await call(client, "browser_reset")
        third = await call(client, "browser_run_code", {"code": "state.get('n')"})
        assert third.startswith("done")  # None: state is gone
        raised = await call_error(client, "browser_run_code", {"code": "1 / 0"})
        assert "ZeroDivisionError" in raised
        bad = await call_error(client, "browser_run_code", {"code": "def ("})
        assert "syntax error" in bad

        saved = await call(client, "browser_pdf_save", {"filename": "p.pdf"})
        assert saved.endswith("p.pdf")
        assert (saved_dir() / "p.pdf").read_bytes().startswith(b"%PDF")
        # A path is reduced to its name, and an existing file is never overwritten.
        again = await call(client, "browser_pdf_save", {"filename": str(tmp_path / "p.pdf")})
        assert again.endswith("p-1.pdf") and not (tmp_path / "p.pdf").exists()


async def test_console_contexts_service_workers_and_offline(
    bd_home: Path, chromium_path: str, site: str
) -> None:
    mcp_config(bd_home)
    async with stdio_client(bd_home, chromium_path, "--tools", "all") as client:
        await call(client, "browser_navigate", {"url": f"{site}/workers.html"})
        ready = (
            "() => navigator.serviceWorker.ready.then((r) => { r.active.postMessage('ping'); "
            "return navigator.serviceWorker.controller ? 'controlled' : new Promise((ok) => "
            "navigator.serviceWorker.addEventListener('controllerchange', () => "
            "ok('controlled'))); })"
        )
        assert await call(client, "browser_evaluate", {"function": ready}) == "controlled"
        console = ""
        for _ in range(100):  # worker messages arrive a moment after the page's
            console = await call(client, "browser_console_messages")
            if "service worker got ping" in console and "worker got start" in console:
                break
            await asyncio.sleep(0.1)
        assert "[page] log: page hello" in console
        assert f"[worker] log: worker got start ({site}/worker.js" in console
        assert f"[service-worker] warning: service worker got ping ({site}/sw.js" in console
        assert console.count("service worker got ping") == 1
        cleared = await call(client, "browser_console_messages", {"clear": True})
        assert "cleared" in cleared
        assert "no console messages" in await call(client, "browser_console_messages")

        workers = await call(client, "browser_service_workers")
        assert f"{site}/sw.js" in workers and '"controlled": true' in workers

        fetch = (
            "() => Promise.all(['/next.html', '/via-sw/next.html'].map((u) => fetch(u, "
            "{cache: 'no-store'}).then((r) => r.status, (e) => e.name)))"
        )
        assert await call(client, "browser_evaluate", {"function": fetch}) == "[\n 200,\n 200\n]"
        off = await call(client, "browser_set_offline", {"offline": True})
        assert off.startswith("offline") and f"{site}/sw.js" in off
        failed = await call(client, "browser_evaluate", {"function": fetch})
        assert failed.count("TypeError") == 2, failed
        assert await call(client, "browser_set_offline", {"offline": False}) == "back online"
        assert await call(client, "browser_evaluate", {"function": fetch}) == "[\n 200,\n 200\n]"
