"""chrome/procs.py on real processes and sockets: liveness, listeners and their owners."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

from browserdeck.chrome import procs


def test_a_zombie_is_not_alive_and_a_running_child_is() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert procs.pid_alive(child.pid)
        assert procs.parent_pid(child.pid) == os.getpid()
        assert procs.owned_by_us(child.pid)
        # Popen returns once exec() has begun; the new argv shows a moment later.
        deadline = time.monotonic() + 10
        while (argv := procs.process_cmdline(child.pid)) is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert argv is not None and argv[-1] == "import time; time.sleep(30)"
        child.kill()
        # Not reaped yet: the kernel keeps it as a zombie until we wait() for it.
        deadline = time.monotonic() + 10
        while procs.pid_alive(child.pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not procs.pid_alive(child.pid)
    finally:
        child.kill()
        child.wait()
    assert not procs.pid_alive(child.pid)
    assert procs.process_cmdline(child.pid) is None


def test_listeners_on_loopback_and_wildcard_name_their_process() -> None:
    with socket.socket() as loop, socket.socket(socket.AF_INET6) as wild:
        loop.bind(("127.0.0.1", 0))
        loop.listen()
        port = loop.getsockname()[1]
        listeners = procs.loopback_listeners(port)
        assert listeners == [procs.Listener(os.getpid(), os.getuid())]
        assert procs.listening_pids(port) == [os.getpid()]
        # A wildcard socket also takes connections to loopback; a connected one does not count.
        wild.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        wild.bind(("::", port))
        wild.listen()
        with socket.create_connection(("127.0.0.1", port)):
            listeners = procs.loopback_listeners(port)
            assert listeners is not None and len(listeners) == 2
    assert procs.loopback_listeners(port) == []
    assert procs.listening_pids(port) == []
