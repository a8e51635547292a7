"""GUI test fixtures: Qt offscreen, a qasync loop per test, Qt warnings fail, a real Service.

``QT_QPA_PLATFORM=offscreen`` is set here, before any QApplication exists (the
end-to-end test under Xvfb runs the app in a subprocess with its own display).
Async tests run on qasync's ``QEventLoop``, the loop the tray app runs on, so
Qt events and the service's asyncio work interleave exactly as in the app.
"""

from __future__ import annotations

import asyncio
import gc
import os
import weakref

os.environ["QT_QPA_PLATFORM"] = "offscreen"
os.environ.pop("BROWSERDECK_GUI_TRACE", None)

from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import shiboken6
from PySide6.QtCore import QCoreApplication, QEvent, QObject, QSocketNotifier, QThread
from PySide6.QtWidgets import QApplication, QWidget
from tests.support.net import free_port

from browserdeck import config
from browserdeck.config import Config
from browserdeck.gui.qtloop import QtEventLoop, pending_qt_timers

# Messages the offscreen platform prints for window-manager features it lacks; they are
# not problems in our code. Everything else at WARNING or above fails the test.
QT_LOG_IGNORE = (
    r"This plugin does not support propagateSizeHints\(\)",
    r"This plugin does not support raise\(\)",
    r"This plugin does not support grabbing the keyboard",
    # Tests force a tray icon on offscreen, which has no tray: Qt says so once.
    r"No such signal QPlatformNativeInterface::systemTrayWindowChanged",
)


def _qapp() -> QApplication:
    app = QApplication.instance()
    if isinstance(app, QApplication):
        return app
    from browserdeck.gui.qtapp import make_qapp

    return make_qapp(["browserdeck-tests"])


