#!/usr/bin/python
"""Wait until a Kafka cluster is healthy; runs on the controller (confluent-kafka)."""

from __future__ import annotations

DOCUMENTATION = r"""
module: kafka_cluster_health
short_description: Wait for registered brokers and zero under-replicated partitions
description:
  - Reads cluster metadata with confluent-kafka's AdminClient and waits until every expected
    broker is registered, a controller is active and no partition is under-replicated or offline.
  - Runs on the Ansible controller (C(delegate_to) localhost).
options:
  bootstrap_servers: {type: str, required: true, description: Comma-separated host:port list.}
  client_config: {type: dict, default: {}, description: Extra librdkafka settings (security).}
  expect_brokers: {type: list, elements: int, default: [], description: Broker ids that must be registered.}
  timeout: {type: int, default: 300, description: Seconds to wait before failing.}
  metadata_mode:
    type: str
    choices: [zookeeper, kraft]
    default: zookeeper
    description:
      - The data centre's C(kafka_metadata_mode). In C(kraft) the brokers list only unfenced brokers
        and name no active controller (the quorum's health is kafka_controller's check), so none is
        required and C(controller) is -1.
  wait: {type: bool, default: true, description: Wait for health; false only reports.}
  wait_for_ports:
    type: bool
    default: false
    description:
      - With I(wait), first wait (within I(timeout)) until every server of I(bootstrap_servers)
        accepts a TCP connection, and only then make the admin client. For a data centre whose
        brokers were all just (re)started; an admin client made while every broker refused
        connections has aborted the whole module inside librdkafka.
      - Leave false where a broker of the list may rightly be down (a health gate, a roll that
        waits only for the brokers registered when it began).
  restarted:
    type: str
    default: ""
    description:
      - With I(wait), the host:port of a broker just restarted (a roll). The module first waits
        until that server itself answers a metadata request, which a broker does only once it
        has registered with the cluster again. Without this, a check made just after the active
        ZooKeeper controller was restarted read the other brokers' not yet updated metadata
        (every broker listed, no partition short) and passed while the broker was still down.
  topic_ids:
    type: bool
    default: false
    description:
      - Also return every topic of the cluster with its id (ops/recover-broker.yml compares them
        with a stopped broker's partition directories). Fails when they cannot be read.
author: kafkakit
"""

RETURN = r"""
brokers: {description: Registered broker ids., type: list, returned: always}
controller: {description: Active controller id (-1 in KRaft)., type: int, returned: always}
kraft: {description: Whether the health was read as a KRaft cluster's., type: bool, returned: always}
under_replicated: {description: Partitions whose ISR is smaller than their replica set., type: list, returned: always}
offline: {description: Partitions without a leader., type: list, returned: always}
topic_ids:
  description: Each topic's id, in base64 as in partition.metadata.
  type: dict
  returned: with topic_ids
"""

from ansible.module_utils.basic import AnsibleModule

from kafkakit.cluster.module_support import mask_only_secrets


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "bootstrap_servers": {"type": "str", "required": True},
            "client_config": {"type": "dict", "default": {}, "no_log": True},
            "expect_brokers": {"type": "list", "elements": "int", "default": []},
            "timeout": {"type": "int", "default": 300},
            "metadata_mode": {"type": "str", "choices": ["zookeeper", "kraft"], "default": "zookeeper"},
            "wait": {"type": "bool", "default": True},
            "wait_for_ports": {"type": "bool", "default": False},
            "restarted": {"type": "str", "default": ""},
            "topic_ids": {"type": "bool", "default": False},
        },
        supports_check_mode=True,
    )
    mask_only_secrets(module)
    from kafkakit.cluster.admin import (
        admin_client,
        cluster_health,
        topic_ids,
        wait_healthy,
        wait_ports_open,
        wait_serving,
    )

    p = module.params
    timeout = p["timeout"]
    if p["wait"] and p["wait_for_ports"]:
        try:
            timeout = max(timeout - wait_ports_open(p["bootstrap_servers"], timeout), 1)
        except TimeoutError as exc:
            module.fail_json(msg=f"cluster not healthy: brokers {exc}", changed=False)
    if p["wait"] and p["restarted"]:
        try:
            timeout = max(timeout - wait_serving(p["restarted"], p["client_config"], timeout), 1)
        except TimeoutError as exc:
            module.fail_json(msg=f"cluster not healthy: the restarted broker {exc}", changed=False)
    admin = admin_client(p["bootstrap_servers"], p["client_config"])
    kraft = p["metadata_mode"] == "kraft"
    if p["wait"]:
        health = wait_healthy(admin, p["expect_brokers"], timeout, kraft=kraft)
    else:
        health = cluster_health(admin, kraft=kraft)
    result = {"changed": False, **health.as_dict()}
    if p["wait"] and not health.healthy(p["expect_brokers"]):
        missing = sorted(set(p["expect_brokers"]) - set(health.brokers))
        module.fail_json(
            msg=f"cluster not healthy after {p['timeout']}s: missing brokers {missing}, "
            f"{len(health.under_replicated)} under-replicated, {len(health.offline)} offline"
            + (f", error: {health.error}" if health.error else ""),
            **result,
        )
    if p["topic_ids"]:
        try:
            result["topic_ids"] = topic_ids(admin)
        except Exception as exc:  # noqa: BLE001 - reported, and nothing may act on a partial answer
            module.fail_json(msg=f"could not read the cluster's topics and their ids: {exc}", **result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
