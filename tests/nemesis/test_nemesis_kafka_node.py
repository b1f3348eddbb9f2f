"""KafkaNode.kill waits for the reaper, so a start right after a kill really starts."""

from __future__ import annotations

from fakes import FakeNode, fake_cluster


class ZombieNode(FakeNode):
    """After SIGKILL the JVM lingers as a zombie for ``linger`` existence probes."""

    linger: int = 3

    def handle(self, argv: tuple[str, ...], stdin: str | None) -> tuple[int, str, str]:
        if argv[:2] == ("kill", "-0") and self.stat == "Z" and self.linger > 0:
            self.linger -= 1
            return 0, "", ""  # kill -0 succeeds on a zombie
        return super().handle(argv, stdin)


def test_kill_returns_only_once_the_zombie_is_reaped_and_start_starts_a_new_jvm() -> None:
    cluster, _ = fake_cluster(1)
    zombie = ZombieNode("n1")
    node = cluster.nodes["n1"]
    node.remote.handler = zombie.handle  # type: ignore[attr-defined]
    assert node.kill() == 100
    assert zombie.linger == 0, "kill waited through every zombie probe"
    assert node.start() == 501
