#!/usr/bin/python
"""Client quotas as code: the documentation of the kafka_quotas action plugin (ansible/plugins/action)."""

from __future__ import annotations

DOCUMENTATION = r"""
module: kafka_quotas
short_description: Bring Kafka's user client quotas to the declared ones, with Kafka's own ConfigCommand
description:
  - Sets each declared user's quotas (C(producer_byte_rate), C(consumer_byte_rate),
    C(request_percentage), C(controller_mutation_rate)) and the defaults of every user (Kafka's default
    user entity, C(--entity-default)); a quota changed or removed in the declaration is changed or
    deleted on the cluster.
  - Ownership. A user whose entry has a C(quotas) mapping owns exactly those quotas (C({}) deletes all
    of them); so does the default entity when I(defaults) is given. A user declared C(state=absent)
    keeps no quota. The quotas of every other user are undeclared - returned in C(undeclared), and
    deleted only with I(exclusive).
  - Only user entities are read and changed; client-id and <user, client-id> quotas are left alone.
  - confluent-kafka's AdminClient has no client-quota API, so Kafka's ConfigCommand (of I(kafka_version)) runs on
    the task's host (a broker of the data centre, through its C(kafkakit-run) launcher) with
    C(--bootstrap-server), one C(--describe) per run and one C(--alter) per entity that changes. It works
    the same against ZooKeeper-mode (3.9) and KRaft (4.x) clusters.
  - The admin's login reaches the tool on its standard input (C(--command-config /dev/stdin), through the
    kafkakit_tool module), never on a command line, in a file or in the result.
  - Check mode runs the describe only and reports what would change; the diff lists every user quota
    before and after, one line each. Neither shows a password.
  - An action plugin, run for the task's host; the quotas are validated first (Kafka's types, above 0),
    with the messages the preflight gives.
options:
  bootstrap_servers: {type: str, required: true, description: 'The brokers'' client listener, host:port list.'}
  kafka_version:
    type: str
    required: true
    description: The Kafka release the task's host runs, whose ConfigCommand class runs (4.4 moved it).
  admin_user: {type: str, required: true, description: A SCRAM user allowed to describe and alter client quotas.}
  admin_password: {type: str, required: true, no_log: true, description: Its password.}
  sasl_mechanism:
    type: str
    default: SCRAM-SHA-512
    choices: [SCRAM-SHA-512, SCRAM-SHA-256]
    description: Its SCRAM mechanism.
  truststore: {type: path, required: true, description: The PEM bundle of CAs the host trusts the brokers with.}
  users:
    type: list
    elements: dict
    default: []
    description:
      - The data centre's users (kafka_users and the kit's service users). C(name), C(state) and C(quotas)
        are read; other keys (the password) are ignored and never shown.
  defaults:
    type: dict
    description:
      - Quotas of the default user entity, which every user without a quota of its own gets. Omitted
        (null), the default entity is not the declaration's (undeclared).
  exclusive: {type: bool, default: false, description: Delete the quotas of users the declaration does not own.}
  launcher: {type: path, default: /usr/local/bin/kafkakit-run, description: The host's Kafka tool launcher.}
  timeout: {type: int, default: 180, description: Seconds one run of the tool may take.}
author: kafkakit
"""

EXAMPLES = r"""
- name: Apply the client quotas of the data centre
  kafka_quotas:
    bootstrap_servers: "{{ kafka_bootstrap_servers }}"
    kafka_version: "{{ kafka_version }}"
    admin_user: "{{ kafka_admin_user }}"
    admin_password: "{{ kafka_admin_password }}"
    truststore: /etc/kafka/tls/truststore.pem
    users:
      - {name: orders-writer, quotas: {producer_byte_rate: 1048576}}
      - {name: batch-reader, quotas: {consumer_byte_rate: 5242880, request_percentage: 50}}
    defaults: {producer_byte_rate: 10485760}
"""

RETURN = r"""
before:
  description: Every user entity's quotas before the run, by C(User:<name>) or C(<default>).
  type: dict
  returned: success
quotas: {description: The same after the run (in check mode, as it would be)., type: dict, returned: success}
changes:
  description: Per entity changed, the quotas set (C(set)) and deleted (C(delete)).
  type: list
  elements: dict
  returned: success
undeclared:
  description: One line per quota of a user the declaration does not own (deleted when I(exclusive)).
  type: list
  elements: str
  returned: success
commands:
  description: 'The ConfigCommand alterations, as run (no secret: the login is on stdin).'
  type: list
  elements: str
  returned: success
diff: {description: One line per user quota before and after., type: dict, returned: success}
"""
