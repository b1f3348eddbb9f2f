"""The node image, built offline from Debian packages and cached by its inputs.

There is no container registry to pull from, so the base root filesystem is
made with ``mmdebstrap`` from the host's own apt sources (the one package source
we know works here) and imported through the Docker SDK as ``insync-base:<hash12>``.
The node layer (directories, sshd setup, iptables backend, ``JAVA_HOME``) is
then an offline build (``network_mode="none"``) of ``image_files/Dockerfile.node.in``,
tagged ``insync-node:<hash12>``. Users with a registry can pass
``base_image="debian:bookworm-slim"``: the same Dockerfile then installs the
packages with apt inside the build instead.

What goes into the hash, and the Dockerfile itself, are ``image_inputs``; a
file lock makes concurrent callers build once and share the result.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cluster.docker.client import DockerError, docker_client, docker_errors, inspect_one
from cluster.docker.engine import RealHost, apt_install, file_lock
from cluster.docker.image_inputs import (
    DPKG_OPTS,
    IMAGE_FILES,
    NODE_PACKAGES,
    base_inputs,
    host_apt_options,
    host_sources,
    host_suite,
    image_files_digest,
    lazyfs_files,
    node_inputs,
    render_dockerfile,
)
from harness.base.errors import EnvironmentProblem

__all__ = ["BASE_REPO", "NODE_REPO", "ImageBuild", "build_image", "ensure_image"]

BASE_REPO = "insync-base"
NODE_REPO = "insync-node"
WORK_DIR = Path("/var/tmp/insync-image")
IMAGE_LOCK = Path("/run/lock/insync-image.lock")
# merged-/usr by symlinks (see _build_base).
_MERGED_USR_HOOK = Path("/usr/share/mmdebstrap/hooks/merged-usr")
_UNREACHABLE = (
    "temporary failure resolving",
    "could not resolve",
    "failed to fetch",
    "unable to connect",
    "could not connect",
    "connection failed",
    "connection timed out",
    "network is unreachable",
)


@dataclass(frozen=True)
class ImageBuild:
    """The image to run, and what ensure_image had to do to get it."""

    ref: str
    built_base: bool
    built_node: bool
    seconds: float


# --- building -------------------------------------------------------------


def _exists(ref: str) -> bool:
    return inspect_one("image", ref) is not None


def stream_error(progress: str) -> str | None:
    """The engine's error in a JSON-lines progress stream (it answers 200 and says it there)."""
    for line in progress.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and event.get("error"):
            return str(event["error"])
    return None


def _ensure_mmdebstrap() -> str:
    host = RealHost()
    found = host.which("mmdebstrap")
    if found:
        return found
    if not host.is_root():
        raise EnvironmentProblem(
            "mmdebstrap is needed to build the node image offline and is not installed",
            "run `sudo apt-get install -y mmdebstrap`, or pass --base-image debian:bookworm-slim",
        )
    apt_install(host, ["mmdebstrap"])
    return host.which("mmdebstrap") or "mmdebstrap"


def _mmdebstrap_problem(log: Path, returncode: int) -> EnvironmentProblem:
    text = log.read_text(errors="replace") if log.exists() else ""
    errors = [ln.strip() for ln in text.splitlines() if ln.startswith(("E:", "W:"))]
    last = errors[-1] if errors else (text.strip().splitlines() or ["no output"])[-1]
    network = [ln.strip() for ln in text.splitlines() if any(m in ln.lower() for m in _UNREACHABLE)]
    if network:
        return EnvironmentProblem(
            f"cannot reach Debian's packages to build the node image: {network[0][:200]}",
            "check the network and /etc/apt/sources.list.d/, or pass "
            f"--base-image debian:bookworm-slim if you have a registry; log: {log}",
        )
    return EnvironmentProblem(
        f"mmdebstrap failed (exit {returncode}) building the node image: {last}",
        f"see {log}",
    )


