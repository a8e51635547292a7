"""Service events (plain-Python signals) re-emitted as Qt signals.

The core never imports Qt, so the GUI subscribes to ``Deck.events`` here and
forwards each event as a Qt signal. Under qasync the asyncio loop runs on the Qt
thread, so events arrive on the GUI thread; if one is ever sent from another
thread, Qt queues the emission to the receivers' thread, so this stays safe.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Signal

from browserdeck.events import ActivityEntry, ApprovalEvent, ServiceEvents


class ServiceBridge(QObject):
    """One Qt signal per ``ServiceEvents`` signal, same meaning, same arguments."""

    profileState = Signal(str, str, object)  # profile, state, detail (str | None)
    tabsChanged = Signal(str)  # profile
    agentTab = Signal(str, str, object)  # profile, targetId, client (str | None)
    extension = Signal(str, bool, object)  # profile, connected, detail (str | None)
    apiCall = Signal(object)  # events.ActivityEntry (frozen: safe to hand to another thread)
    notice = Signal(str, str, str)  # level, title, message
    approval = Signal(object)  # events.ApprovalEvent: waiting for the person, then decided
    configChanged = Signal()
    recording = Signal(object, object)  # session id | None, step number | None
    takeover = Signal(str, bool)  # profile, taken over by the user

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._events: ServiceEvents | None = None

    def attach(self, events: ServiceEvents) -> None:
        """Listen to ``events`` (a new Service after a restart replaces the old one)."""
        self.detach()
        self._events = events
        events.profile_state.connect(self._on_profile_state)
        events.tabs_changed.connect(self._on_tabs_changed)
        events.agent_tab.connect(self._on_agent_tab)
        events.extension.connect(self._on_extension)
        events.api_call.connect(self._on_api_call)
        events.notice.connect(self._on_notice)
        events.approval.connect(self._on_approval)
        events.config_changed.connect(self._on_config_changed)
        events.recording.connect(self._on_recording)
        events.takeover.connect(self._on_takeover)

    def detach(self) -> None:
        events, self._events = self._events, None
        if events is None:
            return
        events.profile_state.disconnect(self._on_profile_state)
        events.tabs_changed.disconnect(self._on_tabs_changed)
        events.agent_tab.disconnect(self._on_agent_tab)
        events.extension.disconnect(self._on_extension)
        events.api_call.disconnect(self._on_api_call)
        events.notice.disconnect(self._on_notice)
        events.approval.disconnect(self._on_approval)
        events.config_changed.disconnect(self._on_config_changed)
        events.recording.disconnect(self._on_recording)
        events.takeover.disconnect(self._on_takeover)

    # Receivers take **kwargs loosely: a field added to an event later must not break us.
    def _on_profile_state(
        self, *, profile: str, state: str, detail: str | None = None, **_: Any
    ) -> None:
        self.profileState.emit(profile, state, detail)

    def _on_tabs_changed(self, *, profile: str, **_: Any) -> None:
        self.tabsChanged.emit(profile)

    def _on_agent_tab(
        self, *, profile: str, target_id: str, client: str | None = None, **_: Any
    ) -> None:
        self.agentTab.emit(profile, target_id, client)

    def _on_extension(
        self, *, profile: str, connected: bool, detail: str | None = None, **_: Any
    ) -> None:
        self.extension.emit(profile, connected, detail)

    def _on_api_call(self, *, entry: ActivityEntry, **_: Any) -> None:
        self.apiCall.emit(entry)

    def _on_notice(self, *, level: str, title: str, message: str, **_: Any) -> None:
        self.notice.emit(level, title, message)

    def _on_approval(self, *, entry: ApprovalEvent, **_: Any) -> None:
        self.approval.emit(entry)

    def _on_config_changed(self, **_: Any) -> None:
        self.configChanged.emit()

    def _on_recording(self, *, session: str | None = None, step: int | None = None, **_: Any) -> None:
        self.recording.emit(session, step)

    def _on_takeover(self, *, profile: str, taken: bool, **_: Any) -> None:
        self.takeover.emit(profile, taken)
