#!/usr/bin/python
"""Plan partition moves for a scale-out or scale-in; report leftover throttles (controller side)."""

from __future__ import annotations

DOCUMENTATION = r"""
module: kafka_reassignment
short_description: Plan a rack-aware partition reassignment onto new brokers or off leaving ones
description:
  - Reads the assignment of every topic and the brokers' racks with confluent-kafka's AdminClient.
  - C(state=fill) moves replicas onto O(brokers) (default, the registered brokers that hold no
    replica) until counts are even as far as rack spread allows; C(state=drain) moves every
    replica off O(brokers). Returns the document C(kafka-reassign-partitions --execute) reads.
  - C(state=finish), once the tool has completed the moves, elects each partition's preferred
    leader (so the new brokers lead their share) and fails if a replication throttle is still set.
  - C(state=drained) re-reads the assignment and fails, naming the partitions, if any of O(brokers)
    still holds a replica (scale-in checks this right before stopping a broker).
  - C(state=drain) leaves out brokers that are neither registered nor hold a replica (drained and
    stopped by an earlier run), so a scale-in can be run again.
  - Runs on the Ansible controller (C(delegate_to) localhost). Never changes the cluster itself.
options:
  bootstrap_servers: {type: str, required: true, description: Comma-separated host:port list.}
  client_config: {type: dict, default: {}, description: Extra librdkafka settings (security).}
  state: {type: str, default: fill, choices: [fill, drain, finish, drained], description: What to plan or check.}
  brokers: {type: list, elements: int, default: [], description: Broker ids to fill or drain.}
author: kafkakit
"""

RETURN = r"""
reassignment: {description: The tool's JSON document (changed partitions only)., type: dict, returned: fill and drain}
moves: {description: Number of replicas that move., type: int, returned: fill and drain}
brokers: {description: The brokers filled or drained., type: list, returned: fill and drain}
replicas_before: {description: Replicas per broker now., type: dict, returned: fill and drain}
replicas_after: {description: Replicas per broker once the plan is done., type: dict, returned: fill and drain}
throttles: {description: Replication throttles still set., type: list, returned: finish}
elected: {description: Partitions whose leader the election changed., type: int, returned: finish}
holding: {description: "Partitions still on each broker: {id: [topic-partition]}.", type: dict, returned: drained}
"""

from ansible.module_utils.basic import AnsibleModule

from kafkakit.cluster.module_support import mask_only_secrets


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "bootstrap_servers": {"type": "str", "required": True},
            "client_config": {"type": "dict", "default": {}, "no_log": True},
            "state": {"type": "str", "default": "fill", "choices": ["fill", "drain", "finish", "drained"]},
            "brokers": {"type": "list", "elements": "int", "default": []},
        },
        supports_check_mode=True,
    )
    mask_only_secrets(module)
    from kafkakit.cluster.admin import admin_client
    from kafkakit.cluster.reassignment import (
        PlanError,
        drain_candidates,
        drained_refusal,
        elect_preferred_leaders,
        empty_brokers,
        partitions_on,
        plan_drain,
        plan_scale_out,
        read_cluster,
        reassignment_json,
        replica_counts,
        throttles_left,
    )

    p = module.params
    admin = admin_client(p["bootstrap_servers"], p["client_config"])
    assignment, racks = read_cluster(admin)
    if p["state"] == "finish":
        elected = 0 if module.check_mode else elect_preferred_leaders(admin)
        topics = sorted({t for t, _ in assignment})
        left = throttles_left(admin, topics, racks)
        if left:
            module.fail_json(msg=f"replication throttles are still set: {left}", elected=elected, throttles=left)
        module.exit_json(changed=elected > 0, elected=elected, throttles=left)
    if p["state"] == "drained":
        if not p["brokers"]:
            module.fail_json(msg="state=drained needs the brokers to check")
        holding = {str(b): names for b, names in partitions_on(assignment, p["brokers"]).items()}
        refusal = drained_refusal(assignment, p["brokers"])
        if refusal:
            module.fail_json(msg=refusal, holding=holding)
        module.exit_json(changed=False, holding=holding)
    if p["state"] == "drain" and p["brokers"]:
        brokers = drain_candidates(assignment, racks, p["brokers"])
    else:
        brokers = p["brokers"] or (empty_brokers(assignment, racks) if p["state"] == "fill" else [])
    if not brokers and (p["state"] == "fill" or p["brokers"]):
        # Nothing new in this data centre, or every leaving broker already gone: an empty plan.
        module.exit_json(
            changed=False,
            reassignment=reassignment_json(assignment, assignment),
            moves=0,
            brokers=[],
            replicas_before={},
            replicas_after={},
        )
    try:
        if p["state"] == "fill":
            plan, moves = plan_scale_out(assignment, racks, brokers)
        else:
            plan, moves = plan_drain(assignment, racks, brokers)
    except PlanError as exc:
        module.fail_json(msg=f"cannot plan a {p['state']} of brokers {brokers}: {exc}")
    module.exit_json(
        # Planning changes nothing; the playbook reports the move itself as the change.
        changed=False,
        reassignment=reassignment_json(plan, assignment),
        moves=len(moves),
        brokers=brokers,
        replicas_before={str(b): n for b, n in sorted(replica_counts(assignment, racks).items())},
        replicas_after={str(b): n for b, n in sorted(replica_counts(plan, racks).items())},
    )


if __name__ == "__main__":
    main()
