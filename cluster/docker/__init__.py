"""The Docker provisioner: every node a container on this machine's Docker engine.

Everything Docker lives in this folder and nowhere else: the engine bootstrap
(``engine``), the node image (``image``, ``image_inputs``, ``image_files/``),
the containers, network and labels of a cluster (``containers``), the one
Docker SDK client and its error mapping (``client``), the ``Remote`` over the
SDK's exec and archive calls (``docker_remote``), and :class:`DockerProvisioner`,
which ties them to the shared Kafka deployment in ``cluster.deploy``. Callers get
it through ``cluster.provisioner_for()``, never by name.
"""

from cluster.docker.provisioner import DockerProvisioner

__all__ = ["DockerProvisioner"]
