"""A small valid scenario file: the tests of ``harness.scenario`` start from it and break it."""

MINIMAL = '''\
name = "tiny"
bug = "a tiny bug"
story = "A story of one line."
sources = ["https://issues.apache.org/jira/browse/KAFKA-1"]

[versions]
min = "0.10.2"
max = "4.1"
modes = ["zookeeper", "kraft"]

[settings]
acks = "1"
min-insync = 1
time-limit = 30

[broker]
"replica.lag.time.max.ms" = 5000

[[step]]
at = 10
f = "kill"
value = "leader:t0-0"

[[step]]
at = 15
f = "start"
value = "all"

[[expect]]
versions = "0.10.2..1.1"
valid = false
anomalies = ["lost-write"]

[[expect]]
versions = "2.8..4.1"
valid = true

[[variant]]
name = "isr2"
versions = "0.11.0..4.1"
settings = { acks = "all", min-insync = 2 }
broker = { "log.flush.interval.messages" = 1 }

[[variant.expect]]
versions = "0.11.0..4.1"
valid = true
'''
