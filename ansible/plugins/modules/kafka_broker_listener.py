#!/usr/bin/python
"""A listener added to a running broker as a per-broker dynamic overlay; runs on the controller."""

from __future__ import annotations

DOCUMENTATION = r"""
module: kafka_broker_listener
short_description: Add or remove a listener of a running broker through its dynamic configuration
description:
  - Sets C(listeners), C(advertised.listeners) and C(listener.security.protocol.map) of one broker as
    per-broker dynamic configuration (KIP-226) with confluent-kafka's AdminClient
    (IncrementalAlterConfigs on the BROKER resource). The broker opens the listener without a restart
    and server.properties is left alone. I(state=absent) deletes those dynamic values, so the broker
    runs the listeners of its server.properties again.
  - The values set are the broker's current ones with the listener added, so the listeners the
    deployment defines stay as they are.
  - ZooKeeper-mode brokers; under KRaft Kafka refuses to alter advertised listeners dynamically.
  - Runs on the Ansible controller (C(delegate_to) localhost). Used by C(make bench)
    (ansible/lab/bench-listener.yml) for its PLAINTEXT listener.
options:
  bootstrap_servers: {type: str, required: true, description: Comma-separated host:port list.}
  client_config: {type: dict, default: {}, description: Extra librdkafka settings (an admin principal).}
  broker_id: {type: int, required: true, description: The broker to change.}
  name: {type: str, required: true, description: 'Listener name, e.g. C(BENCH).'}
  protocol: {type: str, default: PLAINTEXT, description: Its security protocol.}
  address:
    type: str
    description:
      - C(host:port) it listens on and advertises. Required with I(state=present).
  state: {type: str, default: present, choices: [present, absent], description: Listener there or not.}
  server_properties:
    type: list
    elements: str
    description:
      - The broker's C(listeners=) and C(advertised.listeners=) lines of server.properties. Given,
        they decide whether the listener is static (refused) or an overlay (all three dynamic values
        deleted with I(state=absent)); without them the broker's reported config sources decide.
  timeout: {type: int, default: 30, description: Seconds the broker may take to apply the change.}
author: kafkakit
"""

RETURN = r"""
changes: {description: 'Settings changed: the value set, or null for deleted.', type: dict, returned: always}
listeners: {description: The broker's three listener settings after the run., type: dict, returned: always}
static: {description: 'The listener names of server.properties, when given.', type: list, returned: always}
"""

from ansible.module_utils.basic import AnsibleModule

from kafkakit.cluster.module_support import mask_only_secrets


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "bootstrap_servers": {"type": "str", "required": True},
            "client_config": {"type": "dict", "default": {}, "no_log": True},
            "broker_id": {"type": "int", "required": True},
            "name": {"type": "str", "required": True},
            "protocol": {"type": "str", "default": "PLAINTEXT"},
            "address": {"type": "str"},
            "state": {"type": "str", "default": "present", "choices": ["present", "absent"]},
            "server_properties": {"type": "list", "elements": "str"},
            "timeout": {"type": "int", "default": 30},
        },
        required_if=[("state", "present", ["address"])],
        supports_check_mode=True,
    )
    mask_only_secrets(module)
    from kafkakit.cluster.admin import admin_client
    from kafkakit.cluster.listeners import ListenerError, overlay, static_names

    p = module.params
    try:
        outcome = overlay(
            admin_client(p["bootstrap_servers"], p["client_config"]),
            p["broker_id"],
            p["name"],
            p["protocol"],
            p["address"] or "",
            p["state"] == "present",
            check_mode=module.check_mode,
            static=None if p["server_properties"] is None else static_names(p["server_properties"]),
            settle=p["timeout"],
        )
    except ListenerError as exc:
        module.fail_json(msg=str(exc))
    module.exit_json(
        changed=outcome.changed,
        changes=outcome.changes,
        listeners=outcome.after,
        static=sorted(static_names(p["server_properties"] or [])),
        diff={"before": outcome.before, "after": outcome.after},
    )


if __name__ == "__main__":
    main()
