#!/usr/bin/python
"""Report (and wait for) MirrorMaker 2's lag per mirrored partition; runs on the controller (confluent-kafka)."""

from __future__ import annotations

DOCUMENTATION = r"""
module: kafka_mirror_lag
short_description: MirrorMaker 2 replication lag per partition, and its connectors' states
description:
  - For one flow, lists the source topics MM2 mirrors (its include and exclude patterns), and for
    each partition the source end offset, the next offset MM2 will copy (from Connect's offsets
    topic in the target) and the difference, the lag in records.
  - Reads the connector and task states from MM2's status topic and fails unless the source,
    checkpoint and heartbeat connectors and all their tasks are RUNNING.
  - With I(max_lag) >= 0, waits up to I(wait_seconds) for every partition's lag to be within it.
  - Runs on the Ansible controller (C(delegate_to) localhost) with an admin principal.
options:
  source: {type: str, required: true, description: Source cluster alias (data centre).}
  target: {type: str, required: true, description: Target cluster alias (data centre).}
  source_bootstrap_servers: {type: str, required: true, description: Source host:port list.}
  target_bootstrap_servers: {type: str, required: true, description: Target host:port list.}
  client_config: {type: dict, default: {}, description: The admin's librdkafka settings (SASL_SSL, CA).}
  topics: {type: list, elements: dict, required: true, description: 'The flow''s topics: name, pattern_type.'}
  topics_exclude: {type: list, elements: str, default: [], description: Regexes MM2 excludes.}
  max_lag: {type: int, default: -1, description: 'Largest acceptable lag on a partition; -1 accepts any.'}
  wait_seconds: {type: int, default: 120, description: How long to wait for running connectors and the lag.}
author: kafkakit
"""

RETURN = r"""
partitions: {description: 'Per partition: topic, partition, source_end, replicated, lag.', type: list, returned: always}
connectors: {description: Connector and task states., type: dict, returned: always}
total_lag: {description: Sum of the lags., type: int, returned: always}
max_lag: {description: Largest lag of a partition., type: int, returned: always}
"""

from ansible.module_utils.basic import AnsibleModule

from kafkakit.cluster.module_support import mask_only_secrets


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "source": {"type": "str", "required": True},
            "target": {"type": "str", "required": True},
            "source_bootstrap_servers": {"type": "str", "required": True},
            "target_bootstrap_servers": {"type": "str", "required": True},
            "client_config": {"type": "dict", "default": {}, "no_log": True},
            "topics": {"type": "list", "elements": "dict", "required": True},
            "topics_exclude": {"type": "list", "elements": "str", "default": []},
            "max_lag": {"type": "int", "default": -1},
            "wait_seconds": {"type": "int", "default": 120},
        },
        supports_check_mode=True,
    )
    mask_only_secrets(module)
    from kafkakit.mirror.lag import wait_mirror

    p = module.params
    state = wait_mirror(
        p["max_lag"],
        p["wait_seconds"],
        source=p["source"],
        source_bootstrap=p["source_bootstrap_servers"],
        target_bootstrap=p["target_bootstrap_servers"],
        client_config=p["client_config"],
        topics=p["topics"],
        topics_exclude=p["topics_exclude"],
    )
    result = {"changed": False, **state.as_dict()}
    flow = f"{p['source']}->{p['target']}"
    if state.error:
        module.fail_json(msg=f"{flow}: cannot read MirrorMaker state: {state.error}", **result)
    if state.not_running():
        module.fail_json(msg=f"{flow}: not running after {p['wait_seconds']}s: {state.not_running()}", **result)
    if not state.ok(p["max_lag"]):
        behind = [f"{x.topic}-{x.partition}={x.lag}" for x in state.partitions if x.lag > p["max_lag"]]
        module.fail_json(msg=f"{flow}: lag above {p['max_lag']} after {p['wait_seconds']}s: {behind}", **result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
