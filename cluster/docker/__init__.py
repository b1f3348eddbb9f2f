"""The Docker provisioner: every node a container on this machine's Docker engine.

Everything Docker lives in this folder and nowhere else: the engine bootstrap
(``engine``), the node image (``image``, ``image_inputs``, ``image_files/``),
the containers, network and labels of a cluster (``containers``), the ``docker``
CLI wrapper (``docker_cli``), the ``Remote`` over ``docker exec`` / ``docker cp``
(``docker_remote``), and :class:`DockerProvisioner`, which ties them to the
shared Kafka deployment in ``cluster.deploy``. Callers get it through
``cluster.provisioner_for()``, never by name.
"""

from cluster.docker.provisioner import DockerProvisioner

__all__ = ["DockerProvisioner"]
