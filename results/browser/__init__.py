"""The run browser (``insync serve``): an index of stored runs and their files over HTTP.

- ``serve``: the loopback HTTP server (``make_server``) and what it refuses
- ``runs_index``: the runs under a results directory, described and searched
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from results.lazy import lazy

if TYPE_CHECKING:
    from results.browser.runs_index import RunInfo, scan
    from results.browser.serve import make_server

__all__ = ["RunInfo", "make_server", "scan"]

__getattr__ = lazy(__name__, {"RunInfo": "runs_index", "scan": "runs_index",
                              "make_server": "serve"})
