"""The dedicated KRaft controllers of a data centre (kafka_metadata_mode: kraft): an odd quorum,
one controller per AZ, instead of a ZooKeeper ensemble.

The placement (infra.placement) puts controller i in AZ i with controller_id 101 + i, each with an
encrypted data volume for its metadata log; the config validation keeps the quorum odd, at least
3 and no larger than the AZ count (kafkakit.rules.topology, shared with the Ansible preflight).
"""

from __future__ import annotations

from infra.hosts import HostGroup


class ControllerQuorum(HostGroup):
    component_type = "kafkakit:kraft:ControllerQuorum"
    group = "kafka_controller"
