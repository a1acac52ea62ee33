#!/usr/bin/python
"""SCRAM users as code: bring the cluster's SCRAM credentials to the declared list; runs on the controller."""

from __future__ import annotations

DOCUMENTATION = r"""
module: kafka_scram_users
short_description: Create, re-password and remove Kafka SASL/SCRAM users
description:
  - Creates missing SCRAM credentials, re-hashes those whose password (or iteration count) differs,
    and removes users declared absent or, with I(exclusive), every undeclared user.
  - Kafka never returns a stored password, so an existing user's password is checked by logging in
    as that user with I(client_config) (identity swapped); only a rejected login triggers an update.
  - Users listed in I(protected) are never removed. Removal deletes every mechanism of the user.
  - Supports check mode and diff mode (user names only, never passwords). Runs on the Ansible controller
    (C(delegate_to) localhost).
options:
  bootstrap_servers: {type: str, required: true, description: Comma-separated host:port list.}
  client_config:
    type: dict
    default: {}
    description: The admin's librdkafka settings (security.protocol SASL_SSL, SASL credentials, CA).
  users:
    type: list
    elements: dict
    default: []
    description: Declared users.
    suboptions:
      name: {type: str, required: true, description: User name (the principal is User:<name>).}
      password: {type: str, description: Password; required when state is present., no_log: true}
      mechanism: {type: str, default: SCRAM-SHA-512, choices: [SCRAM-SHA-256, SCRAM-SHA-512], description: Mechanism.}
      state: {type: str, default: present, choices: [present, absent], description: Whether the user exists.}
      quotas: {type: dict, description: 'The user''s client quotas: not this module''s (kafka_quotas applies them).'}
  exclusive: {type: bool, default: false, description: Remove SCRAM users that are not declared.}
  protected:
    type: list
    elements: str
    default: []
    description: User names never removed (the admin and inter-broker users).
  iterations: {type: int, default: 8192, description: SCRAM iteration count (4096-16384).}
  login_timeout: {type: int, default: 15, description: Seconds one password check may take.}
author: kafkakit
"""

RETURN = r"""
created: {description: Users that got a new credential., type: list, elements: str, returned: always}
updated:
  description: Users whose password or iteration count was re-hashed.
  type: list
  elements: str
  returned: always
removed: {description: Users whose credentials were deleted., type: list, elements: str, returned: always}
diff: {description: Sorted user names before and after., type: dict, returned: always}
"""

from ansible.module_utils.basic import AnsibleModule

from kafkakit.cluster.module_support import mask_only_secrets, text_diff

USER_OPTIONS = {
    "name": {"type": "str", "required": True},
    "password": {"type": "str", "no_log": True},
    "mechanism": {"type": "str", "default": "SCRAM-SHA-512", "choices": ["SCRAM-SHA-256", "SCRAM-SHA-512"]},
    "state": {"type": "str", "default": "present", "choices": ["present", "absent"]},
    # kafka_users entries carry them; kafka_quotas applies them.
    "quotas": {"type": "dict"},
}


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "bootstrap_servers": {"type": "str", "required": True},
            "client_config": {"type": "dict", "default": {}, "no_log": True},
            "users": {"type": "list", "elements": "dict", "default": [], "options": USER_OPTIONS},
            "exclusive": {"type": "bool", "default": False},
            "protected": {"type": "list", "elements": "str", "default": []},
            "iterations": {"type": "int", "default": 8192},
            "login_timeout": {"type": "int", "default": 15},
        },
        supports_check_mode=True,
    )
    mask_only_secrets(module, [u["password"] for u in module.params["users"] if u["password"]])
    from kafkakit.cluster.admin import admin_client
    from kafkakit.cluster.scram_users import AdminScramStore, ScramError, apply_users, login_checker, parse_users

    p = module.params
    try:
        users = parse_users(p["users"], p["protected"])
        plan = apply_users(
            AdminScramStore(admin_client(p["bootstrap_servers"], p["client_config"])),
            users,
            login_checker(p["bootstrap_servers"], p["client_config"], p["login_timeout"]),
            iterations=p["iterations"],
            exclusive=p["exclusive"],
            protected=p["protected"],
            check_mode=module.check_mode,
        )
    except ScramError as exc:
        module.fail_json(msg=str(exc))
    module.exit_json(
        changed=plan.changed,
        created=plan.created,
        updated=plan.updated,
        removed=plan.removed,
        diff=text_diff(plan.before, plan.after),
    )


if __name__ == "__main__":
    main()
