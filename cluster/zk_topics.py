"""Topics on brokers without the CreateTopics request (before 0.10.1): through ZooKeeper.

Kafka's own ``kafka-topics --zookeeper`` (``kafka.admin.TopicCommand``) writes a
topic's assignment into ZooKeeper, where the controller picks it up; it is how an
operator of those releases created and deleted topics. :class:`ZooKeeperTopicAdmin`
is the admin client such a cluster's callers get (``cluster.kafka_clients.speak_to``):
metadata and the rest go to the brokers as usual, and ``create_topics`` and
``delete_topics`` run the tool on one of the cluster's nodes, answering with the
futures an ``AdminClient`` gives, so no caller needs to know the version.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient
from confluent_kafka.cimpl import NewTopic

from cluster.tool_run import run_tool

if TYPE_CHECKING:
    from cluster.kafka_node import KafkaNode

TOPIC_COMMAND = "kafka.admin.TopicCommand"


def create_args(zookeeper: str, topic: NewTopic) -> list[str]:
    """``kafka-topics --create`` arguments for ``topic``."""
    args = ["--zookeeper", zookeeper, "--create", "--topic", topic.topic,
            "--partitions", str(topic.num_partitions),
            "--replication-factor", str(topic.replication_factor)]
    for key, value in sorted((topic.config or {}).items()):
        args += ["--config", f"{key}={value}"]
    return args


def delete_args(zookeeper: str, name: str) -> list[str]:
    return ["--zookeeper", zookeeper, "--delete", "--topic", name]


def outcome(output: str, returncode: int) -> KafkaException | None:
    """None if the tool did what was asked, else the error an ``AdminClient`` would give.

    The tool of these releases exits 0 even when it failed, and says so on its output:
    "Error while executing topic command ...", "Topic ... already exists".
    """
    text = output.strip()
    if "already exists" in text:
        return KafkaException(KafkaError(KafkaError.TOPIC_ALREADY_EXISTS, text[-300:]))
    if returncode != 0 or "Error while executing" in text or "Exception" in text:
        return KafkaException(KafkaError(KafkaError.UNKNOWN, text[-300:] or f"exit {returncode}"))
    return None


class ZooKeeperTopicAdmin(AdminClient):
    """An ``AdminClient`` whose topic creation and deletion go through ZooKeeper."""

    def __init__(self, conf: dict[str, Any], run_tool: Callable[[list[str]], tuple[str, int]],
                 zookeeper: str) -> None:
        super().__init__(conf)
        self._run_tool = run_tool
        self._zookeeper = zookeeper

    def _each(self, names: Sequence[str], argv: Callable[[str], list[str]]
              ) -> dict[str, Future[None]]:
        futures: dict[str, Future[None]] = {}
        for name in names:
            future: Future[None] = Future()
            futures[name] = future
            threading.Thread(target=self._settle, args=(future, argv(name)), daemon=True,
                             name=f"insync-topic-{name}").start()
        return futures

    def _settle(self, future: Future[None], args: list[str]) -> None:
        try:
            output, code = self._run_tool(args)
        except Exception as err:  # the node did not answer: the future says so
            future.set_exception(KafkaException(KafkaError(KafkaError.UNKNOWN, str(err))))
            return
        failure = outcome(output, code)
        if failure is None:
            future.set_result(None)
        else:
            future.set_exception(failure)

    def create_topics(self, new_topics: list[NewTopic], **_kwargs: Any  # type: ignore[override]
                      ) -> dict[str, Future[None]]:
        by_name = {t.topic: t for t in new_topics}
        return self._each(list(by_name), lambda n: create_args(self._zookeeper, by_name[n]))

    def delete_topics(self, topics: list[str], **_kwargs: Any  # type: ignore[override]
                      ) -> dict[str, Future[None]]:
        return self._each(list(topics), lambda n: delete_args(self._zookeeper, n))


def admin_factory(nodes: Sequence[KafkaNode], zookeeper: str
                  ) -> Callable[[dict[str, Any]], AdminClient]:
    """Makes a cluster's admin clients: the tool runs on the first of ``nodes`` that
    answers, against the ensemble at ``zookeeper``."""

    def on_first(args: list[str]) -> tuple[str, int]:
        last: Exception | None = None
        for node in nodes:
            try:
                run = run_tool(node, [TOPIC_COMMAND, *args], None)
            except Exception as err:  # this node is down: ask the next
                last = err
                continue
            return run.output, run.exit_code
        raise RuntimeError(f"no node could run {TOPIC_COMMAND}: {last}")

    return lambda conf: ZooKeeperTopicAdmin(conf, on_first, zookeeper)
