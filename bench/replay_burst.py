"""A burst of connections at the replay server: listen backlog 128 (the old value) vs 1024.

Run: python bench/replay_burst.py   (a few seconds)

400 clients connect at once (all sockets opened before any request is sent, as a classroom of
notebooks or a load probe does), then each sends `GET /v1/models` and reads the status line. With
a backlog smaller than the burst, the kernel drops the overflowing connection attempts and the
clients retry after about a second; with a backlog above the burst every connection is queued.
Prints, per backlog: failures, the slowest request, and the wall time of the whole burst.
"""

from __future__ import annotations

import socket
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from helpers.replay import ReplayServer  # noqa: E402
from helpers.replay.server import QuietThreadingServer  # noqa: E402
from tests.test_replay_fixtures import interactions, write_cassette  # noqa: E402

CLIENTS = 400
REQUEST = b"GET /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"


def burst(folder: Path, backlog: int) -> tuple[int, float, float]:
    """Failures, slowest request (s) and total wall time (s) of one burst at `backlog`."""
    QuietThreadingServer.request_queue_size = backlog
    server = ReplayServer(folder).start()
    port = int(server.url.rsplit(":", 1)[1])
    results: list[tuple[bool, float]] = []
    start = time.perf_counter()
    sockets = []
    for _ in range(CLIENTS):
        sock = socket.socket()
        sock.setblocking(False)
        sock.connect_ex(("127.0.0.1", port))
        sockets.append(sock)

    def ask(sock: socket.socket) -> None:
        sock.setblocking(True)
        sock.settimeout(10)
        began = time.perf_counter()
        try:
            sock.sendall(REQUEST)
            ok = sock.recv(12).startswith(b"HTTP/1.1 200")
        except OSError:
            ok = False
        results.append((ok, time.perf_counter() - began))
        sock.close()

    threads = [threading.Thread(target=ask, args=(sock,)) for sock in sockets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    total = time.perf_counter() - start
    server.stop()
    return sum(not ok for ok, _ in results), max(t for _, t in results), total


def main() -> None:
    """Run the burst at both backlogs and print one line each."""
    folder = Path(tempfile.mkdtemp())
    write_cassette(folder, "lesson", interactions())
    original = QuietThreadingServer.request_queue_size
    try:
        for backlog in (128, 1024):
            failed, slowest, total = burst(folder, backlog)
            print(
                f"backlog {backlog:>4}: {failed} of {CLIENTS} failed, slowest request "
                f"{slowest:.2f} s, whole burst {total:.2f} s"
            )
    finally:
        QuietThreadingServer.request_queue_size = original


if __name__ == "__main__":
    main()
