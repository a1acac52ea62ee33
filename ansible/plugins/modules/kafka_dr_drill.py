#!/usr/bin/python
"""The client side of the DR drill (ansible/ops/dr-drill.yml); runs on the controller (confluent-kafka)."""

from __future__ import annotations

DOCUMENTATION = r"""
module: kafka_dr_drill
short_description: Move a consumer group across a MirrorMaker 2 flow and account for every record
description:
  - I(phase=prepare) produces I(messages) run-tagged records in the source, lets a fresh group
    consume I(consume_first) of them and commit, then waits until MirrorMaker 2 has copied them
    all and written the group's translated offsets into the target.
  - I(phase=failover) resumes the same group on the mirrored topic in the target and reports
    records skipped (never delivered anywhere) and delivered twice.
  - Runs on the Ansible controller (C(delegate_to) localhost) with an admin principal.
options:
  phase: {type: str, required: true, choices: [prepare, failover], description: Drill step.}
  source: {type: str, required: true, description: Source cluster alias.}
  source_bootstrap_servers: {type: str, required: true, description: Source host:port list.}
  target_bootstrap_servers: {type: str, required: true, description: Target host:port list.}
  client_config: {type: dict, default: {}, description: The admin's librdkafka settings.}
  topic: {type: str, required: true, description: Source topic (mirrored by the flow).}
  target_topic: {type: str, required: true, description: Its name in the target.}
  group_prefix: {type: str, default: '', description: 'prepare: prefix of the fresh group (must be a mirrored group).'}
  messages: {type: int, default: 2000, description: 'prepare: records to produce.'}
  consume_first: {type: int, default: 700, description: 'prepare: records the group consumes in the source.'}
  partitions: {type: int, default: 6, description: 'prepare: partitions if the topic is created.'}
  replication_factor: {type: int, default: 3, description: 'prepare: RF if the topic is created.'}
  wait_seconds: {type: int, default: 180, description: How long to wait for replication, translation or delivery.}
  prepared: {type: dict, default: {}, description: 'failover: what prepare returned.'}
author: kafkakit
"""

RETURN = r"""
prepared: {description: 'prepare: run id, group, consumed sequence numbers, offsets.', type: dict, returned: success}
report:
  description: 'failover: produced, consumed_in_source, delivered_in_target, skipped, delivered_twice, timings.'
  type: dict
  returned: success
"""

from dataclasses import asdict

from ansible.module_utils.basic import AnsibleModule

from kafkakit.cluster.module_support import mask_only_secrets


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "phase": {"type": "str", "required": True, "choices": ["prepare", "failover"]},
            "source": {"type": "str", "required": True},
            "source_bootstrap_servers": {"type": "str", "required": True},
            "target_bootstrap_servers": {"type": "str", "required": True},
            "client_config": {"type": "dict", "default": {}, "no_log": True},
            "topic": {"type": "str", "required": True},
            "target_topic": {"type": "str", "required": True},
            "group_prefix": {"type": "str", "default": ""},
            "messages": {"type": "int", "default": 2000},
            "consume_first": {"type": "int", "default": 700},
            "partitions": {"type": "int", "default": 6},
            "replication_factor": {"type": "int", "default": 3},
            "wait_seconds": {"type": "int", "default": 180},
            "prepared": {"type": "dict", "default": {}},
        },
    )
    mask_only_secrets(module)
    from confluent_kafka import KafkaException

    from kafkakit.mirror import dr_drill

    p = module.params
    try:
        if p["phase"] == "prepare":
            prepared = dr_drill.prepare(
                source=p["source"],
                source_bootstrap=p["source_bootstrap_servers"],
                target_bootstrap=p["target_bootstrap_servers"],
                client_config=p["client_config"],
                topic=p["topic"],
                target_topic=p["target_topic"],
                group_prefix=p["group_prefix"],
                messages=p["messages"],
                consume_first=p["consume_first"],
                partitions=p["partitions"],
                replication_factor=p["replication_factor"],
                wait_seconds=p["wait_seconds"],
            )
            module.exit_json(changed=True, prepared=asdict(prepared))
        prep = p["prepared"]
        report = dr_drill.failover(
            target_bootstrap=p["target_bootstrap_servers"],
            client_config=p["client_config"],
            target_topic=p["target_topic"],
            run_id=prep["run_id"],
            group=prep["group"],
            produced=prep["produced"],
            consumed_in_source=prep["consumed"],
            translated=prep["translated"],
            seconds_to_translate=prep["seconds_to_translate"],
            timeout=p["wait_seconds"],
        )
        module.exit_json(changed=True, report=report.as_dict())
    except (RuntimeError, KeyError, KafkaException) as exc:
        module.fail_json(msg=f"DR drill {p['phase']} failed: {exc}")


if __name__ == "__main__":
    main()