def _build_base(ref: str, suite: str, sources: str, apt_options: Sequence[str]) -> None:
    """mmdebstrap a root filesystem tarball from the host's sources and import it."""
    mmdebstrap = _ensure_mmdebstrap()
    WORK_DIR.mkdir(parents=True, exist_ok=True)
    log = WORK_DIR / "mmdebstrap.log"
    with tempfile.TemporaryDirectory(dir=WORK_DIR) as tmp:
        src = Path(tmp) / "host.sources"
        src.write_text(sources)
        opts = Path(tmp) / "host-apt.conf"
        opts.write_text("".join(o + "\n" for o in apt_options))
        tar = Path(tmp) / "rootfs.tar"
        argv = [
            mmdebstrap,
            "--variant=minbase",
            "--include=" + ",".join(NODE_PACKAGES),
            f"--aptopt={opts}",
            *(f"--dpkgopt={o}" for o in DPKG_OPTS),
            # merged-/usr by symlinks, as debootstrap and Docker's debian images
            # do; else apt installs usrmerge and with it ~70 MB of perl.
            *([f"--hook-dir={_MERGED_USR_HOOK}"] if _MERGED_USR_HOOK.is_dir() else []),
            '--essential-hook=mkdir -p "$1/usr/share/man/man1"',
            # The forwarded host options (proxies!) must not stay in the image.
            '--customize-hook=rm -f "$1/etc/apt/apt.conf.d/99mmdebstrap"',
            suite,
            str(tar),
            str(src),
        ]
        with log.open("w") as out:
            proc = subprocess.run(
                argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                timeout=1800, check=False,
            )  # fmt: skip
        if proc.returncode != 0 or not tar.exists() or tar.stat().st_size == 0:
            raise _mmdebstrap_problem(log, proc.returncode)
        repository, tag = ref.split(":", 1)
        with docker_errors(f"import the node image's base {ref}"):
            progress = docker_client().api.import_image(
                str(tar), repository=repository, tag=tag,
                changes=['LABEL insync="" insync.role="base"', 'CMD ["sleep", "infinity"]'],
            )  # fmt: skip
        failed = stream_error(str(progress))
        if failed:
            raise DockerError(f"import the node image's base {ref}", failed)


def _build_node(ref: str, base: str, packages: Sequence[str] | None, inputs: str) -> None:
    """Build the node layer; offline (``network_mode="none"``) unless apt must run."""
    with tempfile.TemporaryDirectory(prefix="insync-node-") as tmp:
        ctx = Path(tmp)
        for path in IMAGE_FILES.iterdir():
            if path.is_file() and path.name != "Dockerfile.node.in":
                shutil.copy2(path, ctx / path.name)
        (ctx / "lazyfs").mkdir()
        for path in lazyfs_files():
            shutil.copy2(path, ctx / "lazyfs" / path.name)
        (ctx / "Dockerfile").write_text(render_dockerfile(base, packages))
        with docker_errors(f"build the node image {ref}"):
            docker_client().images.build(
                path=str(ctx), tag=ref, rm=True, forcerm=True, timeout=1800,
                network_mode=None if packages else "none",
                labels={"insync.inputs": inputs},
            )  # fmt: skip


def build_image(base_image: str | None = None, *, rebuild: bool = False) -> ImageBuild:
    """Like :func:`ensure_image`, but also says what was built and how long it took."""
    t0 = time.monotonic()
    files = image_files_digest()
    if base_image is None:
        suite = host_suite()
        sources = host_sources(suite)
        if not sources:
            raise EnvironmentProblem(
                f"the host's apt sources have no entry for Debian {suite}",
                "add one to /etc/apt/sources.list.d/, or pass --base-image debian:bookworm-slim",
            )
        apt_options = host_apt_options()
        base = f"{BASE_REPO}:{base_inputs(suite, sources, apt_options)[:12]}"
        node_hash = node_inputs(base, files, None)
    else:
        node_hash = node_inputs(base_image, files, NODE_PACKAGES)
    ref = f"{NODE_REPO}:{node_hash[:12]}"
    if not rebuild and _exists(ref):
        return ImageBuild(ref, False, False, time.monotonic() - t0)

    with file_lock(IMAGE_LOCK):
        if not rebuild and _exists(ref):  # a concurrent caller built it meanwhile
            return ImageBuild(ref, False, False, time.monotonic() - t0)
        built_base = False
        if base_image is None:
            if rebuild or not _exists(base):
                _build_base(base, suite, sources, apt_options)
                built_base = True
            _build_node(ref, base, None, node_hash)
        else:
            _build_node(ref, base_image, NODE_PACKAGES, node_hash)
    return ImageBuild(ref, built_base, True, time.monotonic() - t0)


def ensure_image(base_image: str | None = None, *, rebuild: bool = False) -> str:
    """Return a node image reference, building it only if its inputs changed."""
    return build_image(base_image, rebuild=rebuild).ref
