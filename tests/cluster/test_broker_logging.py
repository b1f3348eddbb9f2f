"""The brokers' logging files route each era's log cleaner to ``log-cleaner.log``.

The cleaner's lines (where a round stopped, how full its offset map was) are what shows
``compacted-aborted-data`` tested something; Kafka 4.1 moved the cleaner to Java under
new logger names, and a config naming only ``kafka.log.LogCleaner`` sends those lines to
``server.log`` and leaves ``log-cleaner.log`` empty.
"""

from __future__ import annotations

from pathlib import Path

import cluster

FILES = Path(cluster.__file__).parent / "dist_files"
CLEANERS_4_1 = (
    "org.apache.kafka.storage.internals.log.LogCleaner",
    "org.apache.kafka.storage.internals.log.LogCleaner$CleanerThread",
    "org.apache.kafka.storage.internals.log.Cleaner",
)


def _log4j2_loggers(text: str) -> dict[str, tuple[str, str]]:
    """logger name -> (appender, additivity), from log4j2 .properties lines."""
    rows: dict[str, dict[str, str]] = {}
    for line in text.splitlines():
        key, _, value = line.partition("=")
        parts = key.strip().split(".")
        if parts[0] == "logger" and len(parts) >= 3:
            rows.setdefault(parts[1], {})[".".join(parts[2:])] = value.strip()
    return {r["name"]: (r.get("appenderRef.file.ref", ""), r.get("additivity", ""))
            for r in rows.values() if "name" in r}


def test_log4j2_sends_every_cleaner_name_to_the_cleaner_file_only() -> None:
    loggers = _log4j2_loggers((FILES / "log4j2.properties").read_text())
    for name in ("kafka.log.LogCleaner", *CLEANERS_4_1):
        assert loggers.get(name) == ("CleanerAppender", "false"), name
    assert "log-cleaner.log" in (FILES / "log4j2.properties").read_text()


def test_log4j1_sends_the_scala_cleaner_to_the_cleaner_file() -> None:
    text = (FILES / "log4j.properties").read_text()
    assert "log4j.logger.kafka.log.LogCleaner=INFO, cleanerAppender" in text
    assert "log4j.additivity.kafka.log.LogCleaner=false" in text
