"""The node image, built offline from Debian packages and cached by its inputs.

There is no container registry to pull from, so the base root filesystem is
made with ``mmdebstrap`` from the host's own apt sources (the one package source
we know works here) and ``docker import``-ed as ``insync-base:<hash12>``. The
node layer (directories, sshd setup, iptables backend, ``JAVA_HOME``) is then a
``docker build --network=none`` of ``cluster/image_files/Dockerfile.node.in``,
tagged ``insync-node:<hash12>``. Users with a registry can pass
``base_image="debian:bookworm-slim"``: the same Dockerfile then installs the
packages with apt inside the build instead.

The hash covers every input that changes the result (suite, package list,
normalised host apt sources, forwarded apt options, recipe, image_files, base
image name), so an image is rebuilt exactly when one of them changes; a file
lock makes concurrent callers build once and share the result.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from cluster.docker_cli import inspect_one, run_docker
from cluster.engine import Host, RealHost, apt_install, file_lock
from harness.errors import EnvironmentProblem

__all__ = [
    "BASE_REPO",
    "NODE_PACKAGES",
    "NODE_REPO",
    "ImageBuild",
    "base_inputs",
    "build_image",
    "ensure_image",
    "host_apt_options",
    "host_sources",
    "host_suite",
    "image_files_digest",
    "node_inputs",
    "render_dockerfile",
]

BASE_REPO = "insync-base"
NODE_REPO = "insync-node"
IMAGE_FILES = Path(__file__).with_name("image_files")
WORK_DIR = Path("/var/tmp/insync-image")
IMAGE_LOCK = Path("/run/lock/insync-image.lock")
# Bump when the build recipe changes in a way the other inputs do not show.
RECIPE_VERSION = "2"  # 2: merged-/usr hook

NODE_PACKAGES: tuple[str, ...] = (
    "openjdk-17-jre-headless",  # Kafka and ZooKeeper
    "iproute2",  # ip, tc: link faults, rate limits
    "iptables",  # partitions, packet loss (-m statistic)
    "libfaketime",  # clock skew via LD_PRELOAD
    "faketime",  # ... and its command-line wrapper
    "procps",  # ps, pkill, top
    "psmisc",  # killall, pstree, fuser
    "openssh-server",  # a later SSH backend
    "netcat-openbsd",  # port probes
    "iputils-ping",
    "ca-certificates",
)

# Keep the root filesystem small: no man pages, docs or translations.
_DPKG_OPTS = (
    "path-exclude=/usr/share/man/*",
    "path-exclude=/usr/share/doc/*",
    "path-include=/usr/share/doc/*/copyright",
    "path-exclude=/usr/share/locale/*",
    "path-include=/usr/share/locale/locale.alias",
    "path-exclude=/usr/share/info/*",
)
# Host apt settings worth carrying into mmdebstrap's apt (which reads none of
# the host's apt.conf.d): date checks for snapshot mirrors, retries, proxies.
_MERGED_USR_HOOK = Path("/usr/share/mmdebstrap/hooks/merged-usr")
_FORWARDED_APT = re.compile(
    r"^Acquire::(Check-Valid-Until|Check-Date|Retries|https?::Proxy(::\S+)?) "
)
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


# --- inputs ---------------------------------------------------------------


def host_suite(os_release: Path = Path("/etc/os-release")) -> str:
    """The host's Debian codename (``bookworm``), which the image follows."""
    try:
        text = os_release.read_text()
    except OSError as exc:
        raise EnvironmentProblem(
            f"cannot read {os_release} to learn the host's Debian release",
            "pass a registry image with --base-image debian:bookworm-slim",
        ) from exc
    fields = dict(
        line.split("=", 1) for line in text.splitlines() if "=" in line and not line.startswith("#")
    )
    suite = fields.get("VERSION_CODENAME", "").strip().strip('"')
    if not suite:
        raise EnvironmentProblem(
            f"{os_release} names no VERSION_CODENAME",
            "run on Debian, or pass --base-image debian:bookworm-slim",
        )
    return suite


def _source_files(etc_apt: Path) -> list[Path]:
    """The files apt itself reads: sources.list plus *.list / *.sources in order."""
    files = [etc_apt / "sources.list"]
    parts = etc_apt / "sources.list.d"
    if parts.is_dir():
        files += sorted(p for p in parts.iterdir() if p.suffix in (".list", ".sources"))
    return [f for f in files if f.is_file()]


def _suite_ok(suite: str, wanted: str) -> bool:
    return suite == wanted or suite.startswith(wanted + "-") or suite.startswith(wanted + "/")


_ONE_LINE_KEYS = {"arch": "Architectures", "lang": "Languages", "target": "Targets"}


def _one_line_to_deb822(line: str, suite: str) -> dict[str, str] | None:
    match = re.match(r"^(deb)\s+(?:\[([^\]]*)\]\s+)?(\S+)\s+(\S+)\s*(.*)$", line)
    if not match or not _suite_ok(match.group(4), suite):
        return None
    entry = {"Types": "deb", "URIs": match.group(3), "Suites": match.group(4)}
    if match.group(5):
        entry["Components"] = match.group(5)
    for opt in (match.group(2) or "").split():
        key, _, value = opt.partition("=")
        name = _ONE_LINE_KEYS.get(key, "-".join(w.capitalize() for w in key.split("-")))
        entry[name] = value.replace(",", " ")
    return entry


