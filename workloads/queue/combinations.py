"""Which queue settings cannot run together, or on the brokers asked for.

The queue's ``validate`` hook (``workloads.queue.QUEUE``): every refusal is a one-line
``UsageError`` with a hint, raised before a cluster is made, so a run never starts
with an option the clients or brokers would ignore or refuse mid-run.
"""

from __future__ import annotations

from cluster.versions import KafkaVersion, feature_since
from harness.base.errors import UsageError
from workloads.queue.options import IDEMPOTENT_MAX_IN_FLIGHT, QueueSettings, idempotent


def validate(s: QueueSettings, version: KafkaVersion) -> None:
    """Raise ``UsageError`` (one line) for combinations the clients or brokers cannot run.

    A client feature the brokers lack (idempotence, transactions before 0.11) is
    refused only when asked for: left unset it defaults off (:func:`automatic`).
    """
    for flag, feature, asked in (("--txn", "transactions", s.txn),
                                 ("--idempotence", "idempotence", s.idempotence)):
        if asked and not version.can(feature):
            raise UsageError(
                f"{flag} true needs Kafka {feature_since(feature)}+ brokers "
                f"(they refuse {feature} before that), got Kafka {version.version}",
                hint=f"drop {flag} or pass a newer --kafka-version",
            )
    _validate_groups(s, version)
    if s.txn and s.acks != "all":
        raise UsageError(
            f"--txn needs --acks all (transactions require it), got --acks {s.acks}",
            hint="pass --acks all",
        )
    if s.idempotence and s.acks != "all":
        raise UsageError(
            f"--idempotence needs --acks all, got --acks {s.acks}",
            hint="pass --idempotence false",
        )
    if s.txn_after_abort == "none" and not s.txn:
        raise UsageError("--txn-after-abort none needs --txn (only transactions abort)",
                         hint="pass --txn true or drop --txn-after-abort")
    if s.txn and s.idempotence is False:
        raise UsageError(
            "--txn needs idempotence (transactions require it)",
            hint="drop --idempotence false",
        )
    if idempotent(s, version) and s.max_in_flight > IDEMPOTENT_MAX_IN_FLIGHT:
        raise UsageError(
            f"--max-in-flight {s.max_in_flight} is over {IDEMPOTENT_MAX_IN_FLIGHT}, "
            "which idempotent producers refuse",
            hint=f"lower it to {IDEMPOTENT_MAX_IN_FLIGHT} or pass --idempotence false",
        )


def _validate_groups(s: QueueSettings, version: KafkaVersion) -> None:
    """Refuse group options that would be ignored, or that the brokers cannot serve."""
    if s.sub_via == "subscribe" and not version.can("subscribe"):
        raise UsageError(
            f"--sub-via subscribe needs Kafka {feature_since('subscribe')}+ brokers (their "
            f"group coordinator), got Kafka {version.version}", hint="pass --sub-via assign")
    if s.commit == "sync" and s.sub_via != "subscribe":
        raise UsageError("--commit sync needs --sub-via subscribe (only group members "
                         "commit)", hint="pass --sub-via subscribe")
    if s.commit == "sync" and s.txn:
        raise UsageError("--commit sync cannot go with --txn (transactions commit offsets "
                         "inside themselves)", hint="drop one of them")
    if s.members_from and (s.sub_via != "subscribe" or s.txn):
        raise UsageError(f"--members-from {s.members_from:g} needs --sub-via subscribe without "
                         "--txn (only subscribed members join late; every other consumer "
                         "connects before the run's clock starts)",
                         hint="pass --sub-via subscribe or drop --members-from")
    if s.committed_every and not (s.txn or s.sub_via == "subscribe"):
        raise UsageError(f"--committed-every {s.committed_every:g} needs groups that commit "
                         "(--txn, or --sub-via subscribe)", hint="drop --committed-every")
    if s.groups > 1 and (s.sub_via != "subscribe" or s.txn):
        raise UsageError(f"--groups {s.groups} needs --sub-via subscribe without --txn (only "
                         "subscribed members are dealt into groups)",
                         hint="pass --sub-via subscribe or drop --groups")
    if s.group_protocol == "consumer":
        if s.sub_via != "subscribe":
            raise UsageError("--group-protocol consumer needs --sub-via subscribe",
                             hint="pass --sub-via subscribe")
        if not version.can("consumer_group_protocol"):
            raise UsageError(
                "--group-protocol consumer needs Kafka "
                f"{feature_since('consumer_group_protocol')}+ brokers (KIP-848), got Kafka "
                f"{version.version}", hint="drop --group-protocol or pass a newer --kafka-version")
