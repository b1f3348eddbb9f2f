"""Product files speak of the product: no tracked file names an internal working
session by number. The story of how a thing came to be goes in commit messages; a
file says what is and why. (Kafka's own ZooKeeper and consumer sessions are words
of the product, and never read "session" followed by a number.)
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORKING_SESSION = re.compile(r"\bsession [0-9]", re.I)
#: Not the repository's own files: build products, environments, stored runs.
SKIP_DIRS = {".git", ".venv", "node_modules", "artifacts", "__pycache__", ".mypy_cache",
             ".ruff_cache", ".pytest_cache", ".hypothesis"}


def tracked_files() -> Iterator[Path]:
    """Git's tracked files; a checkout without git (an unpacked archive) walks the tree."""
    try:
        out = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], check=True,
                             capture_output=True).stdout
    except (OSError, subprocess.CalledProcessError):
        for top, dirs, files in os.walk(ROOT):
            dirs[:] = [d for d in dirs if d not in SKIP_DIRS]
            yield from (Path(top) / f for f in files)
        return
    yield from (ROOT / p for p in out.decode().split("\0") if p)


def test_no_tracked_file_names_a_working_session() -> None:
    hits = []
    for path in tracked_files():
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError, IsADirectoryError):
            continue  # binary, or deleted in the work tree
        for n, line in enumerate(text.splitlines(), 1):
            if WORKING_SESSION.search(line):
                hits.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()[:100]}")
    assert not hits, "files that name a working session:\n" + "\n".join(hits)


def test_the_pattern_finds_what_it_is_for() -> None:
    assert WORKING_SESSION.search("measured in Session " + "21, on main")  # split: not a hit here
    assert not WORKING_SESSION.search("until its ZooKeeper session expires")
    assert not WORKING_SESSION.search("zookeeper.session.timeout.ms=18000")
