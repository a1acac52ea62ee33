#!/usr/bin/python
"""Connectors as code through Connect's REST API (mutual TLS); runs on the controller."""

from __future__ import annotations

DOCUMENTATION = r"""
module: kafka_connectors
short_description: Bring a Connect cluster's connectors to the declared ones
description:
  - Reads every connector (config and state), has Connect validate every declared config
    (C(PUT /connector-plugins/{class}/config/validate)), then creates, updates, pauses, resumes,
    stops and deletes to match, in that order per connector. A deletion stops the connector, waits
    until its tasks are gone and resets its offsets first, so one made again under its name starts
    anew. Nothing changes when a config is
    invalid, a class is in no plugin, or a deletion is not named in I(allow_delete); the module
    then fails with one message per problem.
  - The configs are those Connect stores, secrets as config-provider references
    (C(kafkakit.cluster.connectors.declared_connectors)), so no secret is ever sent, shown or diffed.
  - Connectors not declared are reported and left alone. Check mode reports the plan and the
    config differences (C(--diff)) and changes nothing.
  - Runs on the Ansible controller (C(delegate_to) localhost).
options:
  url: {type: str, required: true, description: A worker's REST URL (a follower forwards writes to the leader).}
  ca: {type: path, required: true, description: CA bundle the workers' certificates chain to.}
  cert: {type: path, required: true, description: Client certificate of the kit's CA.}
  key: {type: path, required: true, description: Its private key.}
  connectors:
    type: list
    elements: dict
    required: true
    description: Declared connectors as name, class, state (running, paused, stopped, absent) and config.
  allow_delete: {type: list, elements: str, default: [], description: Connectors declared absent this run may delete.}
  restart:
    type: list
    elements: str
    default: []
    description: Connectors to restart with their tasks after the changes (their secrets changed).
author: kafkakit
"""

RETURN = r"""
actions: {description: What was done (or would be, in check mode), as connector and verb., type: list, returned: always}
undeclared: {description: Connectors the cluster has and the declaration does not name., type: list, returned: always}
slots:
  description:
    - The replication slots (and publications Debezium made) the deleted PostgreSQL connectors leave
      in their databases, each with the login its connector used (the password as the path and key of
      its file on the workers, never its value); the caller drops them (roles/kafka_connect drop-slots).
  type: list
  returned: always
"""

import dataclasses

from ansible.module_utils.basic import AnsibleModule


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "url": {"type": "str", "required": True},
            "ca": {"type": "path", "required": True},
            "cert": {"type": "path", "required": True},
            "key": {"type": "path", "required": True},
            "connectors": {"type": "list", "elements": "dict", "required": True},
            "allow_delete": {"type": "list", "elements": "str", "default": []},
            "restart": {"type": "list", "elements": "str", "default": []},
        },
        supports_check_mode=True,
    )
    from kafkakit.cluster.connect import RestError, TlsFiles, settled
    from kafkakit.cluster.connectors import Declared, apply, declared_errors, plan, read_current, restart, validate

    p = module.params
    tls = TlsFiles(p["ca"], p["cert"], p["key"])
    call = settled()
    errors = declared_errors(p["connectors"])
    if errors:
        module.fail_json(msg="; ".join(errors), changed=False)
    declared = [
        Declared(c["name"], str(c.get("class", "")), str(c.get("state", "running")), c.get("config") or {})
        for c in p["connectors"]
    ]
    try:
        current = read_current(p["url"], tls, call)
        problems = validate(p["url"], tls, declared, call)
    except RestError as exc:
        module.fail_json(msg=f"could not read the Connect cluster at {p['url']}: {exc}", changed=False)
    todo = plan(declared, current, p["allow_delete"])
    problems += todo.refusals
    result = {
        "actions": [{"connector": a.name, "verb": a.verb} for a in todo.actions],
        "undeclared": todo.undeclared,
        "slots": [dataclasses.asdict(slot) for slot in todo.slots],
        "diff": [
            {
                "before_header": name,
                "after_header": name,
                "before": "".join(f"{line}\n" for line in before),
                "after": "".join(f"{line}\n" for line in after),
            }
            for name, (before, after) in sorted(todo.diffs.items())
        ],
    }
    if problems:
        module.fail_json(msg="nothing was changed: " + "; ".join(problems), changed=False, **result)
    # A connector made now starts with the new secrets; one deleted needs none.
    deleted = {a.name for a in todo.actions if a.verb == "delete"}
    to_restart = [n for n in p["restart"] if n in current and n not in deleted]
    changed = bool(todo.actions or to_restart)
    if changed and not module.check_mode:
        try:
            apply(p["url"], tls, declared, todo.actions, call)
            restart(p["url"], tls, to_restart, call)
        except RestError as exc:
            module.fail_json(msg=f"Connect refused a change: {exc}", changed=True, **result)
    module.exit_json(changed=changed, **result)


if __name__ == "__main__":
    main()
