"""The SSH provisioner: Kafka on hosts named in a ``hosts.toml``, reached with paramiko.

Imported only through ``cluster.provisioner_for`` (``Placement(kind="ssh", ...)``).
"""

from cluster.ssh.provisioner import SSHProvisioner

__all__ = ["SSHProvisioner"]
