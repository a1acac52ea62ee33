#!/usr/bin/python
"""Run Kafka tool classes on a Kafka host, their client login given on standard input; runs on the host."""

from __future__ import annotations

DOCUMENTATION = r"""
module: kafkakit_tool
short_description: Run Kafka's tool classes on a Kafka host with a client login that never touches a disk
description:
  - Runs each of I(runs), one after the other, with the host's tool launcher (C(kafkakit-run), which the
    kafka_broker and kafka_controller roles write, C(java -cp '<kafka_home>/libs/*') with the kit's JVM
    options), and stops at the first run that fails.
  - I(command_config), the client settings holding a login, is given to every run on its standard
    input, which a run reads as the file C(/dev/stdin) (for example C(--command-config /dev/stdin)). It is
    never on a command line (a process list shows command lines) and this module writes it nowhere.
  - The output is returned with I(command_config) and every value of I(secrets) masked.
  - I(writes) says whether the runs change anything; in check mode such runs are not started.
  - Used by the kafka_quotas action plugin (Kafka's ConfigCommand). Runs on the Kafka host.
options:
  runs:
    type: list
    elements: list
    required: true
    description: Each run's arguments after the launcher, the tool class first.
  command_config: {type: str, required: true, no_log: true, description: What the runs read on standard input.}
  secrets:
    type: list
    elements: str
    default: []
    no_log: true
    description: Values masked in the output besides I(command_config) (a password inside it).
  launcher: {type: path, default: /usr/local/bin/kafkakit-run, description: The host's tool launcher.}
  writes: {type: bool, default: false, description: The runs change something (reported changed; none in check mode).}
  timeout: {type: int, default: 180, description: Seconds one run may take.}
author: kafkakit
"""

EXAMPLES = r"""
- name: Describe the user quotas with the admin's login
  kafkakit_tool:
    runs:
      - [kafka.admin.ConfigCommand, --bootstrap-server, "{{ kafka_bootstrap_servers }}",
         --command-config, /dev/stdin, --describe, --entity-type, users]
    command_config: "{{ admin_properties }}"
"""

RETURN = r"""
runs:
  description: Each run started, with its C(args), C(rc), C(stdout), C(stderr) and C(seconds).
  type: list
  elements: dict
  returned: always
"""

import subprocess
import time

from ansible.module_utils.basic import AnsibleModule


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "runs": {"type": "list", "elements": "list", "required": True},
            "command_config": {"type": "str", "required": True, "no_log": True},
            "secrets": {"type": "list", "elements": "str", "default": [], "no_log": True},
            "launcher": {"type": "path", "default": "/usr/local/bin/kafkakit-run"},
            "writes": {"type": "bool", "default": False},
            "timeout": {"type": "int", "default": 180},
        },
        supports_check_mode=True,
    )
    p = module.params
    runs = [[str(a) for a in run] for run in p["runs"]]
    if not runs or not all(runs):
        module.fail_json(msg="runs must hold at least one run, each with its tool class first")
    if p["writes"] and module.check_mode:
        module.exit_json(changed=True, runs=[])
    done: list[dict] = []
    for args in runs:
        began = time.monotonic()
        try:
            proc = subprocess.run(
                [p["launcher"], *args],
                input=p["command_config"],
                capture_output=True,
                text=True,
                timeout=p["timeout"],
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            # AnsibleModule masks the no_log values in everything returned, this message included.
            module.fail_json(msg=f"{args[0]} did not run to its end: {exc}", runs=done)
        done.append(
            {
                "args": args,
                "rc": proc.returncode,
                "stdout": proc.stdout,
                "stderr": proc.stderr,
                "seconds": round(time.monotonic() - began, 1),
            }
        )
        if proc.returncode != 0:
            tail = (proc.stderr.strip() or proc.stdout.strip())[-2000:]
            module.fail_json(msg=f"{args[0]} failed (exit {proc.returncode}): {tail}", runs=done)
    module.exit_json(changed=p["writes"], runs=done)


if __name__ == "__main__":
    main()
