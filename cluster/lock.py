"""One command per cluster name: an exclusive ``flock`` held while a command owns a cluster.

Why: two insync commands given the same ``--cluster-name`` on one engine clobber
each other (a second ``insync scenario run`` rebuilt the containers of a running
``insync run``, which then ended with a wrong verdict). Every command that
creates, changes, faults or removes a cluster holds :func:`cluster_lock` for its
name from just after its input is checked until it ends; read-only commands
(``cluster status|logs``, ``check``, ``report``, ...) take none.

- The lock is a file ``<state>/insync/locks/<name>.lock``, ``<state>`` being
  ``$XDG_STATE_HOME`` or ``~/.local/state``: per user, made when missing.
- It is taken without waiting (``LOCK_NB``): a busy cluster is
  :class:`~harness.base.errors.EnvironmentProblem` (exit 69) naming the holder,
  whose pid and argv it writes into the file once it holds it.
- The kernel drops a ``flock`` when its holder dies, however it dies: no stale
  lock to clean up. The files stay (removing one would let two processes hold
  "the same" lock on two different files).
- Within one process the lock is re-entrant: ``insync matrix`` holds it around
  all its runs, and each ``harness.run.run`` inside takes it again for free.
- ``insync cluster down --all`` removes every cluster: it holds
  :func:`every_cluster_lock`, exclusive on one more file, which every
  :func:`cluster_lock` holds shared, so it waits for no one and no one starts
  under it. That file's name holds a ``_``, which no cluster name may.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from cluster.spec import check_name
from harness.base.errors import EnvironmentProblem

#: The lock ``down --all`` holds exclusively and every cluster lock holds shared.
EVERY = "_every-cluster"
SUFFIX = ".lock"


def lock_dir() -> Path:
    """``$XDG_STATE_HOME/insync/locks``, or ``~/.local/state/insync/locks`` (the XDG
    default, also when the variable holds a relative path, which XDG says to ignore)."""
    state = os.environ.get("XDG_STATE_HOME", "")
    base = Path(state) if os.path.isabs(state) else Path.home() / ".local" / "state"
    return base / "insync" / "locks"


def _path(key: str) -> Path:
    return lock_dir() / f"{key}{SUFFIX}"


def holder(path: Path) -> str:
    """Who wrote ``path`` last: ``pid 1234 (insync run --nodes 3) since 12:00:01 UTC``."""
    try:
        record = json.loads(path.read_text() or "{}")
        pid, argv, since = int(record["pid"]), list(record["argv"]), str(record["since"])
    except (OSError, ValueError, KeyError, TypeError):
        return "another insync command"  # it holds the lock but has not written itself yet
    return f"pid {pid} ({' '.join(['insync', *argv[1:]])}) since {since}"


@dataclass
class _Held:
    fd: int
    exclusive: bool
    depth: int = 1


_HELD: dict[str, _Held] = {}
_GUARD = threading.Lock()


def _acquire(key: str, *, exclusive: bool, argv: Sequence[str]) -> bool:
    """Take ``key``'s lock (again); False when another process holds it."""
    with _GUARD:
        held = _HELD.get(key)
        if held is not None:
            if exclusive and not held.exclusive:
                raise RuntimeError(f"lock {key!r} is held shared by this process")
            held.depth += 1
            return True
        path = _path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as err:
            raise EnvironmentProblem(
                f"cannot make the cluster lock {path}: {err.strerror or err}",
                hint="make that directory writable, or point XDG_STATE_HOME at one that is",
            ) from None
        try:
            fcntl.flock(fd, (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB)
        except OSError as err:
            os.close(fd)
            if err.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                return False
            raise
        if exclusive:  # a shared lock has many holders: none of them writes itself down
            record = {"pid": os.getpid(), "argv": list(argv),
                      "since": datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")}
            # the record only names the holder for a refusal's message: a full disk
            # leaves it empty ("another insync command"), the flock itself still holds
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)
                os.pwrite(fd, json.dumps(record).encode(), 0)
        _HELD[key] = _Held(fd, exclusive)
        return True


def _release(key: str) -> None:
    with _GUARD:
        held = _HELD[key]
        held.depth -= 1
        if held.depth:
            return
        del _HELD[key]
        if held.exclusive:
            with contextlib.suppress(OSError):  # the next reader must not name a holder
                os.ftruncate(held.fd, 0)          # that is gone
        os.close(held.fd)  # closing the last descriptor drops the flock


@contextmanager
def _holding(key: str, *, exclusive: bool, argv: Sequence[str],
             refusal: Callable[[], EnvironmentProblem]) -> Iterator[None]:
    """Hold ``key``; when another process does, raise ``refusal()`` (made only then, so
    that it names the holder of that moment)."""
    if not _acquire(key, exclusive=exclusive, argv=argv):
        raise refusal()
    try:
        yield
    finally:
        _release(key)


@contextmanager
def cluster_lock(name: str, argv: Sequence[str] | None = None) -> Iterator[None]:
    """Hold cluster ``name`` for this command (re-entrant within the process).

    ``argv`` (default: ``sys.argv``) is written into the lock file, so that a
    refused command can say which one holds it. Raises ``UsageError`` for a name
    no cluster may have, ``EnvironmentProblem`` when another process holds it.
    """
    check_name(name)
    argv = list(sys.argv if argv is None else argv)

    def removing() -> EnvironmentProblem:
        return EnvironmentProblem(
            f"cluster {name!r} is locked: every cluster is being removed by "
            f"{holder(_path(EVERY))}", hint="wait for it to end")

    def in_use() -> EnvironmentProblem:
        return EnvironmentProblem(
            f"cluster {name!r} is in use by {holder(_path(name))}",
            hint=f"wait for it to end, or pass --cluster-name NAME other than {name!r}")

    with (
        _holding(EVERY, exclusive=False, argv=argv, refusal=removing),
        _holding(name, exclusive=True, argv=argv, refusal=in_use),
    ):
        yield


def holders() -> list[str]:
    """``'insync' by pid 1234 (...)`` for each cluster some other process holds now."""
    found: list[str] = []
    where = lock_dir()
    for path in sorted(where.glob(f"*{SUFFIX}")) if where.is_dir() else []:
        name = path.name.removesuffix(SUFFIX)
        if name == EVERY or name in _HELD:
            continue
        fd = os.open(path, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            found.append(f"{name!r} by {holder(path)}")
        finally:
            os.close(fd)
    return found


@contextmanager
def every_cluster_lock(argv: Sequence[str] | None = None) -> Iterator[None]:
    """Hold every cluster name at once (``insync cluster down --all``)."""

    def in_use() -> EnvironmentProblem:
        busy = "; ".join(holders()) or holder(_path(EVERY))  # none: another `down --all`
        return EnvironmentProblem(f"clusters are in use: {busy}",
                                  hint="wait for them to end, or remove one cluster with "
                                       "`insync cluster down --cluster-name NAME`")

    argv = list(sys.argv if argv is None else argv)
    with _holding(EVERY, exclusive=True, argv=argv, refusal=in_use):
        yield


@contextmanager
def cluster_locks(names: Iterable[str], argv: Sequence[str] | None = None) -> Iterator[None]:
    """Hold each of ``names`` (sorted, each once) as :func:`cluster_lock` does; none when
    ``names`` is empty. For the commands that run many runs (``matrix``, ``catalogue``)."""
    with ExitStack() as held:
        for name in sorted(set(names)):
            held.enter_context(cluster_lock(name, argv))
        yield
