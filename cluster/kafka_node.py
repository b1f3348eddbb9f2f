"""One node of a cluster: its broker (and ZooKeeper) processes, configs and logs.

This is the handle later layers use: the runner to configure and start, the
nemesis to kill, pause and restart, teardown to collect ``log_files``. All of
it goes through the node's ``Remote``; where the node came from is the
provisioner's business, which hands over only what the rest needs: the
``Remote``, the address, where Kafka is installed (``kafka_home``) and where
the harness's client traffic arrives from (``client_source``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path

from cluster import jvm, power_loss_fs
from cluster.broker_config import (
    CONFIG_PATH,
    DATA_DIR,
    controller_endpoints,
    initial_controllers,
    properties_for,
    render,
    zk_reregister_wait_s,
)
from cluster.daemon import PAUSED, RUN_DIR, RUNNING, UP, Daemon, State
from cluster.remote import Remote, sh, write_file
from cluster.spec import ClusterSpec
from cluster.versions import KafkaVersion
from cluster.zookeeper_config import ZK_CONFIG_PATH, ZK_DATA_DIR, ZK_LOG_DIR, render_zoo_cfg
from harness.base.errors import ClusterError

KAFKA_LOG_DIR = "/var/log/kafka"
LOG = logging.getLogger("insync.cluster")

#: libfaketime as Debian's package installs it on a node. Not the ``MT`` build: that one
#: serialises every clock call behind a mutex (4x fewer currentTimeMillis()/s in
#: a JVM, measured by ``insync bench nemesis --overhead``); a constant offset
#: needs no cross-thread ordering.
FAKETIME_LIB = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"
#: The clock nemesis writes the broker's offset here ("+0", "+90.5", "-3", or an
#: absolute "YYYY-MM-DD hh:mm:ss" that freezes the clock).
FAKETIME_CONTROL = "/var/run/insync/faketime"
#: When a ZooKeeper-mode broker was last SIGKILLed (epoch seconds); its next start waits
#: for the old session to expire, then removes it.
KILLED_AT = f"{RUN_DIR}/kafka.killed-at"


def faketime_env(root: str = "") -> dict[str, str]:
    """The broker environment under which its wall clock follows ``FAKETIME_CONTROL``.

    Measured on a node (Debian, OpenJDK 17, libfaketime 0.9.10): the JVM hangs
    in timed waits when the monotonic clock is faked, and also with
    ``FAKETIME_DONT_FAKE_MONOTONIC=1`` alone (the auto-enabled glibc "monotonic
    fix" then mixes clocks), and with ``FAKETIME_NO_CACHE=1``; it runs with the
    monotonic clock left real, the fix off and the control file re-read at most
    once a second. ``root``: the node's ``KafkaNode.root``.
    """
    return {
        "LD_PRELOAD": FAKETIME_LIB,
        "FAKETIME_TIMESTAMP_FILE": root + FAKETIME_CONTROL,
        "FAKETIME_CACHE_DURATION": "1",
        "FAKETIME_DONT_FAKE_MONOTONIC": "1",
        "FAKETIME_FORCE_MONOTONIC_FIX": "0",
    }


@dataclass
class KafkaNode:
    """Node ``name`` at ``address`` running Kafka ``version`` as part of ``spec``."""

    name: str
    address: str
    remote: Remote
    spec: ClusterSpec
    version: KafkaVersion
    _: KW_ONLY
    #: The Kafka distribution's root on the node (``libs/``, ``config/``).
    kafka_home: str
    #: The address the harness's clients reach this node from, as the node sees
    #: them: what the partition nemesis drops to cut the clients off.
    client_source: str
    #: Extra environment for the broker JVM (the clock nemesis preloads libfaketime).
    broker_env: Mapping[str, str] = field(default_factory=dict)
    #: Prefix of every path insync writes on the node (data, configs, logs, pidfiles,
    #: the faketime file): "" in a container, which is all insync's; an SSH host's
    #: base directory, so that nothing insync writes lies outside it.
    root: str = ""
    #: Node name -> address the nodes reach each other at ("" or missing: the name
    #: resolves, as Docker's network aliases do).
    peers: Mapping[str, str] = field(default_factory=dict)
    #: TCP ports the provisioner reaches the node through (SSH's): no fault may drop them.
    control_ports: tuple[int, ...] = ()
    #: Where the power-loss filesystem's package lies on the node: the image's copy in a
    #: container, the one ``cluster.ssh.host_setup`` puts under an SSH host's base_dir.
    lazyfs_home: str = power_loss_fs.LAZYFS_HOME

    def at(self, path: str) -> str:
        """Where the fixed node path ``path`` (``DATA_DIR``, ...) lies on this node."""
        return self.root + path

    @property
    def controllers(self) -> str:
        """The KRaft controllers' ``host:port``, as this node reaches them."""
        return controller_endpoints(properties_for(self.spec, self.name, self.address,
                                                   peers=self.peers))

    @property
    def data_mount(self) -> power_loss_fs.Mount:
        """The power-loss filesystem under this node's data directory."""
        return power_loss_fs.Mount(self.remote, self.root, self.lazyfs_home)

    @property
    def roles(self) -> list[str]:
        return self.spec.roles(self.name)

    @property
    def broker(self) -> Daemon:
        argv = jvm.broker_argv(
            self.version,
            kafka_home=self.kafka_home,
            properties=self.at(CONFIG_PATH),
            log_dir=self.at(KAFKA_LOG_DIR),
            heap_mb=self.spec.heap_mb,
        )
        env = self.broker_env
        preludes = []
        if self.spec.faketime:
            env = {**faketime_env(self.root), **self.broker_env}
            # a restarted broker keeps the node's current skew: in the start command
            preludes.append(f'ctl="$root"{FAKETIME_CONTROL}; mkdir -p "$(dirname "$ctl")"; '
                            '[ -s "$ctl" ] || echo +0 > "$ctl"')
        wait_s = 0
        if self.spec.mode == "zookeeper":
            wait_s = zk_reregister_wait_s(self.version.number, self.spec.broker_config)
            preludes.append(self._reregister_wait(wait_s))
        prelude = "\n".join(preludes)
        return Daemon(self.remote, "kafka", argv, self.at(f"{KAFKA_LOG_DIR}/stdout.log"), env,
                      prelude=prelude, run_dir=self.at(RUN_DIR), root=self.root,
                      launch_timeout_s=60.0 + wait_s)

    def _reregister_wait(self, wait: int) -> str:
        """Shell for the start command: after a SIGKILL (``KILLED_AT`` holds when), wait
        until the old ZooKeeper session has expired (``zk_reregister_wait_s``), saying so
        in the broker's stdout log, so a restarted broker does not die at registration."""
        return (f'marker="$root"{KILLED_AT}; if [ -f "$marker" ]; then '
                f'w=$(( $(cat "$marker") + {int(wait)} - $(date +%s) )); '
                f'if [ $w -gt 0 ]; then echo "=== insync: waiting $w s for the killed '
                f'broker\'s ZooKeeper session to expire" >> "$log" 2>/dev/null || true; '
                f'sleep $w; fi; rm -f "$marker"; fi')

    @property
    def zookeeper(self) -> Daemon | None:
        if self.name not in self.spec.zookeeper_nodes:
            return None
        argv = jvm.zookeeper_argv(
            self.version,
            kafka_home=self.kafka_home,
            config=self.at(ZK_CONFIG_PATH),
            log_dir=self.at(ZK_LOG_DIR),
        )
        return Daemon(self.remote, "zookeeper", argv, self.at(f"{ZK_LOG_DIR}/stdout.log"),
                      run_dir=self.at(RUN_DIR))

    # -- setup -------------------------------------------------------------
    def configure(self, known_keys: frozenset[str] | None) -> str:
        """Write ``server.properties`` (and ZooKeeper's files); return the properties."""
        props = properties_for(
            self.spec, self.name, self.address, peers=self.peers, data_dir=self.at(DATA_DIR)
        )
        text = render(props, known_keys)
        write_file(self.remote, self.at(CONFIG_PATH), text)
        self.remote.exec(["mkdir", "-p", "--", self.at(DATA_DIR), self.at(KAFKA_LOG_DIR)])
        if self.spec.power_loss_fs:  # before anything (the KRaft format) writes there
            power_loss_fs.mount(self.data_mount)
        if self.zookeeper is not None:
            zoo = render_zoo_cfg(self.spec, peers=self.peers, data_dir=self.at(ZK_DATA_DIR))
            write_file(self.remote, self.at(ZK_CONFIG_PATH), zoo)
            myid = f"{self.spec.node_id(self.name)}\n"
            write_file(self.remote, self.at(f"{ZK_DATA_DIR}/myid"), myid)
            self.remote.exec(["mkdir", "-p", "--", self.at(ZK_LOG_DIR)])
        return text

    def format_storage(self, cluster_id: str, directories: Mapping[int, str] | None = None
                       ) -> None:
        """KRaft: write the meta.properties that binds the data dir to the cluster.

        A dynamic quorum (``ClusterSpec.kraft_quorum``) is formatted with its initial
        voters, ``directories`` giving each controller's directory id (one map for
        the whole cluster: every node must be formatted with the same voters)."""
        props = properties_for(self.spec, self.name, self.address, peers=self.peers,
                               data_dir=self.at(DATA_DIR))
        quorum: list[str] = []
        if props.dynamic_quorum:
            quorum = (["--initial-controllers", initial_controllers(props, directories or {})]
                      if props.is_controller else ["--no-initial-controllers"])
        argv = jvm.format_argv(
            self.version, kafka_home=self.kafka_home, cluster_id=cluster_id,
            properties=self.at(CONFIG_PATH), quorum=quorum,
        )
        result = self.remote.exec(argv, timeout=120, check=False)
        if not result.ok:
            tail = (result.stderr or result.stdout).strip().splitlines()[-3:]
            raise ClusterError(
                f"on {self.name}: formatting KRaft storage failed: {' | '.join(tail)}"
            )
        if self.spec.power_loss_fs:  # a power cut loses the run's writes, not the setup
            power_loss_fs.sync_all(self.data_mount)

    # -- processes: kill, restart, pause ---------------------------------------
    # Each is one command on the node (``Daemon``): the ``*_if_*`` forms, which the
    # nemesis uses, say the state the broker was found in and the pid acted on
    # (``None``: that state did not call for it).
    def start(self) -> int:
        """Start the broker (remounting the power-loss filesystem first if its power was cut)."""
        self._remount()
        return self.broker.start()

    def start_if_down(self) -> tuple[State, int | None]:
        self._remount()
        state, pid = self.broker.launch()
        return state, (pid if state == "stopped" else None)

    def _remount(self) -> None:
        """A power-loss cluster's data is served by lazyfs, which a power cut stops: the
        one extra command a start costs there (``power_loss_fs.mount`` checks first)."""
        if self.spec.power_loss_fs:
            power_loss_fs.mount(self.data_mount)

    def kill(self) -> int | None:
        """SIGKILL the broker and wait until its pid is reaped, not just a zombie.

        ``kill -0`` still succeeds on a zombie, so a ``start`` right after a
        ``kill`` could take the dead JVM for a running one and start nothing.
        """
        return self.kill_if_up()[1]

    def kill_if_up(self) -> tuple[State, int | None]:
        """SIGKILL a running or paused broker and wait until it is reaped; in ZooKeeper
        mode, note when (``KILLED_AT``), for the next start's wait."""
        stamp = self.at(KILLED_AT) if self.spec.mode == "zookeeper" else ""
        return self.broker.signal_if("KILL", UP, reap_s=30, stamp=stamp)

    def pause_if_running(self) -> tuple[State, int | None]:
        return self.broker.signal_if("STOP", RUNNING)

    def resume_if_paused(self) -> tuple[State, int | None]:
        return self.broker.signal_if("CONT", PAUSED)

    def stop(self) -> int | None:
        """A clean shutdown (SIGTERM), as an operator's rolling restart does."""
        return self.broker.stop()

    def pause(self) -> int | None:
        return self.broker.pause()

    def resume(self) -> int | None:
        return self.broker.resume()

    def state(self) -> State:
        return self.broker.state()

    def pid(self) -> int | None:
        return self.broker.pid()

    def wipe_data(self) -> None:
        """Delete the broker's data (it must be stopped): a node replaced by a blank one."""
        if self.state() != "stopped":
            raise ClusterError(f"on {self.name}: stop the broker before wiping its data")
        if self.spec.power_loss_fs:
            power_loss_fs.unmount(self.data_mount)
            sh(self.remote, 'rm -rf -- "$1" && mkdir -p -- "$1"', self.data_mount.backing)
        sh(self.remote, 'rm -rf -- "$1" && mkdir -p -- "$1"', self.at(DATA_DIR))
        if self.spec.power_loss_fs:
            power_loss_fs.mount(self.data_mount)

    # -- logs ------------------------------------------------------------------
    def log_files(self) -> list[str]:
        paths = (f"{KAFKA_LOG_DIR}/*", f"{ZK_LOG_DIR}/*", CONFIG_PATH, ZK_CONFIG_PATH)
        # the root goes as $1; the globs (insync's own constants) expand after it
        script = " ".join(f'"$1"{p}' for p in paths)
        listing = sh(self.remote, f"ls -1d {script} 2>/dev/null", self.root, check=False)
        return [line for line in listing.stdout.splitlines() if line.strip()]

    def tail_log(self, lines: int = 20) -> str:
        """The end of the broker's output and main log, for error messages."""
        out = sh(self.remote, 'tail -n "$1" -- "$2"/server.log "$2"/stdout.log 2>/dev/null',
                 str(int(lines)), self.at(KAFKA_LOG_DIR), check=False)
        return out.stdout

    def collect_logs(self, dest: Path) -> list[Path]:
        """Copy every log file into ``dest/<node>/``; keep going past failures."""
        saved = []
        for path in self.log_files():
            name = path.removeprefix(self.root).lstrip("/").replace("/", "_")
            target = dest / self.name / name
            try:
                self.remote.download(path, target)
                saved.append(target)
            except ClusterError as err:  # keep collecting the others; say what was missed
                LOG.warning("could not collect %s from %s: %s", path, self.name, err)
        return saved
