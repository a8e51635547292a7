"""Capture the README/docs screenshots of the tray app under Xvfb (with trayer as the tray).

    .venv/bin/python docs/screenshots/capture.py

Starts a private Xvfb display with a tray host, then runs the real tray app (the same
TrayApp and Service as `browserdeck`) in a child process on that display, plays a
short agent session through the control API against a local demo page, and saves:

  docs/screenshots/tray-menu.png   the tray icon and its menu, with the agent submenu
  docs/screenshots/panel.png       the status panel at 100% on a dense page (form + table)
  docs/screenshots/activity.png    the activity log: kinds, refs, elements, an error row
  docs/screenshots/sessions.png    the Sessions view: a recorded session, a step before/after
  docs/screenshots/settings.png    the settings dialog (General and Profiles pages)
  docs/screenshots/settings-errors.png  a port another program holds (Save waits), a bad
                                        colour, a colour another profile has
  docs/screenshots/settings-bad-colour.png  a colour that is no colour (Save waits)
  docs/screenshots/settings-restart.png the question before saving a change that restarts
                                        a running browser

Everything runs with a temp BROWSERDECK_HOME and free ports; nothing of the user's
is touched.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "docs" / "screenshots"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "app"))

DEMO_PAGE = """<!doctype html><html><head><title>Tickets · Acme Helpdesk</title><style>
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:0;background:#f5f6f8;color:#1d2330}
header{background:#1f2a44;color:#fff;padding:12px 24px;display:flex;gap:22px;align-items:center}
header b{font-size:17px;margin-right:14px} header a{color:#c9d3ea;text-decoration:none}
main{display:flex;gap:20px;padding:18px 24px}
section{background:#fff;border-radius:10px;padding:16px 20px;box-shadow:0 1px 3px rgba(0,0,0,.12)}
h1{font-size:18px;margin:0 0 10px} label{display:block;font-size:13px;margin:10px 0 4px;color:#555}
input,select{width:100%;box-sizing:border-box;padding:7px 9px;border:1px solid #c8ccd4;
border-radius:6px;font-size:14px}
table{border-collapse:collapse;font-size:14px} td,th{padding:5px 8px;border-bottom:1px solid #eceef2;
text-align:left} th{font-size:12px;color:#666;text-transform:uppercase}
button{padding:5px 11px;border-radius:6px;border:1px solid #c8ccd4;background:#fff;font-size:13px}
button.primary{background:#2f6fed;color:#fff;border-color:#2f6fed}
</style></head><body>
<header><b>Acme Helpdesk</b><a href="#">Tickets</a><a href="#">Customers</a><a href="#">Reports</a></header>
<main><section style="width:300px"><h1>New ticket</h1>
<label for="email">Customer email</label><input id="email" value="dana@example.com">
<label for="subject">Subject</label><input id="subject">
<label for="prio">Priority</label><select id="prio"><option>Normal</option>
<option selected>High</option></select>
<label><input type="checkbox" checked style="width:auto"> Notify the customer</label>
<p><button class="primary">Create ticket</button> <button>Save draft</button></p></section>
<section style="flex:1"><h1>Open tickets</h1><table>
<tr><th>#</th><th>Subject</th><th>Customer</th><th></th></tr>
__ROWS__
</table></section></main></body></html>""".replace(
    "__ROWS__",
    "".join(
        f"<tr><td>{2280 + i}</td><td>{subject}</td><td>{who}</td><td><button>Open</button> "
        "<button>Assign</button> <button>Close</button></td></tr>"
        for i, (subject, who) in enumerate(
            [
                ("Wrong VAT on invoice", "dana@example.com"),
                ("Login link expired", "li@example.org"),
                ("Refund for order 5512", "sam@example.net"),
                ("Cannot change address", "ana@example.com"),
                ("Duplicate charge", "tom@example.org"),
                ("Export to CSV fails", "kim@example.net"),
                ("Password reset mail", "eve@example.com"),
                ("Late delivery", "raj@example.org"),
                ("Coupon not applied", "zoe@example.net"),
                ("Invoice address typo", "max@example.com"),
            ]
        )
    ),
)


class DemoPage(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = DEMO_PAGE.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


# --- the child: the real app on the Xvfb display -------------------------------------


async def session(app: Any, qapp: Any) -> None:
    import httpx
    from PySide6.QtCore import QPoint, QRect
    from PySide6.QtTest import QTest
    from tests.gui.conftest import in_qt, wait_for

    await wait_for(lambda: app.service is not None and app.service.started, 60, "the service")
    service = app.service
    server = ThreadingHTTPServer(("127.0.0.1", 0), DemoPage)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/tickets/new"

    ctx = service.contexts["agent"]
    await ctx.start()
    blank = await ctx.list_tabs()
    # Play an agent session through the API so the activity list shows real calls.
    headers = {
        "Authorization": f"Bearer {service.api_token}",
        "X-Browserdeck-Client": "claude-code",
    }
    async with httpx.AsyncClient(
        base_url=service.url, headers=headers, timeout=60, trust_env=False
    ) as api:
        tab = (await api.post("/tabs/open", json={"url": "about:blank"})).json()
        for old in blank:
            await api.delete(f"/tabs/{old.target_id}")
        await api.post("/navigate", json={"url": url, "targetId": tab["targetId"]})
        snap = (
            await api.get("/snapshot", params={"targetId": tab["targetId"], "format": "role"})
        ).json()
        refs = snap.get("refs") or {}

        def ref_of(role: str, name: str) -> str | None:
            items = refs.items() if isinstance(refs, dict) else []
            for ref, info in items:
                if info.get("role") == role and name in (info.get("name") or ""):
                    return str(ref)
            return None

        target = {"targetId": tab["targetId"]}
        subject = ref_of("textbox", "Subject")
        if subject:
            await api.post(
                "/act",
                json={"kind": "type", "ref": subject, "text": "Invoice 2291 VAT", **target},
            )
        prio = ref_of("combobox", "Priority")
        if prio:
            await api.post(
                "/act", json={"kind": "select", "ref": prio, "values": ["High"], **target}
            )
        assign = ref_of("button", "Assign")
        if assign:
            await api.post("/act", json={"kind": "hover", "ref": assign, **target})
        await api.get("/console", params=target)
        await api.post(
            "/act", json={"kind": "click", "ref": "e999", **target}
        )  # a stale ref: the error row
        await api.post("/screenshot", json={"labels": True, **target})

    # The tray menu, opened on the agent profile, as it sits under the tray.
    tray = app.tray
    await app.model.refresh_now()
    geo = tray.icon.geometry()
    screen = qapp.primaryScreen()
    menu = tray.menu
    menu.popup(QPoint(geo.right() - menu.sizeHint().width(), geo.bottom() + 2))
    await asyncio.sleep(0.4)
    agent_menu = tray.profile_menus["agent"].menu
    # Open the profile's submenu where Qt puts it (left of the menu: the tray is at the
    # right edge of the screen), with its row highlighted in the main menu.
    row = menu.actionGeometry(agent_menu.menuAction())
    menu.setActiveAction(agent_menu.menuAction())
    agent_menu.popup(QPoint(menu.x() - agent_menu.sizeHint().width() + 2, menu.y() + row.y() - 4))
    await wait_for(lambda: agent_menu.isVisible(), 10, "the agent submenu")
    await asyncio.sleep(0.4)
    assert menu.isVisible() and agent_menu.isVisible(), "the menus closed before the capture"
    region = menu.geometry().united(agent_menu.geometry()).united(QRect(geo))
    region = region.adjusted(-24, -geo.bottom() - 2, 24, 24).intersected(screen.geometry())
    region.setTop(0)
    screen.grabWindow(0, region.x(), region.y(), region.width(), region.height()).save(
        str(OUT / "tray-menu.png")
    )
    agent_menu.hide()
    menu.hide()

    # The panel at 100%, with a labelled screenshot and a hovered label.
    panel = app.show_panel()
    panel.resize(1400, 860)
    panel.move(20, 34)
    panel.auto_box.setChecked(False)
    panel.set_zoom("100%")
    await app.model.refresh_now()
    await wait_for(lambda: panel.selected_tab() == tab["targetId"], 20, "the demo tab")
    panel.refresh_screenshot()
    await wait_for(
        lambda: panel.shot.capture is not None and panel.shot.capture.labels,
        30,
        "a labelled screenshot",
    )
    await asyncio.sleep(0.3)
    labels = panel.shot.capture.labels
    target_box = next((lb for lb in labels if lb.name == "Create ticket"), labels[0])
    point = panel.shot.view_rect_of(target_box).center().toPoint()
    for nudge in range(6):  # a loaded machine may drop a synthetic move: try again
        await in_qt(lambda n=nudge: QTest.mouseMove(panel.shot, point + QPoint(n, 0)))
        await asyncio.sleep(0.5)
        if panel.shot.hover is not None:
            break
    # The failed call's row selected: its message and hint show under the list.
    from browserdeck.gui.activity_pane import ELEMENT

    for i in range(panel.activity.topLevelItemCount()):
        item = panel.activity.topLevelItem(i)
        if item is not None and item.text(ELEMENT) == "e999":
            panel.activity.setCurrentItem(item)
    await asyncio.sleep(0.3)
    panel.grab().save(str(OUT / "panel.png"))
    panel.activity_pane.grab().save(str(OUT / "activity.png"))

    # The Sessions view: the agent's session, its steps, the select's images side by side.
    pane = panel.sessions_pane
    panel.views.setCurrentWidget(pane)
    await wait_for(lambda: pane.session_tree.topLevelItemCount() >= 1, 20, "the session")
    pane.session_tree.setCurrentItem(pane.session_tree.topLevelItem(0))
    await wait_for(lambda: pane.step_tree.topLevelItemCount() >= 6, 20, "its steps")
    for i in range(pane.step_tree.topLevelItemCount()):
        item = pane.step_tree.topLevelItem(i)
        if item is not None and item.text(2).startswith("select"):
            pane.step_tree.setCurrentItem(item)
    await wait_for(
        lambda: pane.before_box.pixmap_full is not None and pane.after_box.pixmap_full is not None,
        30,
        "the step's images before and after",
    )
    await asyncio.sleep(0.3)
    panel.grab().save(str(OUT / "sessions.png"))
    panel.hide()

    # The settings dialog: General, and Profiles with the agent profile selected.
    dialog = app.show_settings()
    dialog.resize(760, 640)
    await asyncio.sleep(0.4)
    general = dialog.grab()
    dialog.select_profile("agent")
    await asyncio.sleep(0.4)
    profiles = dialog.grab()
    from PySide6.QtGui import QColor, QPainter, QPixmap

    def side_by_side(left: QPixmap, right: QPixmap, path: Path) -> None:
        both = QPixmap(left.width() + right.width() + 24, max(left.height(), right.height()))
        both.fill(QColor(0, 0, 0, 0))
        p = QPainter(both)
        p.drawPixmap(0, 0, left)
        p.drawPixmap(left.width() + 24, 0, right)
        p.end()
        both.save(str(path))

    side_by_side(general, profiles, OUT / "settings.png")

    # Error states: a port another program holds (probed), a bad colour.
    import socket

    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    dialog.tabs.setCurrentIndex(0)
    cfg_relay = dialog.fields["relayPort"].value()
    dialog.fields["relayPort"].widget.setValue(holder.getsockname()[1])
    await asyncio.sleep(0.3)
    port_error = dialog.grab()
    dialog.fields["relayPort"].widget.setValue(cfg_relay)
    dialog.select_profile("agent")
    # Its CDP port held by another program too, and the colour the chrome profile has.
    dialog.profile_fields["cdpPort"].widget.setValue(holder.getsockname()[1])
    dialog.profile_fields["color"].widget.set_value(
        dialog.working.profiles["chrome"].color.lower()
    )
    dialog.validate()
    await asyncio.sleep(0.3)
    colour_error = dialog.grab()
    side_by_side(port_error, colour_error, OUT / "settings-errors.png")
    dialog.profile_fields["color"].widget.set_value("#12345")
    dialog.validate()
    await asyncio.sleep(0.3)
    dialog.grab().save(str(OUT / "settings-bad-colour.png"))
    holder.close()
    dialog.close()
    await wait_for(lambda: app.settings_dialog is None, 20, "the dialog deleted")

    # A change a running browser takes only when it starts again: the question first.
    dialog = app.show_settings()
    dialog.resize(760, 640)
    dialog.select_profile("agent")
    dialog.profile_fields["cdpPort"].widget.setValue(dialog.profile_fields["cdpPort"].value() + 1)
    dialog.save()
    await wait_for(lambda: dialog.restart_box is not None, 20, "the restart question")
    box = dialog.restart_box
    await asyncio.sleep(0.4)
    box.grab().save(str(OUT / "settings-restart.png"))
    box.reject()
    dialog.close()
    server.shutdown()
    app.request_quit()


def child() -> int:
    import qasync

    from browserdeck.gui.app import TrayApp
    from browserdeck.gui.qtapp import make_qapp
    from browserdeck.master import build_service, mcp_client_config
    from browserdeck.util import logsetup

    logsetup.setup()
    qapp = make_qapp()
    app = TrayApp(
        qapp,
        service_factory=lambda: build_service(force_headless=True),
        mcp_config=mcp_client_config,
    )
    loop = qasync.QEventLoop(qapp)
    asyncio.set_event_loop(loop)

    async def main() -> int:
        runner = asyncio.ensure_future(app.run())
        try:
            await session(app, qapp)
        finally:
            app.request_quit()
            code = await runner
        return code

    with loop:
        return int(loop.run_until_complete(main()))


# --- the parent: display, config, child ----------------------------------------------


def parent() -> int:
    from tests.gui.xdisplay import missing_tools, xvfb_with_tray
    from tests.support.browsers import find_chromium
    from tests.support.net import free_port

    from browserdeck import config

    if missing_tools():
        print(f"needs {', '.join(missing_tools())} (make system-deps)", file=sys.stderr)
        return 2
    OUT.mkdir(parents=True, exist_ok=True)
    with (
        tempfile.TemporaryDirectory(prefix="bd-shots-") as home,
        xvfb_with_tray(size="1440x900", background="#4C566A", full_width_bar=True) as x,
    ):
        cfg = config.default_config()
        cfg.control_port, cfg.relay_port = free_port(), free_port()
        cfg.profiles["agent"].cdp_port = free_port()
        cfg.no_sandbox = os.geteuid() == 0
        cfg.headless = True  # the browser's window is not part of these pictures
        config.save(cfg, Path(home) / "config" / "config.json")
        env = {
            **os.environ,
            **x.env(),
            "BROWSERDECK_HOME": home,
            "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
            "BROWSERDECK_CHROME": find_chromium() or "",
        }
        done = subprocess.run([sys.executable, __file__, "--child"], env=env, timeout=300)
        if done.returncode != 0:
            return done.returncode
    for name in (
        "tray-menu.png",
        "panel.png",
        "activity.png",
        "sessions.png",
        "settings.png",
        "settings-errors.png",
        "settings-bad-colour.png",
        "settings-restart.png",
    ):
        print(f"wrote {OUT / name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(child() if "--child" in sys.argv else parent())
