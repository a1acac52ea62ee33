"""A stand-in for Kafka's ConfigCommand behind the kafkakit-run launcher, for the unit tests of the
kafka_quotas action plugin: `python config_command.py STATE [launcher arguments...]`.

It keeps the user quota entities in the JSON file STATE and answers the way the real tool does in
3.9 and 4.x (kafka.admin.ConfigCommand, describeQuotaConfigs and alterQuotaConfigs): a describe
prints "Quota configs for ..." lines and the users' SCRAM lines; an alteration refuses to delete a
quota that is not set and a fraction for a LONG quota. It reads its client settings from the
--command-config path (the action plugin's /dev/stdin) and records each call's arguments and the
login it read in STATE, so a test sees what reached the tool and how.
"""

from __future__ import annotations

import json
import re
import sys
from decimal import Decimal
from pathlib import Path

LONG = {"producer_byte_rate", "consumer_byte_rate"}
KNOWN = LONG | {"request_percentage", "controller_mutation_rate"}


def java_double(number: float) -> str:
    """`number` as Java's Double.toString prints it: 65536.0, 0.5, and from 10^7 on 1.048576E7."""
    if number == 0 or 1e-3 <= abs(number) < 1e7:
        return repr(float(number))
    sign, digits, exponent = Decimal(repr(float(number))).normalize().as_tuple()
    shown = "".join(map(str, digits))
    return f"{'-' if sign else ''}{shown[0]}.{shown[1:] or '0'}E{len(digits) + int(exponent) - 1}"


def main(argv: list[str]) -> int:
    state_path = Path(argv[0])
    state = json.loads(state_path.read_text())
    args = argv[1:]
    # The tool's class by release: kafka.admin up to 4.3, org.apache.kafka.tools from 4.4.
    assert args[0] in ("kafka.admin.ConfigCommand", "org.apache.kafka.tools.ConfigCommand"), args
    opts: dict[str, str] = {}
    flags = set()
    i = 1
    while i < len(args):
        if args[i] in ("--describe", "--alter", "--entity-default"):
            flags.add(args[i])
            i += 1
        else:
            opts[args[i]] = args[i + 1]
            i += 2
    config = Path(opts["--command-config"]).read_text()
    login = re.search(r'username="([^"]*)" password="((?:[^"\\]|\\.)*)"', config)
    state.setdefault("calls", []).append({"args": args, "login": login.group(1) if login else None, "config": config})
    state_path.write_text(json.dumps(state))
    if state.get("fail"):
        print(state["fail"], file=sys.stderr)
        return 1
    entities: dict[str, dict[str, float]] = state.setdefault("entities", {})
    if "--describe" in flags:
        for name, quotas in entities.items():
            who = "the default user-principal" if name == "" else f"user-principal '{name}'"
            print(f"Quota configs for {who} are " + ", ".join(f"{k}={java_double(v)}" for k, v in quotas.items()))
        for name in state.get("scram_users", []):
            print(f"SCRAM credential configs for user-principal '{name}' are SCRAM-SHA-512=iterations=8192")
        return 0
    name = "" if "--entity-default" in flags else opts["--entity-name"]
    have = entities.get(name, {})
    deleting = [k for k in opts.get("--delete-config", "").split(",") if k]
    missing = [k for k in deleting if k not in have]
    if missing:
        print(f"Invalid config(s): {','.join(missing)}", file=sys.stderr)
        return 1
    for pair in (p for p in opts.get("--add-config", "").split(",") if p):
        key, raw = pair.split("=")
        if key not in KNOWN or (key in LONG and not float(raw).is_integer()):
            print(f"{key} cannot be a fractional value.", file=sys.stderr)
            return 1
        have[key] = float(raw)
    for key in deleting:
        del have[key]
    if have:
        entities[name] = have
    else:
        entities.pop(name, None)
    state_path.write_text(json.dumps(state))
    print(
        f"Completed updating config for user {name}."
        if name
        else "Completed updating default config for users in the cluster."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