def _deb822_stanzas(text: str) -> Iterable[dict[str, str]]:
    stanza: dict[str, str] = {}
    last = ""
    for raw in [*text.splitlines(), ""]:
        if raw.startswith("#"):
            continue
        if not raw.strip():
            if stanza:
                yield stanza
            stanza, last = {}, ""
        elif raw[0] in " \t" and last:
            stanza[last] += "\n" + raw.rstrip()
        elif ":" in raw:
            last, _, value = raw.partition(":")
            stanza[last.strip()] = value.strip()


def host_sources(suite: str, etc_apt: Path = Path("/etc/apt")) -> str:
    """The host's apt sources for ``suite`` (and -updates, -security), as deb822.

    Entries for other suites (third-party repositories) and disabled ones are
    dropped: the image needs Debian's packages only, and a dead third-party
    source must not break the build. Comments are dropped so that editing one
    does not rebuild the image.
    """
    entries: list[dict[str, str]] = []
    for path in _source_files(etc_apt):
        text = path.read_text(errors="replace")
        if path.suffix == ".sources":
            for st in _deb822_stanzas(text):
                if (
                    st.get("Enabled", "yes").lower() == "no"
                    or "deb" not in st.get("Types", "").split()
                ):
                    continue
                suites = [s for s in st.get("Suites", "").split() if _suite_ok(s, suite)]
                if suites:
                    entries.append({**st, "Types": "deb", "Suites": " ".join(suites)})
        else:
            for line in text.splitlines():
                entry = _one_line_to_deb822(line.split("#", 1)[0].strip(), suite)
                if entry:
                    entries.append(entry)
    return "\n".join(
        "".join(f"{k}: {v}\n" for k, v in e.items() if k != "Enabled") for e in entries
    )


def host_apt_options(host: Host | None = None) -> list[str]:
    """Host apt settings to forward to mmdebstrap, as ``Key "value";`` lines."""
    proc = (host or RealHost()).run(["apt-config", "dump"], timeout=30)
    return [line for line in proc.stdout.splitlines() if _FORWARDED_APT.match(line)]


def _hash(parts: Iterable[str]) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()


def image_files_digest(directory: Path = IMAGE_FILES) -> str:
    """Hash of every file under image_files (relative path, mode bit x, content)."""
    parts: list[str] = []
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        if "__pycache__" in path.parts:
            continue
        parts += [path.relative_to(directory).as_posix(), str(os.access(path, os.X_OK))]
        parts.append(hashlib.sha256(path.read_bytes()).hexdigest())
    return _hash(parts)


def base_inputs(
    suite: str, sources: str, apt_options: Sequence[str], packages: Sequence[str] = NODE_PACKAGES
) -> str:
    """Content hash of everything that decides the mmdebstrap root filesystem."""
    # Proxies change how we download, not what: leave them out of the hash.
    opts = sorted(o for o in apt_options if "::Proxy" not in o)
    return _hash(["base", RECIPE_VERSION, suite, sources, *opts, *sorted(packages), *_DPKG_OPTS])


def node_inputs(base: str, files_digest: str, packages: Sequence[str] | None) -> str:
    """Content hash for the node layer; ``packages`` only on the --base-image path."""
    return _hash(["node", RECIPE_VERSION, base, files_digest, *sorted(packages or ())])


# --- Dockerfile -----------------------------------------------------------


def render_dockerfile(
    base: str, packages: Sequence[str] | None = None, template_dir: Path = IMAGE_FILES
) -> str:
    """The node Dockerfile FROM ``base``; with ``packages``, install them with apt.

    The man1 directory exists because openjdk's postinst registers a man page
    alternative and fails if the directory was excluded (as in -slim images).
    """
    install = ""
    if packages:
        install = (
            "RUN set -eux; mkdir -p /usr/share/man/man1; apt-get update; \\\n"
            "    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \\\n"
            f"        {' '.join(packages)}; \\\n"
            "    apt-get clean; rm -rf /var/lib/apt/lists/*"
        )
    # Plain @NAME@ markers: the Dockerfile is full of shell $-syntax.
    template = (template_dir / "Dockerfile.node.in").read_text()
    lines = [
        ln.replace("@BASE@", base).replace("@INSTALL@", install) if not ln.startswith("#") else ln
        for ln in template.splitlines()
    ]
    return "\n".join(lines) + "\n"


# --- building -------------------------------------------------------------


def _exists(ref: str) -> bool:
    return inspect_one("image", ref) is not None


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
            *(f"--dpkgopt={o}" for o in _DPKG_OPTS),
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
        run_docker(
            ["import", "--change", 'LABEL insync="" insync.role="base"',
             "--change", 'CMD ["sleep", "infinity"]', str(tar), ref],
            timeout=900,
        )  # fmt: skip


def _build_node(ref: str, base: str, packages: Sequence[str] | None, inputs: str) -> None:
    """docker build the node layer; offline (``--network=none``) unless apt must run."""
    with tempfile.TemporaryDirectory(prefix="insync-node-") as tmp:
        ctx = Path(tmp)
        for path in IMAGE_FILES.iterdir():
            if path.is_file() and path.name != "Dockerfile.node.in":
                shutil.copy2(path, ctx / path.name)
        (ctx / "Dockerfile").write_text(render_dockerfile(base, packages))
        network = [] if packages else ["--network=none"]
        run_docker(
            ["build", "--quiet", *network, "--label", f"insync.inputs={inputs}",
             "-t", ref, str(ctx)],
            timeout=1800,
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
