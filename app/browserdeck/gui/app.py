"""The tray app: QApplication on a qasync loop, running the same Service as ``browserdeck serve``.

Lifecycle (one path, whatever ends it)::

    launch.run(args)                second launch? -> ask the running tray to show its panel;
                                    a service an MCP client started? -> take it over
      └─ TrayApp.run()              tray icon, instance server, Service.start()
           await quit_requested     set by Quit, SIGTERM/SIGINT, aboutToQuit, or closing the
                                    window when there is no tray
           TrayApp.shutdown()       dialogs closed, tray hidden, Service.stop() (browsers
                                    closed, servers stopped), instance server closed

No coroutine ever calls ``exec()`` on a dialog: dialogs are opened with
``show()``/``open()`` and report back through signals (qasync re-entrancy). The
QApplication is made in ``qtapp.py``, the quit signals are wired in ``quitsignals.py``, and
the windows it opens live apart (panel, settings, pairing, screenshot).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QSystemTrayIcon, QWidget

from browserdeck import __version__, autostart, config
from browserdeck.config import Config
from browserdeck.deck import Deck
from browserdeck.errors import BrowserdeckError
from browserdeck.gui import instance, keep, takeover, trace
from browserdeck.gui.approval import ApprovalDesk
from browserdeck.gui.bridge import ServiceBridge
from browserdeck.gui.model import DeckModel
from browserdeck.gui.panel import StatusPanel
from browserdeck.gui.quitsignals import install_quit_signals
from browserdeck.gui.settings import SettingsDialog
from browserdeck.gui.settings.restart import saved_words
from browserdeck.gui.takeover import McpService
from browserdeck.gui.tray import TrayController
from browserdeck.reconfig import Applied
from browserdeck.util import aio, paths

if TYPE_CHECKING:
    from browserdeck.deck import AgentsStopped
    from browserdeck.reconfig import Restart
    from browserdeck.service import Service

log = logging.getLogger(__name__)


class TrayApp(QObject):
    """Owns the service, the tray, the panel and dialogs; one shutdown path."""

    def __init__(
        self,
        qapp: QApplication,
        *,
        service_factory: Callable[[], Service],
        mcp_config: Callable[[], str],
        tray: bool | None = None,
        show_panel: bool = False,
        show_settings: bool = False,
        take_over: McpService | None = None,
    ) -> None:
        super().__init__()
        self.qapp = qapp
        self.service_factory = service_factory
        # The `mcpServers` JSON for "Copy MCP config", from the composition root (MCP is
        # not the GUI's business: it never imports mcpserver/).
        self.mcp_config = mcp_config
        self.tray_available = QSystemTrayIcon.isSystemTrayAvailable() if tray is None else tray
        self.show_panel_at_start = show_panel or not self.tray_available
        self.show_settings_at_start = show_settings
        # A service `browserdeck mcp` started before us: ours replaces it (gui/takeover.py).
        self.take_over = take_over
        self.bridge = ServiceBridge(self)
        self.model = DeckModel(self.bridge, self)
        self.approvals = ApprovalDesk(self.model, self)  # asks before agents' risky actions
        self.model.activity.extend(keep.activity())  # the recent activity of the last run
        self.service: Service | None = None
        self._starting: Service | None = None  # while start_service() waits for it
        self.tray: TrayController | None = None
        self.panel: StatusPanel | None = None
        self.settings_dialog: SettingsDialog | None = None
        self.dialogs: list[QWidget] = []
        self.instance_server = instance.InstanceServer(self.handle_command, self)
        self.quit_requested: asyncio.Event | None = None
        self.exit_code = 0
        # What a person was told (tray balloons / status bar), newest last.
        self.notices: deque[tuple[float, str, str, str]] = deque(maxlen=50)
        self._shutdown_task: asyncio.Task[None] | None = None
        self._signal_cleanup: list[Callable[[], None]] = []
        self.bridge.notice.connect(self.notify)
        self.bridge.extension.connect(self._on_extension)
        self.bridge.configChanged.connect(self._on_config_changed)
        self.model.actionFailed.connect(lambda title, msg: self.notify("error", title, msg))

    # --- lifecycle ---------------------------------------------------------------------
    async def run(self) -> int:
        """Start, wait for a quit request, shut down. Returns the exit code."""
        self.quit_requested = asyncio.Event()
        self._signal_cleanup = install_quit_signals(self.request_quit, self)
        self.qapp.aboutToQuit.connect(self.request_quit)
        self.instance_server.listen()
        if self.tray_available:
            self.tray = TrayController(self.model, self)
            self._connect_tray(self.tray)
            self.tray.show()
            self.tray.watch_embedding()
        else:
            trace.emit("tray-unavailable")
        if self.show_panel_at_start:
            self.show_panel()
        quitting = asyncio.ensure_future(self.quit_requested.wait())
        starting = asyncio.ensure_future(self.start_service())
        try:
            # Quit is heard while the service still starts (a browser or a driver slow to
            # come up): the shutdown then calls the start off rather than wait for it.
            await asyncio.wait([starting, quitting], return_when=asyncio.FIRST_COMPLETED)
            if starting.done():
                starting.result()  # what start_service does not catch ends the app, as before
                if self.show_settings_at_start:
                    self.show_settings()
            await quitting
        finally:
            quitting.cancel()
            await self.shutdown()
            await asyncio.wait([starting])
        starting.result()  # raised even when Quit came first
        return self.exit_code

    async def start_service(self) -> bool:
        """Start a fresh Service (also used by Retry after a failed start)."""
        if self.model.running:
            return True
        if self._shutdown_task is not None or self._starting is not None:
            return False  # quitting (nothing may outlive the shutdown), or one is starting
        take_over, self.take_over = self.take_over, None
        if take_over is not None and not await self._take_over(take_over):
            return False
        # The composition root's part: build and start the Service, then hand the views
        # its front door only (they never read the Service itself).
        service = self.service_factory()
        deck = Deck(service)
        self.model.set_deck(None)
        self.model.service_error = None
        self.bridge.attach(deck.events)  # hear notices sent during start
        self._starting = service
        try:
            await service.start()
        except BrowserdeckError as exc:
            self.service = None
            if exc.code == "stopped_while_starting":
                return False  # Quit called it off: no failure to tell of
            self.model.set_deck(None, str(exc))
            self.notify("error", "browserdeck could not start", str(exc))
            trace.emit("service-failed", error=str(exc))
            self._sync_autostart_from_disk()
            return False
        except Exception as exc:
            log.exception("starting the service")
            self.service = None
            self.model.set_deck(None, f"{type(exc).__name__}: {exc}")
            self.notify("error", "browserdeck could not start", f"{type(exc).__name__}: {exc}")
            trace.emit("service-failed", error=str(exc))
            return False
        finally:
            if take_over is not None:
                takeover.end()  # a `browserdeck mcp` needing a service may start one now
            # Kept while a shutdown is under way: that task may not have read it yet.
            if self._starting is service and self._shutdown_task is None:
                self._starting = None
        if self._shutdown_task is not None:
            return False  # started just as Quit came: the shutdown stops it
        self.service = service
        self.model.set_deck(deck)
        self._sync_autostart(deck.settings())
        if self.panel is not None:
            self.panel.update_banner()
        trace.emit("service-started", url=deck.overview().api_url, pid=os.getpid())
        if take_over is not None:
            self.notify(
                "info",
                "browserdeck runs in this app now",
                "An agent had started browserdeck without its window; this app took it "
                "over. Agents keep their sessions; the tabs they had open were closed.",
            )
        return True

    async def _take_over(self, old: McpService) -> bool:
        """Stop the service an MCP client started, so that ours takes its place."""
        trace.emit("takeover-begin", pid=old.pid)
        problem = await asyncio.to_thread(takeover.begin, old)
        if problem is None:
            trace.emit("takeover-stopped", pid=old.pid)
            return True
        message = (
            f"browserdeck already runs for an agent (pid {old.pid}), and {problem}. "
            f"End that process (kill {old.pid}), then start this app again."
        )
        self.model.set_deck(None, message)
        self.notify("error", "browserdeck could not start", message)
        trace.emit("service-failed", error=message)
        return False

    def request_quit(self, code: int = 0) -> None:
        """Quit from anywhere (menu, signal, aboutToQuit, closing the no-tray window)."""
        if self.quit_requested is not None and not self.quit_requested.is_set():
            trace.emit("quit-requested")
            self.exit_code = code
            self.quit_requested.set()

    async def shutdown(self) -> None:
        """The one shutdown path; safe to call twice (the second call waits for the first)."""
        if self._shutdown_task is None:
            self._shutdown_task = asyncio.ensure_future(self._shutdown())
        await asyncio.shield(self._shutdown_task)

    async def _shutdown(self) -> None:
        trace.emit("shutdown-begin")
        for cleanup in self._signal_cleanup:
            with contextlib.suppress(Exception):
                cleanup()
        self._signal_cleanup.clear()
        # Windows are deleted here, in the Qt thread, not left to Python's garbage
        # collector: it may run in any thread, and a QWidget (or a QObject with a live
        # timer) deleted from another thread crashes a later processEvents (see qtloop).
        # The dialogs delete themselves on close (WA_DeleteOnClose).
        for dialog in list(self.dialogs):
            with contextlib.suppress(RuntimeError):  # already deleted by Qt
                dialog.close()
        if self.settings_dialog is not None:
            with contextlib.suppress(RuntimeError):
                self.settings_dialog.close()
        panel, self.panel = self.panel, None
        keep.save_activity(list(self.model.activity))
        if panel is not None:
            if panel.isVisible():
                panel.keep_layout()
            await panel.shot_pane.stop_live()  # its live view closes before the browser
            panel.hide()
            panel.deleteLater()
        if self.tray is not None:
            self.tray.dispose()
        self.approvals.close()
        self.model.close()
        self.instance_server.close()
        # A service still starting is stopped too: its start is called off.
        service, self.service = self.service or self._starting, None
        if service is not None:
            try:
                await service.stop()
            except Exception:
                log.exception("stopping the service")
        trace.emit("shutdown-done")

    # --- second launch -----------------------------------------------------------------
    def handle_command(self, command: str) -> str:
        if command == "show-panel":
            QTimer.singleShot(0, self.show_panel)
            return "ok"
        if command == "show-settings":
            QTimer.singleShot(0, self.show_settings)
            return "ok"
        if command == "quit":
            QTimer.singleShot(0, self.request_quit)
            return "ok"
        return json.dumps(self.status())

    def status(self) -> dict[str, Any]:
        tray = self.tray
        overview = self.model.overview()
        return {
            "pid": os.getpid(),
            "version": __version__,
            "url": overview.api_url if overview is not None else None,
            "serviceStarted": bool(overview and overview.started),
            "serviceError": self.model.service_error,
            "trayAvailable": self.tray_available,
            "trayVisible": bool(tray and tray.icon.isVisible()),
            "trayGeometry": tray.icon_rect() if tray else None,
            "panelVisible": bool(self.panel and self.panel.isVisible()),
            "trayState": self.model.tray_state(),
            "trayTrouble": self.model.trouble_elsewhere(),
        }

    # --- tray ---------------------------------------------------------------------------
    def _connect_tray(self, tray: TrayController) -> None:
        tray.openPanelRequested.connect(self.show_panel)
        tray.settingsRequested.connect(self.show_settings)
        tray.pairRequested.connect(self.show_pairing)
        tray.copyTokenRequested.connect(self.copy_token)
        tray.copyMcpRequested.connect(self.copy_mcp_config)
        tray.openLogsRequested.connect(self.open_logs)
        tray.retryRequested.connect(self.retry)
        tray.stopAgentsRequested.connect(self.stop_all_agents)
        tray.quitRequested.connect(self.request_quit)

    # --- panel and dialogs --------------------------------------------------------------
    def show_panel(self) -> StatusPanel:
        if self.panel is None:
            panel = StatusPanel(self.model, tray_available=self.tray_available)
            panel.settingsRequested.connect(
                lambda: self.show_settings(profile=panel.selected_profile)
            )
            panel.retryRequested.connect(self.retry)
            panel.quitRequested.connect(self.request_quit)
            panel.firstPaint.connect(lambda: trace.emit("panel-painted"))
            self.panel = panel
        self.panel.present()
        trace.emit("panel-shown")
        return self.panel

    def show_settings(self, profile: str | None = None) -> SettingsDialog:
        if self.settings_dialog is not None:
            with contextlib.suppress(RuntimeError):
                if profile:
                    self.settings_dialog.select_profile(profile)
                self.settings_dialog.show()
                self.settings_dialog.raise_()
                self.settings_dialog.activateWindow()
                return self.settings_dialog
        deck = self.model.deck
        current = deck.settings() if deck is not None else config.load().config
        dialog = SettingsDialog(
            current, self.apply_settings, running=deck is not None, restarts=self.restarts
        )
        dialog.destroyed.connect(lambda *_: setattr(self, "settings_dialog", None))
        dialog.saved.connect(
            lambda applied: self.notify("info", "Settings saved", saved_words(applied))
        )
        self.settings_dialog = dialog
        if profile:
            dialog.select_profile(profile)  # from the panel: the profile selected there
        dialog.show()
        dialog.raise_()
        dialog.activateWindow()
        return dialog

    async def restarts(self, candidate: Config) -> list[Restart]:
        """The running browsers saving ``candidate`` would restart (none when none runs)."""
        deck = self.model.deck
        return await deck.restarts(candidate) if deck is not None and deck.started else []

    async def apply_settings(self, candidate: Config, deleted: list[str], restart: bool) -> Applied:
        """Save and apply live; deleted managed profiles also lose their browser data."""
        deck = self.model.deck
        if deck is None or not deck.started:
            config.check_consistency(candidate)
            config.save(candidate)
            self._sync_autostart(candidate)
            return Applied()
        return await deck.apply_config(self.model.caller(), candidate, deleted, restart=restart)

    def show_pairing(self) -> QWidget | None:
        from browserdeck.gui.pairing import PairDialog

        deck = self.model.deck
        if deck is None:
            return None
        pairing = deck.pairing()
        dialog = PairDialog(
            relay_port=pairing.relay_port,
            token=pairing.token,
            color=pairing.color,
            profile=pairing.profile,
        )
        self._keep(dialog)
        dialog.show()
        dialog.raise_()
        return dialog

    def _keep(self, widget: QWidget) -> None:
        self.dialogs.append(widget)
        widget.destroyed.connect(
            lambda *_: self.dialogs.remove(widget) if widget in self.dialogs else None
        )

    def copy_token(self) -> None:
        deck = self.model.deck
        if deck is None:
            return
        QGuiApplication.clipboard().setText(deck.api_token())
        self.notify(
            "info",
            "API token copied",
            "Send it as 'Authorization: Bearer <token>' to " + deck.overview().api_url,
        )

    def copy_mcp_config(self) -> None:
        QGuiApplication.clipboard().setText(self.mcp_config())
        self.notify(
            "info",
            "MCP config copied",
            "Paste it into your MCP client's config (Claude Desktop, Cursor, …).",
        )

    def open_logs(self) -> asyncio.Task[None]:
        """Open the logs folder; a notice says where it is when it could not be opened."""
        from browserdeck.gui.pairing import open_path

        folder = paths.log_dir()

        async def go() -> None:
            why = await open_path(folder)
            if why is None:
                self.notify("info", "Logs folder", f"Opened {folder}")
            else:
                # Never a silent no-op: say where the logs are, so they can be opened by hand.
                self.notify(
                    "warning",
                    "Could not open the logs folder",
                    f"{why[:1].upper()}{why[1:]}. The logs are in {folder} "
                    "(the command “browserdeck paths” prints it too).",
                )

        return aio.create_task(go(), name="gui-open-logs")

    def stop_all_agents(self) -> None:
        """One click: every agent session ends, agent tabs close, Chrome tabs are unshared."""
        if self.model.deck is None:
            return

        def done(did: AgentsStopped) -> None:
            title = "All agents stopped" if did.anything else "No agents to stop"
            self.notify("info", title, did.said())

        self.model.stop_all_agents(done)

    def retry(self) -> None:
        aio.create_task(self.start_service(), name="gui-retry-start")

    # --- notifications ------------------------------------------------------------------
    def notify(self, level: str, title: str, message: str) -> None:
        log.log(logging.ERROR if level == "error" else logging.INFO, "%s: %s", title, message)
        self.notices.append((time.time(), level, title, message))
        if self.tray is not None and self.tray.icon.isVisible():
            self.tray.notify(title, message, level)
        elif self.panel is not None:
            self.panel.show_notice(title, message, level)
        trace.emit("notice", level=level, title=title, message=message)

    def _on_extension(self, profile: str, connected: bool, detail: object) -> None:
        if connected:
            self.notify(
                "info",
                f"{profile}: Chrome connected",
                "Agents can now use the tabs you share with the extension.",
            )
        else:
            self.notify(
                "warning",
                f"{profile}: Chrome disconnected",
                str(detail) if detail else "The extension is no longer connected.",
            )

    # --- autostart ----------------------------------------------------------------------
    def _on_config_changed(self) -> None:
        if self.model.deck is not None:
            self._sync_autostart(self.model.deck.settings())
        if self.tray is not None:
            self.tray.rebuild()

    def _sync_autostart(self, cfg: Config) -> None:
        try:
            autostart.sync(cfg.start_at_login)
        except OSError as exc:
            self.notify(
                "warning",
                "Start at login not changed",
                f"{exc}; the entry is {autostart.entry().location}",
            )

    def _sync_autostart_from_disk(self) -> None:
        with contextlib.suppress(Exception):
            self._sync_autostart(config.load().config)
