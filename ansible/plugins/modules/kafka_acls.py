#!/usr/bin/python
"""ACLs as code: bring the cluster's ACL bindings to the declared set; runs on the controller (confluent-kafka)."""

from __future__ import annotations

DOCUMENTATION = r"""
module: kafka_acls
short_description: Add missing and remove undeclared Kafka ACL bindings
description:
  - Expands each declared entry to one binding per operation, adds the missing ones and, with
    I(exclusive), removes bindings the cluster has but the declaration does not, except those whose
    principal is listed in I(protected_principals) or whose topic name starts with one of
    I(protected_topic_prefixes).
  - Every entry is validated (resource type, operations allowed on it, pattern type, principal form)
    before anything is changed.
  - Supports check mode and diff mode (one line per binding). Runs on the Ansible controller
    (C(delegate_to) localhost); needs an authorizer on the brokers and an admin principal.
options:
  bootstrap_servers: {type: str, required: true, description: Comma-separated host:port list.}
  client_config: {type: dict, default: {}, description: The admin's librdkafka settings (SASL_SSL, CA).}
  acls:
    type: list
    elements: dict
    default: []
    description: Declared ACL entries.
    suboptions:
      principal: {type: str, required: true, description: 'Principal, e.g. C(User:app1).'}
      resource_type:
        type: str
        required: true
        choices: [topic, group, cluster, transactional_id]
        description: Resource type.
      name: {type: str, description: 'Resource name or prefix; the cluster is C(kafka-cluster) (default for it).'}
      pattern_type: {type: str, default: literal, choices: [literal, prefixed], description: How I(name) matches.}
      operations:
        type: list
        elements: str
        required: true
        description: 'Operations, e.g. C([read, describe]); C(describe_configs) and C(DescribeConfigs) both work.'
      permission: {type: str, default: allow, choices: [allow, deny], description: Allow or deny.}
      host: {type: str, default: '*', description: Client host the binding applies to.}
  exclusive:
    type: bool
    default: false
    description:
      - Remove bindings that are not declared (except the protected ones). Off by default, so a first
        run against an existing cluster adds and never removes; I(removed) lists what it removed.
  protected_principals:
    type: list
    elements: str
    default: []
    description: Principals whose bindings are never removed (e.g. C(User:admin)).
  protected_topic_prefixes:
    type: list
    elements: str
    default: []
    description: Topic name prefixes whose bindings another owner manages (e.g. MirrorMaker 2's ACL sync).
author: kafkakit
"""

RETURN = r"""
added: {description: Bindings created, one line each., type: list, elements: str, returned: always}
removed: {description: Bindings deleted, one line each., type: list, elements: str, returned: always}
undeclared:
  description: Bindings present but not declared (nor protected), one line each; what I(exclusive) removes.
  type: list
  elements: str
  returned: always
diff: {description: All bindings before and after, sorted one-line strings., type: dict, returned: always}
"""

from ansible.module_utils.basic import AnsibleModule

from kafkakit.cluster.module_support import mask_only_secrets, text_diff

ACL_OPTIONS = {
    "principal": {"type": "str", "required": True},
    "resource_type": {"type": "str", "required": True, "choices": ["topic", "group", "cluster", "transactional_id"]},
    "name": {"type": "str"},
    "pattern_type": {"type": "str", "default": "literal", "choices": ["literal", "prefixed"]},
    "operations": {"type": "list", "elements": "str", "required": True},
    "permission": {"type": "str", "default": "allow", "choices": ["allow", "deny"]},
    "host": {"type": "str", "default": "*"},
}


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "bootstrap_servers": {"type": "str", "required": True},
            "client_config": {"type": "dict", "default": {}, "no_log": True},
            "acls": {"type": "list", "elements": "dict", "default": [], "options": ACL_OPTIONS},
            "exclusive": {"type": "bool", "default": False},
            "protected_principals": {"type": "list", "elements": "str", "default": []},
            "protected_topic_prefixes": {"type": "list", "elements": "str", "default": []},
        },
        supports_check_mode=True,
    )
    mask_only_secrets(module)
    from kafkakit.cluster.acls import AclError, AdminAclStore, apply_acls, desired_bindings, render_all
    from kafkakit.cluster.admin import admin_client

    p = module.params
    try:
        desired = desired_bindings(p["acls"])  # validate everything before the first API call
        plan = apply_acls(
            AdminAclStore(admin_client(p["bootstrap_servers"], p["client_config"])),
            desired,
            exclusive=p["exclusive"],
            protected_principals=p["protected_principals"],
            check_mode=module.check_mode,
            protected_topic_prefixes=p["protected_topic_prefixes"],
        )
    except AclError as exc:
        module.fail_json(msg=str(exc))
    module.exit_json(
        changed=plan.changed,
        added=plan.added,
        removed=plan.removed,
        undeclared=render_all(plan.undeclared),
        diff=text_diff(plan.before, plan.after),
    )


if __name__ == "__main__":
    main()
