"""kafka_quotas: client quotas as code (documented in ansible/plugins/modules/kafka_quotas.py).

An action plugin: the planning is kafkakit's (kafkakit.cluster.quotas, on the controller), while
Kafka's ConfigCommand runs on the task's host, a broker, through the kafkakit_tool module with the
admin's login on its standard input. Nothing this returns holds a password.
"""

from __future__ import annotations

from typing import Any

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.module_utils.errors import UnsupportedError

from ansible.plugins.action import ActionBase
from kafkakit.cluster.quotas import (
    SASL_MECHANISMS,
    QuotaError,
    alter_command,
    as_result,
    command_config,
    declared_quotas,
    describe_command,
    diff,
    lines,
    mask,
    number_value,
    parse_describe,
    plan_quotas,
)
from kafkakit.cluster.quotas import label as entity_label

RUNNER = "kafkakit_tool"
ARGUMENT_SPEC: dict[str, dict[str, Any]] = {
    "bootstrap_servers": {"type": "str", "required": True},
    "kafka_version": {"type": "str", "required": True},
    "admin_user": {"type": "str", "required": True},
    "admin_password": {"type": "str", "required": True, "no_log": True},
    "sasl_mechanism": {"type": "str", "default": "SCRAM-SHA-512", "choices": list(SASL_MECHANISMS)},
    "truststore": {"type": "path", "required": True},
    "users": {"type": "list", "elements": "dict", "default": []},
    "defaults": {"type": "dict"},
    "exclusive": {"type": "bool", "default": False},
    "launcher": {"type": "path", "default": "/usr/local/bin/kafkakit-run"},
    "timeout": {"type": "int", "default": 180},
}


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _supports_check_mode = True

    def run(self, tmp: Any = None, task_vars: dict | None = None) -> dict:
        result = super().run(tmp, task_vars)
        del tmp  # no effect since Ansible 2.5
        args = dict(self._task.args)
        # The admin's and the users' passwords (the users list is kafka_users): masked in anything returned.
        secrets = [args.get("admin_password")] + [
            u.get("password") for u in args.get("users") or [] if isinstance(u, dict)
        ]
        secrets = [str(s) for s in secrets if s]
        checked = ArgumentSpecValidator(ARGUMENT_SPEC).validate(args)
        if checked.error_messages:
            problems = [
                f"Unsupported parameters for (kafka_quotas) module: {e}" if isinstance(e, UnsupportedError) else str(e)
                for e in checked.errors.errors
            ]
            return self._fail(result, "; ".join(problems), secrets)
        p = checked.validated_parameters
        writing = False
        try:
            owned = declared_quotas(p["users"], p["defaults"])
            config = command_config(p["admin_user"], p["admin_password"], p["truststore"], p["sasl_mechanism"])
            runs = self._tool(
                task_vars, p, [describe_command(p["bootstrap_servers"], p["kafka_version"])], config, writes=False
            )
            plan = plan_quotas(owned, parse_describe(runs[0]["stdout"]), p["exclusive"])
            commands = [alter_command(p["bootstrap_servers"], p["kafka_version"], change) for change in plan.changes]
            result.update(
                changed=plan.changed,
                diff=diff(plan),
                before=as_result(plan.before),
                quotas=as_result(plan.after),
                changes=[
                    {
                        "entity": entity_label(c.entity),
                        "set": {k: number_value(k, v) for k, v in c.set.items()},
                        "delete": list(c.delete),
                    }
                    for c in plan.changes
                ],
                undeclared=lines(plan.undeclared),
                commands=[" ".join(command) for command in commands],
            )
            if commands and not self._task.check_mode:
                writing = True
                self._tool(task_vars, p, commands, config, writes=True)
        except QuotaError as exc:
            # A failed alteration may follow others that went through: changed, as far as is known.
            return self._fail(result, str(exc), secrets, changed=writing)
        finally:
            self._remove_tmp_path(self._connection._shell.tmpdir)
        return result

    def _tool(self, task_vars: dict | None, p: dict, runs: list[list[str]], config: str, writes: bool) -> list[dict]:
        """The runs' results on the task's host; QuotaError when one fails."""
        done = self._execute_module(
            module_name=RUNNER,
            module_args={
                "runs": runs,
                "command_config": config,
                # The only secret the tool has: the users' passwords stay on the controller.
                "secrets": [p["admin_password"]],
                "launcher": p["launcher"],
                "writes": writes,
                "timeout": p["timeout"],
            },
            task_vars=task_vars,
        )
        if done.get("failed"):
            why = done.get("msg") or done.get("module_stderr") or done.get("module_stdout") or "no message"
            raise QuotaError(f"Kafka's ConfigCommand on {self._task_host(task_vars)}: {why}")  # _fail masks it
        return done.get("runs") or []

    @staticmethod
    def _task_host(task_vars: dict | None) -> str:
        return str((task_vars or {}).get("inventory_hostname", "the host"))

    @staticmethod
    def _fail(result: dict, msg: str, secrets: list[str], changed: bool = False) -> dict:
        result.update(failed=True, changed=changed, msg=mask(msg, secrets))
        return result
