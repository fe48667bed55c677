"""Helpers of the hostile-corpus tests: the verdict a corpus program expects (its ``# expect:``
header) and a network canary that counts connections to the host."""

from __future__ import annotations

import re
import socket
import threading
from pathlib import Path


def expected(path: Path) -> str:
    match = re.search(r"^# expect: (\w+)", path.read_text(), re.M)
    assert match, f"{path.name} has no '# expect:' header"
    return match.group(1)


class Listener:
    """A TCP listener on the host's loopback that records any connection (a network canary)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self._stop = False
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self._stop = True
        self._thread.join(timeout=2)
        self.sock.close()
