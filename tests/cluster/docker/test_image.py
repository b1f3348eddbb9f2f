"""Building the node image: mmdebstrap failures as one-line problems, and
(integration) a real offline build whose tools work inside a container."""

from __future__ import annotations

from pathlib import Path

import pytest

from cluster.docker import image
from cluster.docker.client import docker_client, inspect_one
from cluster.docker.image import build_image
from harness.base.errors import EnvironmentProblem


@pytest.mark.parametrize(
    ("log", "expected"),
    [
        pytest.param(
            "W: Failed to fetch http://deb.debian.org/debian/dists/bookworm/InRelease  "
            "Temporary failure resolving 'deb.debian.org'\nE: apt-get update failed\n",
            "cannot reach Debian's packages to build the node image: W: Failed to fetch "
            "http://deb.debian.org/debian/dists/bookworm/InRelease  "
            "Temporary failure resolving 'deb.debian.org'",
            id="dns",
        ),
        pytest.param(
            "E: Unable to locate package openjdk-99\nE: mmdebstrap failed to run\n",
            "mmdebstrap failed (exit 25) building the node image: E: mmdebstrap failed to run",
            id="other",
        ),
    ],
)
def test_mmdebstrap_failures_become_one_line_problems(
    tmp_path: Path, log: str, expected: str
) -> None:
    (tmp_path / "m.log").write_text("I: chroot architecture amd64\n" + log)
    problem = image._mmdebstrap_problem(tmp_path / "m.log", 25)
    assert problem.message == expected
    assert "\n" not in problem.one_line()


# --- integration: a real engine and Debian's packages ---------------------


def in_node(ref: str, script: str) -> tuple[int, str]:
    """Run ``script`` in a throwaway node container: (exit code, stdout and stderr)."""
    api = docker_client().api
    created = api.create_container(
        ref, ["sh", "-c", script], labels={"insync": ""},
        host_config=api.create_host_config(init=True, cap_add=["NET_ADMIN"]),
    )  # fmt: skip
    try:
        api.start(created["Id"])
        code = int(api.wait(created["Id"], timeout=120)["StatusCode"])
        return code, api.logs(created["Id"]).decode(errors="replace")
    finally:
        api.remove_container(created["Id"], force=True)


@pytest.mark.integration
def test_offline_image_has_the_node_tools_and_is_cached() -> None:
    ref = image.ensure_image()
    assert ref.startswith("insync-node:")
    checks = {
        "java -version": 'openjdk version "17',
        "iptables -L -n && iptables -V": "nf_tables",
        "tc qdisc add dev eth0 root tbf rate 1mbit burst 32kbit latency 400ms"
        " && tc qdisc show dev eth0": "qdisc tbf",
        "faketime '2001-02-03 04:05:06' date -u +%Y": "2001",
        "ls /usr/lib/*/faketime/libfaketime.so.1": "libfaketime.so.1",
        "ps -e -o comm": "docker-init",
        "ls -d /opt/kafka /var/lib/kafka /var/log/kafka /etc/kafka /var/lib/zookeeper | wc -l": "5",
        "echo $JAVA_HOME && $JAVA_HOME/bin/java -version": "openjdk version",
        "insync-sshd -t && ls /etc/ssh/ssh_host_ed25519_key": "ssh_host_ed25519_key",
    }
    for script, expected in checks.items():
        code, output = in_node(ref, script)
        assert code == 0, f"{script}: {output}"
        assert expected in output, f"{script}: {output}"
    again = build_image()
    assert again.ref == ref
    assert (again.built_base, again.built_node) == (False, False)


@pytest.mark.integration
def test_unreachable_mirror_is_a_one_line_environment_problem() -> None:
    """Real mmdebstrap against a closed loopback port: nothing is imported."""
    sources = "Types: deb\nURIs: http://127.0.0.1:9/debian\nSuites: bookworm\nComponents: main\n"
    ref = "insync-base:unreachable-test"
    with pytest.raises(EnvironmentProblem, match="cannot reach Debian's packages") as exc:
        image._build_base(ref, "bookworm", sources, [])
    assert "\n" not in exc.value.one_line()
    assert inspect_one("image", ref) is None