def _on_loop_error(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """A Qt event loop run from inside an asyncio task (``QApplication.processEvents()``,
    a modal ``exec()``, a QTest helper called from a coroutine) runs other tasks'
    wakeups re-entrantly; asyncio refuses each ("Cannot enter into task") and that task
    never runs again: a silent hang, later, somewhere else (it once left Playwright's
    reader asleep, so the service never stopped). Record it on the loop, where
    ``wait_for`` fails at once naming the cause, and hand the refused wakeup back to
    the loop so that the test's teardown still ends."""
    exc = context.get("exception")
    handle = context.get("handle")
    if isinstance(exc, RuntimeError) and "Cannot enter into task" in str(exc):
        lost_wakeups(loop).append(str(exc))
        if isinstance(handle, asyncio.Handle):
            loop.call_soon(handle._callback, *handle._args, context=handle._context)
    loop.default_exception_handler(context)


def lost_wakeups(loop: asyncio.AbstractEventLoop) -> list[str]:
    """The wakeups refused on ``loop`` (kept on the loop: this conftest is imported twice,
    by pytest as ``conftest`` and by the tests as ``tests.gui.conftest``)."""
    found: list[str] | None = getattr(loop, "browserdeck_lost_wakeups", None)
    if found is None:
        found = []
        loop.browserdeck_lost_wakeups = found
    return found


# Every loop made for a test, to check at its teardown that the closed loop left no Qt
# timer behind (weak: a closed loop must still be freed as soon as nothing holds it).
_LOOPS: weakref.WeakSet[QtEventLoop] = weakref.WeakSet()


def _qasync_loop() -> asyncio.AbstractEventLoop:
    loop = QtEventLoop(_qapp())
    loop.set_exception_handler(_on_loop_error)
    _LOOPS.add(loop)
    return loop


def pytest_asyncio_loop_factories(config: Any, item: Any) -> dict[str, Callable[[], Any]]:
    """Async GUI tests run on qasync's loop, as the app does."""
    return {"qasync": _qasync_loop}


def pytest_collection_modifyitems(config: Any, items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.qt_log_level_fail("WARNING"))
            item.add_marker(pytest.mark.qt_log_ignore(*QT_LOG_IGNORE))


@pytest.fixture(scope="session")
def qapp() -> QApplication:
    """pytest-qt's qapp, made the way the app makes it (name, style, no quit on last window)."""
    return _qapp()


@pytest.fixture(autouse=True)
def _gui_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    # Autostart entries land in a temp XDG dir, never in the real ~/.config/autostart.
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.delenv("BROWSERDECK_GUI_TRACE", raising=False)
    yield
    leaks = qt_leftovers()
    if leaks:
        pytest.fail(
            "this test left Qt objects behind (deleted now, in the Qt thread): "
            + "; ".join(leaks)
            + ". Left to Python's garbage collector, which may run in any thread, such an "
            "object is deleted in the wrong thread and a later processEvents() crashes. "
            "Close and delete what the test (or the app's shutdown) made.",
            pytrace=False,
        )


def _describe(obj: QObject) -> str:
    name = obj.metaObject().className()
    if obj.objectName():
        name += f" {obj.objectName()!r}"
    if isinstance(obj, QWidget) and obj.windowTitle():
        name += f" titled {obj.windowTitle()!r}"
    return name


def _dangerous_in_another_thread(obj: QObject) -> str | None:
    """Why deleting ``obj`` from a thread other than its own would crash, or None."""
    if isinstance(obj, QWidget):
        return "a widget"
    if pending_qt_timers(obj):
        return f"{pending_qt_timers(obj)} running Qt timer(s)"
    if isinstance(obj, QThread) and obj.isRunning():
        return "a running thread"
    if isinstance(obj, QSocketNotifier) and obj.isEnabled():
        return "an enabled socket notifier"
    return None


def _dangerous_garbage(garbage: list[Any]) -> list[str]:
    found = []
    for obj in garbage:
        try:
            if not (isinstance(obj, QObject) and shiboken6.isValid(obj)):
                continue
        except ReferenceError:  # a dead weakref proxy
            continue
        why = _dangerous_in_another_thread(obj)
        if why is not None:
            found.append(f"{_describe(obj)} with {why}, reachable only through a reference cycle")
    return found


def qt_leftovers() -> list[str]:
    """What a GUI test left that could crash a later test; each one is disposed of here.

    1. Top-level windows still alive (the app's shutdown deletes its panel and dialogs;
       qtbot deletes the widgets given to ``qtbot.addWidget``).
    2. Qt objects only Python's cyclic garbage collector would free (found with
       ``DEBUG_SAVEALL``) that must die in the Qt thread: widgets, objects with live
       timers, running threads, enabled socket notifiers. The collector runs wherever an
       allocation trips it, e.g. in an ``asyncio.to_thread`` worker of a later test.
    3. A closed test loop that still has Qt timers registered (see ``gui/qtloop``).
    """
    app = _qapp()
    found: list[str] = []
    # deleteLater() from outside any event loop is only run on an explicit request.
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    app.processEvents()
    for widget in app.topLevelWidgets():
        if widget.parent() is None:  # a popup of a live widget goes with its owner
            found.append(f"top-level window {_describe(widget)} (visible={widget.isVisible()})")
            widget.close()
            widget.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    debug = gc.get_debug()
    gc.set_debug(debug | gc.DEBUG_SAVEALL)
    try:
        gc.collect()
        garbage, gc.garbage[:] = list(gc.garbage), []
    finally:
        gc.set_debug(debug)
    found += _dangerous_garbage(garbage)
    garbage.clear()
    gc.collect()  # frees that garbage here, in the Qt thread
    for loop in list(_LOOPS):
        if loop.is_closed() and (left := loop.leftover_qt_timers()):
            found.append(f"a closed asyncio loop with {left} Qt timer(s) still registered")
    return found


def gui_config(**overrides: Any) -> Config:
    """The default profiles, every port free (parallel runs on one machine never collide)."""
    cfg = config.default_config()
    cfg.control_port = free_port()
    cfg.relay_port = free_port()
    cfg.profiles["agent"].cdp_port = free_port()
    cfg.no_sandbox = os.geteuid() == 0 if hasattr(os, "geteuid") else False
    for key, value in overrides.items():
        setattr(cfg, key, value)
    return cfg


@pytest.fixture
def saved_config(bd_home: Path, chromium_path: str, monkeypatch: pytest.MonkeyPatch) -> Config:
    monkeypatch.setenv("BROWSERDECK_CHROME", chromium_path)
    cfg = gui_config()
    config.save(cfg)
    return cfg


async def wait_for(
    predicate: Callable[[], Any], timeout: float = 20.0, what: str = "condition"
) -> Any:
    """Spin the (qasync) loop until ``predicate()`` is truthy; Qt events run meanwhile."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        if lost := lost_wakeups(loop):
            raise AssertionError(
                "a Qt event loop ran inside an asyncio task, which made asyncio refuse "
                f"another task's wakeup (run Qt input and event processing with in_qt): {lost[0]}"
            )
        value = predicate()
        if value:
            return value
        if loop.time() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        await asyncio.sleep(0.02)


async def in_qt(action: Callable[[], Any]) -> Any:
    """Run ``action`` from the Qt event loop, not inside the current asyncio task.

    QTest/qtbot input helpers may process events; called straight from a coroutine
    that would run other asyncio tasks re-entrantly ("Cannot enter into task ... while
    another task is being executed"). From a zero-timer they run as Qt would run them.
    """
    from PySide6.QtCore import QTimer

    future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

    def run() -> None:
        try:
            result = action()
        except BaseException as exc:  # handed to the awaiting test
            if not future.done():
                future.set_exception(exc)
        else:
            if not future.done():
                future.set_result(result)

    QTimer.singleShot(0, run)
    return await future


@asynccontextmanager
async def running_tray(qapp: QApplication, **kwargs: Any) -> AsyncIterator[Any]:
    """A TrayApp running a real Service (headless Chromium) on this test's qasync loop.

    A context manager used inside the test, not an async fixture: qasync runs each
    ``run_until_complete`` as one ``QApplication.exec()``, and every exec() that returns
    emits ``aboutToQuit`` (which the app rightly treats as Quit). Fixture setup and the
    test body are separate run_until_complete calls, so the app must live inside one.
    """
    from browserdeck.gui.app import TrayApp
    from browserdeck.master import build_service, mcp_client_config

    kwargs.setdefault("tray", True)
    kwargs.setdefault("mcp_config", mcp_client_config)
    kwargs.setdefault("service_factory", lambda: build_service(force_headless=True))
    app = TrayApp(qapp, **kwargs)
    task = asyncio.ensure_future(app.run())
    try:
        await wait_for(
            lambda: (
                (app.service is not None and app.service.started)
                or app.model.service_error
                or task.done()
            ),
            # Generous: six engineers share two cores; a loaded machine starts slowly.
            timeout=90,
            what="the service to start",
        )
        if task.done():
            task.result()
        assert app.model.service_error is None, app.model.service_error
        await app.model.refresh_now()
        yield app
    finally:
        app.request_quit()
        await asyncio.wait_for(task, 30)
        app.deleteLater()
    lost = lost_wakeups(asyncio.get_running_loop())
    assert not lost, f"a Qt event loop ran inside an asyncio task: {lost[0]}"
