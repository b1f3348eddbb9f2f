"""Make sure a Docker engine answers, installing and starting one if we may.

A fresh machine (and CI) has only the Docker *client*: insync itself must
provide the engine. As root we install Debian's ``docker.io`` with the host's
own apt configuration and start ``dockerd`` detached (there is no systemd), so
the engine outlives this process and later runs reuse it. Without root we only
say, in one line, exactly what to run.

Everything that touches the host goes through a :class:`Host`, so the decision
logic is tested with a fake built from a handler function. Whether an engine
answers is asked through the Docker SDK (``cluster.docker.client``), like every
other engine call; only apt and dockerd are processes started here.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from cluster.docker.client import docker_client, docker_errors, reset_client
from harness.base.errors import EnvironmentProblem, InsyncError

__all__ = [
    "DOCKERD_LOG",
    "EngineInfo",
    "Host",
    "RealHost",
    "apt_install",
    "ensure_engine",
    "file_lock",
]

DOCKERD_LOG = Path("/var/log/insync-dockerd.log")
ENGINE_LOCK = Path("/run/lock/insync-engine.lock")
_APT_ENV = {"DEBIAN_FRONTEND": "noninteractive", "NEEDRESTART_MODE": "l"}
_UNREACHABLE_MARKERS = (
    "failed to fetch",
    "temporary failure resolving",
    "could not resolve",
    "could not connect",
    "unable to connect",
    "connection timed out",
    "network is unreachable",
    "unable to locate package",
    "some index files failed to download",
)


@dataclass(frozen=True)
class EngineInfo:
    """What :func:`ensure_engine` found or did."""

    server_version: str
    installed: bool  # we installed docker.io just now
    started: bool  # we started dockerd just now
    seconds: float  # time from the first probe until the engine answered
    log_path: Path | None  # dockerd's log, when we started it


class Host(Protocol):
    """The few things ensure_engine needs from the machine (faked in tests)."""

    def run(
        self, argv: Sequence[str], *, timeout: float, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]: ...

    def probe(self) -> tuple[str | None, str]:
        """(the engine's version, "") if one answers, else (None, why not)."""
        ...

    def spawn_detached(self, argv: Sequence[str], log_path: Path) -> int: ...

    def alive(self, pid: int) -> bool: ...

    def which(self, name: str) -> str | None: ...

    def is_root(self) -> bool: ...


class RealHost:
    """The machine we run on."""

    def run(
        self, argv: Sequence[str], *, timeout: float, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        full_env = {**os.environ, **env} if env else None
        try:
            return subprocess.run(
                list(argv),
                check=False,
                capture_output=True,
                text=True,
                timeout=timeout,
                env=full_env,
            )
        except FileNotFoundError:
            return subprocess.CompletedProcess(list(argv), 127, "", f"{argv[0]}: not found")
        except subprocess.TimeoutExpired:
            return subprocess.CompletedProcess(list(argv), 124, "", f"timed out after {timeout}s")

    def probe(self) -> tuple[str | None, str]:
        try:
            with docker_errors("version"):
                version = str(docker_client().version().get("Version", ""))
        except InsyncError as err:
            reset_client()  # not kept: the next probe connects afresh
            return None, err.message
        return (version or None), ("" if version else "the engine gave no version")

    def spawn_detached(self, argv: Sequence[str], log_path: Path) -> int:
        """Start argv in its own session, re-parented to init, so it outlives us.

        A shell backgrounds the command and exits at once; we never hold a
        child handle, so nothing of ours has to reap it later.
        """
        log_path.parent.mkdir(parents=True, exist_ok=True)
        script = 'exec 3>&1 0</dev/null >>"$0" 2>&1; "$@" 3>&- & echo $! >&3'
        out = subprocess.run(
            ["sh", "-c", script, str(log_path), *argv],
            capture_output=True,
            text=True,
            start_new_session=True,
            check=True,
            timeout=30,
        )
        return int(out.stdout.strip())

    def alive(self, pid: int) -> bool:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return False
        return stat.rsplit(")", 1)[-1].split()[0] != "Z"

    def which(self, name: str) -> str | None:
        return shutil.which(name, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")

    def is_root(self) -> bool:
        return os.geteuid() == 0


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[-1] if lines else "no output"


def apt_install(host: Host, packages: Sequence[str], *, update: bool = True) -> None:
    """Install Debian packages non-interactively with the host's apt sources.

    A failing ``apt-get update`` is not fatal by itself (one dead third-party
    source should not stop us); if the install then fails and either step
    showed network trouble, the user gets a one-line "unreachable" problem.
    """
    what = " ".join(packages)
    outputs: list[str] = []
    if update:
        proc = host.run(["apt-get", "update", "-q"], timeout=600, env=_APT_ENV)
        outputs.append(proc.stdout + "\n" + proc.stderr)
    argv = ["apt-get", "install", "-y", "-q", "--no-install-recommends",
            "-o", "Dpkg::Options::=--force-confold", *packages]  # fmt: skip
    proc = host.run(argv, timeout=900, env=_APT_ENV)
    outputs.append(proc.stdout + "\n" + proc.stderr)
    if proc.returncode == 0:
        return
    detail = _last_line(proc.stderr or proc.stdout)
    if any(m in out.lower() for out in outputs for m in _UNREACHABLE_MARKERS):
        raise EnvironmentProblem(
            f"cannot reach Debian's packages to install {what}: {detail}",
            "check the network and the apt sources in /etc/apt/sources.list.d/, "
            f"then retry or run `apt-get install -y {what}` yourself",
        )
    raise EnvironmentProblem(
        f"`apt-get install {what}` failed: {detail}",
        f"run `apt-get install -y {what}` as root to see the full error",
    )


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``path`` (created if missing) for the block.

    Serialises installs, engine starts and image builds between concurrent
    insync processes; the kernel drops the lock if a holder dies.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _not_root_problem(host: Host, why: str) -> EnvironmentProblem:
    if "permission denied" in why.lower():
        return EnvironmentProblem(
            "a Docker engine is running but this user may not use it",
            "run insync as root, or `sudo usermod -aG docker $USER` and log in again",
        )
    if host.which("dockerd") is None:
        todo = f"sudo apt-get install -y docker.io && sudo sh -c 'dockerd >>{DOCKERD_LOG} 2>&1 &'"
    else:
        todo = f"sudo sh -c 'dockerd >>{DOCKERD_LOG} 2>&1 &'"
    return EnvironmentProblem(
        "no Docker engine answers and insync is not root, so cannot start one",
        f"run `{todo}` (or run insync as root to let it do so)",
    )


def ensure_engine(
    host: Host | None = None,
    *,
    start_timeout: float = 90.0,
    poll_interval: float = 0.5,
    log_path: Path = DOCKERD_LOG,
    lock_path: Path = ENGINE_LOCK,
) -> EngineInfo:
    """Return once an engine answers, installing/starting dockerd as root if needed."""
    host = host or RealHost()
    t0 = time.monotonic()
    version, why = host.probe()
    if version:
        return EngineInfo(version, False, False, time.monotonic() - t0, None)
    if not host.is_root():
        raise _not_root_problem(host, why)

    with file_lock(lock_path):
        version, why = host.probe()  # another process may have started it meanwhile
        if version:
            return EngineInfo(version, False, False, time.monotonic() - t0, None)
        installed = False
        if host.which("dockerd") is None:
            apt_install(host, ["docker.io"])
            installed = True
            version, why = host.probe()  # the package's init script may have started it
            if version:
                return EngineInfo(version, True, False, time.monotonic() - t0, None)
        dockerd = host.which("dockerd") or "dockerd"
        pid = host.spawn_detached([dockerd], log_path)
        deadline = time.monotonic() + start_timeout
        while True:
            version, why = host.probe()
            if version:
                return EngineInfo(version, installed, True, time.monotonic() - t0, log_path)
            if not host.alive(pid):
                raise EnvironmentProblem(
                    f"dockerd (pid {pid}) exited right after starting: {_log_tail(log_path)}",
                    f"see {log_path}",
                )
            if time.monotonic() >= deadline:
                raise EnvironmentProblem(
                    f"dockerd (pid {pid}) did not answer within "
                    f"{start_timeout:g}s: {_last_line(why)}",
                    f"see {log_path}",
                )
            time.sleep(poll_interval)


def _log_tail(log_path: Path) -> str:
    try:
        return _last_line(log_path.read_text(errors="replace")[-2000:])
    except OSError:
        return "no log"
