"""``insync serve`` on 127.0.0.1, an ephemeral port, in a thread: one way for every serve test."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from results.browser.serve import ResultsServer, make_server


@contextmanager
def serving(root: Path) -> Iterator[ResultsServer]:
    """A results browser over ``root`` until the block ends, then shut down and joined."""
    srv = make_server(root, port=0)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield srv
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join(5)
