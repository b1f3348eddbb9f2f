"""The power-loss filesystem: a FUSE layer that holds writes until fsync and drops them on demand.

``overlay`` is the model (its operations over ``state``'s inodes and durability;
pure Python, tested without FUSE), ``fusefs`` the pyfuse3 glue that serves it,
run as ``python3 -m lazyfs BACKING MOUNTPOINT``.
This package imports nothing from insync: it is copied as-is into the node
image (``cluster.docker.image_inputs.LAZYFS``) and onto SSH hosts
(``cluster.ssh.host_setup``), where Debian's python3 and python3-pyfuse3 run it.
``cluster.power_loss_fs`` drives it on a node.
"""

#: The control file at the mount's root (not listed): write ``sync`` to make everything
#: durable, ``lose`` to cut the power;
#: read it for JSON saying what is pending or what was dropped (``fusefs``).
CONTROL = ".insync-lazyfs"

#: How long the kernel may cache names and attributes the daemon served (``fusefs``).
ATTR_TIMEOUT_S = 1.0
