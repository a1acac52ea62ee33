#!/usr/bin/python
"""Topics as code: create or update one topic; runs on the controller (confluent-kafka)."""

from __future__ import annotations

DOCUMENTATION = r"""
module: kafka_topic
short_description: Create a Kafka topic or bring its partitions and configs to the declared state
description:
  - Creates the topic, adds partitions, and sets the declared topic configs (other dynamic configs
    are left alone). Refuses to shrink partitions or change the replication factor.
  - Deletes the topic (I(state=absent)) only with I(allow_delete); without it the module fails before
    contacting the cluster. The kafka_resources role sets it for the topics the operator names in
    C(kafka_topics_allow_delete).
  - Supports check mode and diff mode. Runs on the Ansible controller.
options:
  bootstrap_servers: {type: str, required: true, description: Comma-separated host:port list.}
  client_config: {type: dict, default: {}, description: Extra librdkafka settings (security).}
  name: {type: str, required: true, description: Topic name.}
  partitions: {type: int, default: 1, description: Partition count (can only grow).}
  replication_factor: {type: int, default: 3, description: Replication factor (fixed at creation).}
  configs: {type: dict, default: {}, description: Topic configs to enforce.}
  state: {type: str, default: present, choices: [present, absent], description: Whether the topic exists.}
  allow_delete:
    type: bool
    default: false
    description: Confirms that I(state=absent) may delete the topic and its data; without it, absent is refused.
author: kafkakit
"""

from ansible.module_utils.basic import AnsibleModule

from kafkakit.cluster.module_support import mask_only_secrets


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "bootstrap_servers": {"type": "str", "required": True},
            "client_config": {"type": "dict", "default": {}, "no_log": True},
            "name": {"type": "str", "required": True},
            "partitions": {"type": "int", "default": 1},
            "replication_factor": {"type": "int", "default": 3},
            "configs": {"type": "dict", "default": {}},
            "state": {"type": "str", "default": "present", "choices": ["present", "absent"]},
            "allow_delete": {"type": "bool", "default": False},
        },
        supports_check_mode=True,
    )
    mask_only_secrets(module)
    from kafkakit.cluster.admin import admin_client
    from kafkakit.cluster.topics import TopicError, TopicSpec, apply_topic

    p = module.params
    if p["state"] == "absent" and not p["allow_delete"]:
        module.fail_json(
            msg=f"refusing to delete topic {p['name']}: state=absent deletes its data and needs allow_delete=true"
        )
    spec = TopicSpec(
        name=p["name"],
        partitions=p["partitions"],
        replication_factor=p["replication_factor"],
        configs={k: str(v) for k, v in p["configs"].items()},
        present=p["state"] == "present",
    )
    try:
        change = apply_topic(admin_client(p["bootstrap_servers"], p["client_config"]), spec, module.check_mode)
    except TopicError as exc:
        module.fail_json(msg=str(exc))
    module.exit_json(
        changed=change.changed,
        actions=change.actions,
        diff={"before": change.before, "after": change.after},
    )


if __name__ == "__main__":
    main()
