"""What the node image is made of, and the content hash that names it.

The base root filesystem follows the host: its Debian suite, its apt sources
(normalised: other suites and comments dropped), and the host apt options worth
forwarding. The node layer is ``image_files/Dockerfile.node.in`` rendered
``FROM`` that base (or ``FROM`` a registry image, installing ``NODE_PACKAGES``
with apt). The hash covers every input that changes the result (suite, package
list, normalised host apt sources, forwarded apt options, recipe, image_files,
base image name), so ``image.build_image`` rebuilds exactly when one changes.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from cluster import power_loss_fs
from cluster.docker.engine import Host, RealHost
from harness.base.errors import EnvironmentProblem

__all__ = [
    "DPKG_OPTS",
    "IMAGE_FILES",
    "LAZYFS",
    "NODE_PACKAGES",
    "RECIPE_VERSION",
    "base_inputs",
    "host_apt_options",
    "host_sources",
    "host_suite",
    "image_files_digest",
    "lazyfs_files",
    "node_inputs",
    "render_dockerfile",
]

IMAGE_FILES = Path(__file__).with_name("image_files")
#: The power-loss filesystem's package (``cluster.lazyfs``), copied into the image as
#: ``/usr/local/lib/insync/lazyfs`` (``cluster.power_loss_fs.LAZYFS_HOME``).
LAZYFS = power_loss_fs.PACKAGE
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
    "fuse3",  # the power-loss filesystem (cluster.lazyfs): fusermount3
    "python3-pyfuse3",  # ... and what runs it (pulls in python3 and python3-trio)
)

# Keep the root filesystem small: no man pages, docs or translations.
DPKG_OPTS = (
    "path-exclude=/usr/share/man/*",
    "path-exclude=/usr/share/doc/*",
    "path-include=/usr/share/doc/*/copyright",
    "path-exclude=/usr/share/locale/*",
    "path-include=/usr/share/locale/locale.alias",
    "path-exclude=/usr/share/info/*",
)
# Host apt settings worth carrying into mmdebstrap's apt (which reads none of
# the host's apt.conf.d): date checks for snapshot mirrors, retries, proxies.
_FORWARDED_APT = re.compile(
    r"^Acquire::(Check-Valid-Until|Check-Date|Retries|https?::Proxy(::\S+)?) "
)


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


def lazyfs_files(directory: Path = LAZYFS) -> list[Path]:
    """The power-loss filesystem's modules, as the image gets them."""
    return power_loss_fs.package_files(directory)


def image_files_digest(directory: Path = IMAGE_FILES, lazyfs: Path = LAZYFS) -> str:
    """Hash of every file under image_files (relative path, mode bit x, content), and of
    the power-loss filesystem's modules copied beside them."""
    parts: list[str] = []
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        if "__pycache__" in path.parts:
            continue
        parts += [path.relative_to(directory).as_posix(), str(os.access(path, os.X_OK))]
        parts.append(hashlib.sha256(path.read_bytes()).hexdigest())
    for path in lazyfs_files(lazyfs):
        parts += [f"lazyfs/{path.name}", hashlib.sha256(path.read_bytes()).hexdigest()]
    return _hash(parts)


def base_inputs(
    suite: str, sources: str, apt_options: Sequence[str], packages: Sequence[str] = NODE_PACKAGES
) -> str:
    """Content hash of everything that decides the mmdebstrap root filesystem."""
    # Proxies change how we download, not what: leave them out of the hash.
    opts = sorted(o for o in apt_options if "::Proxy" not in o)
    return _hash(["base", RECIPE_VERSION, suite, sources, *opts, *sorted(packages), *DPKG_OPTS])


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

