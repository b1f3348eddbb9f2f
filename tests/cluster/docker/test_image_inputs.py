"""What the node image is made of: input hashing, host apt sources, Dockerfile rendering.

The --base-image path (FROM debian:bookworm-slim, apt inside the build) cannot
be built here, there is no registry: only its Dockerfile is checked.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cluster.docker.image_inputs import (
    IMAGE_FILES,
    LAZYFS,
    NODE_PACKAGES,
    base_inputs,
    host_sources,
    host_suite,
    image_files_digest,
    lazyfs_files,
    node_inputs,
    render_dockerfile,
)
from harness.base.errors import EnvironmentProblem

DEBIAN_SOURCES = """\
Types: deb
# http://snapshot.debian.org/archive/debian/20250520T000000Z
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main

Types: deb
URIs: http://deb.debian.org/debian
Suites: trixie
Components: main
"""
THIRD_PARTY = """\
Types: deb
URIs: https://deb.nodesource.com/node_20.x
Suites: nodistro
Components: main
"""
DISABLED = "Enabled: no\nTypes: deb\nURIs: http://example.invalid/debian\nSuites: bookworm\n"


def etc_apt(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "etc-apt"
    (root / "sources.list.d").mkdir(parents=True)
    for name, text in files.items():
        (root / name).write_text(text)
    return root


def test_host_sources_keeps_only_enabled_debian_entries_for_the_suite(tmp_path: Path) -> None:
    root = etc_apt(
        tmp_path,
        {
            "sources.list.d/debian.sources": DEBIAN_SOURCES,
            "sources.list.d/node.sources": THIRD_PARTY,
            "sources.list.d/off.sources": DISABLED,
            "sources.list.d/gcloud.list.disabled-by-farm": "deb http://x.invalid bookworm main\n",
            "sources.list": "# old style\n"
            "deb [arch=amd64 signed-by=/k.gpg] http://security.debian.org/debian-security "
            "bookworm-security main contrib # trailing\n"
            "deb https://packages.cloud.google.com/apt cloud-sdk main\n",
        },
    )
    text = host_sources("bookworm", root)
    stanzas = text.split("\n\n")
    assert len(stanzas) == 2, text
    assert "URIs: http://security.debian.org/debian-security" in stanzas[0]
    assert "Architectures: amd64" in stanzas[0] and "Signed-By: /k.gpg" in stanzas[0]
    assert "Components: main contrib" in stanzas[0]
    assert "Suites: bookworm bookworm-updates" in stanzas[1]
    for absent in ("nodesource", "trixie", "example.invalid", "x.invalid", "google", "deb-src"):
        assert absent not in text
    assert "#" not in text


def test_host_sources_ignore_comment_edits(tmp_path: Path) -> None:
    a = host_sources(
        "bookworm", etc_apt(tmp_path / "a", {"sources.list.d/d.sources": DEBIAN_SOURCES})
    )
    edited = DEBIAN_SOURCES.replace("20250520T000000Z", "20991231T000000Z")
    b = host_sources("bookworm", etc_apt(tmp_path / "b", {"sources.list.d/d.sources": edited}))
    assert a == b


def test_host_suite_reads_the_codename(tmp_path: Path) -> None:
    (tmp_path / "os-release").write_text(
        'PRETTY_NAME="Debian GNU/Linux 12"\nVERSION_CODENAME=bookworm\n'
    )
    assert host_suite(tmp_path / "os-release") == "bookworm"
    (tmp_path / "os-release").write_text('NAME="Something"\n')
    with pytest.raises(EnvironmentProblem, match="VERSION_CODENAME"):
        host_suite(tmp_path / "os-release")


BASE_SOURCES = "Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm\n"
BASE_OPTIONS = ['Acquire::Check-Valid-Until "false";']
BASE: dict[str, object] = {
    "suite": "bookworm",
    "sources": BASE_SOURCES,
    "apt_options": BASE_OPTIONS,
    "packages": NODE_PACKAGES,
}


@pytest.mark.parametrize(
    ("change", "same"),
    [
        pytest.param({}, True, id="nothing"),
        pytest.param({"packages": tuple(reversed(NODE_PACKAGES))}, True, id="package-order"),
        pytest.param(
            {"apt_options": [*BASE_OPTIONS, 'Acquire::http::Proxy "http://p:3128";']},
            True,
            id="proxy-added",
        ),
        pytest.param({"suite": "trixie"}, False, id="suite"),
        pytest.param(
            {"sources": BASE_SOURCES.replace("deb.debian", "ftp.de.debian")}, False, id="sources"
        ),
        pytest.param({"packages": (*NODE_PACKAGES, "strace")}, False, id="package-added"),
        pytest.param({"apt_options": []}, False, id="apt-option-dropped"),
    ],
)
def test_base_hash_changes_exactly_when_an_input_does(
    change: dict[str, object], same: bool
) -> None:
    before = base_inputs(**BASE)  # type: ignore[arg-type]
    after = base_inputs(**{**BASE, **change})  # type: ignore[arg-type]
    assert (before == after) is same


def test_node_hash_follows_base_files_and_packages() -> None:
    ref = node_inputs("insync-base:aaaaaaaaaaaa", "d1", None)
    assert ref == node_inputs("insync-base:aaaaaaaaaaaa", "d1", None)
    assert ref != node_inputs("insync-base:bbbbbbbbbbbb", "d1", None)
    assert ref != node_inputs("insync-base:aaaaaaaaaaaa", "d2", None)
    assert ref != node_inputs("insync-base:aaaaaaaaaaaa", "d1", NODE_PACKAGES)
    slim = node_inputs("debian:bookworm-slim", "d1", NODE_PACKAGES)
    assert slim != node_inputs("debian:bookworm-slim", "d1", (*NODE_PACKAGES, "strace"))


def test_image_files_digest_tracks_content_names_and_exec_bit(tmp_path: Path) -> None:
    files = tmp_path / "files"
    shutil.copytree(IMAGE_FILES, files)
    start = image_files_digest(files)
    assert start == image_files_digest(IMAGE_FILES)
    (files / "sshd_config").touch()  # mtime only
    assert image_files_digest(files) == start
    (files / "sshd_config").write_text((files / "sshd_config").read_text() + "LogLevel DEBUG\n")
    edited = image_files_digest(files)
    assert edited != start
    (files / "insync-sshd").chmod(0o644)
    assert image_files_digest(files) != edited
    (files / "insync-sshd").chmod(0o755)
    assert image_files_digest(files) == edited
    (files / "extra.txt").write_text("x")
    assert image_files_digest(files) != edited


def _instructions(dockerfile: str) -> list[str]:
    return [ln for ln in dockerfile.splitlines() if ln and not ln.startswith(("#", " "))]


def test_offline_dockerfile_adds_no_packages_and_sets_up_the_node() -> None:
    text = render_dockerfile("insync-base:0123456789ab")
    instructions = _instructions(text)
    assert instructions[0] == "FROM insync-base:0123456789ab"
    code = "\n".join(ln for ln in text.splitlines() if not ln.startswith("#"))
    assert "apt-get" not in code
    assert "@BASE@" not in code and "@INSTALL@" not in code
    for path in (
        "/opt/kafka",
        "/var/lib/kafka",
        "/var/log/kafka",
        "/etc/kafka",
        "/var/lib/zookeeper",
    ):
        assert path in text
    assert "update-alternatives --set iptables /usr/sbin/iptables-nft" in text
    assert "rm -f /etc/ssh/ssh_host_*" in text
    assert "ENV JAVA_HOME=/usr/lib/jvm/default-java" in text
    assert instructions[-1] == 'CMD ["sleep", "infinity"]'


def test_base_image_dockerfile_installs_every_package_before_the_setup() -> None:
    text = render_dockerfile("debian:bookworm-slim", NODE_PACKAGES)
    instructions = _instructions(text)
    assert instructions[0] == "FROM debian:bookworm-slim"
    assert instructions[1].startswith("RUN set -eux; mkdir -p /usr/share/man/man1; apt-get update")
    install = text[text.index("apt-get install") : text.index("COPY")]
    assert "--no-install-recommends" in install
    for pkg in NODE_PACKAGES:
        assert f" {pkg}" in install
    assert "rm -rf /var/lib/apt/lists/*" in install
    assert text.index("apt-get install") < text.index("update-alternatives --set iptables")


def test_the_power_loss_filesystem_ships_in_the_image_and_its_edits_rebuild_it(
    tmp_path: Path,
) -> None:
    assert {"fuse3", "python3-pyfuse3"} <= set(NODE_PACKAGES)
    assert "COPY lazyfs /usr/local/lib/insync/lazyfs" in render_dockerfile("insync-base:x")
    assert {p.name for p in lazyfs_files()} >= {"overlay.py", "fusefs.py", "__main__.py"}
    copy = tmp_path / "lazyfs"
    shutil.copytree(LAZYFS, copy)
    start = image_files_digest(IMAGE_FILES, copy)
    assert start == image_files_digest()
    (copy / "overlay.py").write_text((copy / "overlay.py").read_text() + "# edited\n")
    assert image_files_digest(IMAGE_FILES, copy) != start
