"""The manifest of what insync created on a host, so ``down`` removes that and nothing else.

``up`` records every path it is about to create under the host's ``base_dir``
in ``<base_dir>/.insync-created.json`` before creating it; ``down`` removes
only the paths recorded there, then the manifest itself, so a host it took
down keeps nothing of the cluster but the jar cache (kept for a warm ``up``).
A host without the manifest was not set up by insync (or its ``base_dir`` in
the inventory changed since), and a manifest naming a path outside
``base_dir`` was not written by insync: in both cases ``down`` refuses in one
line and removes nothing, because ``base_dir`` alone (a typo in an inventory)
must never decide what is deleted on a machine.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Sequence

from cluster.remote import Remote, sh, write_file
from harness.base.errors import ClusterError

MANIFEST = ".insync-created.json"


def manifest_path(base_dir: str) -> str:
    return f"{base_dir}/{MANIFEST}"


def inside(base_dir: str, path: str) -> bool:
    """Whether ``path`` is a normalised absolute path strictly below ``base_dir``."""
    return (
        path.startswith(base_dir + "/")
        and posixpath.normpath(path) == path
        and ".." not in path.split("/")
    )


def read(remote: Remote, base_dir: str) -> list[str]:
    """The paths the manifest on the host names; ``ClusterError`` (one line) when it is
    missing, unreadable, or names a path outside ``base_dir``."""
    where = manifest_path(base_dir)
    found = sh(remote, 'cat -- "$1" 2>/dev/null', where, check=False)
    if not found.ok or not found.stdout.strip():
        raise ClusterError(
            f"on {remote.name}: no {where}, so nothing there is known to be insync's; "
            "refusing to remove anything (remove what insync left by hand, or run "
            "`insync cluster up` there first)"
        )
    try:
        data = json.loads(found.stdout)
    except json.JSONDecodeError:
        data = None
    if not isinstance(data, list) or not all(isinstance(p, str) for p in data):
        raise ClusterError(f"on {remote.name}: {where} is not a list of paths; "
                           "refusing to remove anything")
    outside = [p for p in data if not inside(base_dir, p)]
    if outside:
        raise ClusterError(
            f"on {remote.name}: {where} names {outside[0]!r}, outside {base_dir}; "
            "refusing to remove anything"
        )
    return list(data)


def record(remote: Remote, base_dir: str, paths: Sequence[str]) -> None:
    """Add ``paths`` (each strictly below ``base_dir``) to the host's manifest."""
    bad = [p for p in paths if not inside(base_dir, p)]
    if bad:  # a programming error: insync creates only under base_dir
        raise ValueError(f"{bad[0]!r} is not under {base_dir}")
    try:
        known = read(remote, base_dir)
    except ClusterError:
        known = []
    merged = sorted(set(known) | set(paths))
    write_file(remote, manifest_path(base_dir), json.dumps(merged, indent=1) + "\n")


def remove(remote: Remote, base_dir: str, paths: Sequence[str]) -> None:
    """Remove ``paths`` (checked by :func:`read`): one ``rm`` argv, no shell."""
    if not all(inside(base_dir, p) for p in paths):
        raise ValueError(f"refusing to remove paths outside {base_dir}: {list(paths)}")
    if paths:
        remote.exec(["rm", "-rf", "--", *paths])


def forget(remote: Remote, base_dir: str) -> None:
    """Empty the manifest, once what it names is gone. The empty list stays as the
    host's mark of having been insync's: a ``down`` repeated after a partial one (a
    host that did not answer the first time) clears the others again without refusing,
    while a host insync never set up still has no manifest and is refused."""
    write_file(remote, manifest_path(base_dir), "[]\n")
