"""Spare brokers for the bench's leader-failover case (kafkakit.bench.leader_cases): the lab's
KRaft data centre has two brokers and the case needs three, so a spare host of
ansible/lab/lab-config.yml (lab_spare_hosts) joins it for the case's rounds and leaves it after.

    python -m kafkakit.bench.spare up dc2-kafka3 --dc dc2 --client-conf build/lab/dc2/client.conf [--lab-vars F]
    python -m kafkakit.bench.spare down dc2-kafka3 --dc dc2 --client-conf build/lab/dc2/client.conf

up: lab/lab-up.yml with the spares (their containers; the inventory names them), then site.yml
    limited to them and localhost, with the extra variables the lab was deployed with (their
    certificates, encrypted volume and broker: no other host's configuration names a broker, so no
    other host changes or restarts, and the data centre's client files stay as they are, its first
    broker writes them), then until the data centre is healthy with them.
down: refused, with nothing changed, while a spare holds a replica of a topic not named like the
    case's (--keep-topics-not-prefixed: bench-lf-); the case's are deleted; each spare's broker is
    stopped (a controlled shutdown) and, in a KRaft data centre, unregistered from the metadata
    (`kafka-cluster unregister` on a controller): a registration stays there fenced otherwise, and
    the controllers count every registered broker's supported versions before finalizing a feature
    level (ClusterControlManager.brokerSupportedFeatures), so it would hold up a later upgrade;
    then lab/lab-up.yml without spares (their containers removed, the inventory as `make lab`
    wrote it) and until the data centre is healthy without them. Safe to run again.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from kafkakit.bench import lab
from kafkakit.bench.leader_cases import TOPIC_PREFIX
from kafkakit.bench.nodes import (
    BROKER_UNIT,
    CONTROLLER_CLIENT,
    TOOL_RUNNER,
    DataCentre,
    HostRun,
    data_centre,
    host_runner,
    systemctl,
    wait_brokers_healthy,
    wait_for,
)
from kafkakit.cluster.admin import admin_from_conf, delete_topics_retrying, read_client_conf

CLUSTER_TOOL = "org.apache.kafka.tools.ClusterTool"
DRAIN_TIMEOUT = 120.0


class Refused(RuntimeError):
    """A spare that cannot leave without losing something: nothing was changed."""


@dataclass(frozen=True)
class Options:
    hosts: tuple[str, ...]
    dc: str
    client_conf: Path
    inventory: Path
    lab_config: Path
    image_tag_file: Path
    ansible_dir: Path
    ansible_playbook: str
    host_exec: str
    controller_port: int
    keep_prefix: str
    lab_vars: Path | None = None


def spare_ids(lab_config: Mapping[str, Any], hosts: Sequence[str], dc: str) -> dict[str, int]:
    """host -> broker id of each named spare, which must be a kafka_broker spare of `dc`."""
    spares = {h["name"]: h for h in lab_config.get("lab_spare_hosts") or []}
    out = {}
    for name in hosts:
        entry = spares.get(name)
        if entry is None or entry.get("dc") != dc or "kafka_broker" not in entry.get("roles", ()):
            known = [n for n, h in spares.items() if h.get("dc") == dc and "kafka_broker" in h.get("roles", ())]
            raise ValueError(f"{name} is not a spare broker of {dc} in lab_spare_hosts; those are {known}")
        out[name] = int(entry["broker_id"])
    return out


def run_playbook(opts: Options, *argv: str) -> None:
    code, output = lab.run_ansible([opts.ansible_playbook, "-i", "../inventories/local", *argv], opts.ansible_dir)
    if code != 0:
        tail = "\n".join(output.strip().splitlines()[-15:])
        raise RuntimeError(f"{argv[0]} failed (exit {code}):\n{tail}")


def lab_up(opts: Options, spares: Sequence[str]) -> None:
    tag = opts.image_tag_file.read_text().strip()
    run_playbook(opts, "lab/lab-up.yml", "-e", f"lab_image={tag}", "-e", json.dumps({"lab_spares": list(spares)}))


def current(opts: Options) -> DataCentre:
    """The data centre as the inventory names it now."""
    return data_centre(yaml.safe_load(opts.inventory.read_text()), opts.dc)


def replicas_on(conf: Mapping[str, str], brokers: Sequence[int]) -> dict[str, list[int]]:
    """topic -> the partitions of it that have a replica on one of `brokers`."""
    held: dict[str, list[int]] = {}
    for name, topic in admin_from_conf(conf).list_topics(timeout=30).topics.items():
        for p in topic.partitions.values():
            if set(p.replicas) & set(brokers):
                held.setdefault(name, []).append(p.id)
    return {t: sorted(ps) for t, ps in held.items()}


def unregister(run: HostRun, dc: DataCentre, broker: int, port: int) -> None:
    """`kafka-cluster unregister` through each controller in turn, until one has done it (or
    says the broker is not registered: a run after an earlier one)."""
    errors = []
    for host in dc.controllers.values():
        argv = [TOOL_RUNNER, CLUSTER_TOOL, "unregister", "--bootstrap-controller", f"{dc.ips[host]}:{port}"]
        try:
            run(host, [*argv, "--command-config", CONTROLLER_CLIENT, "--id", str(broker)])
            return
        except RuntimeError as exc:
            if "not registered" in str(exc).lower() or "BrokerIdNotRegistered" in str(exc):
                return
            errors.append(f"{host}: {str(exc).splitlines()[0]}")
    raise RuntimeError(f"broker {broker} could not be unregistered from {dc.name}: {errors}")


def up(opts: Options, conf: Mapping[str, str]) -> None:
    lab_up(opts, opts.hosts)
    extra = ["-e", f"@{opts.lab_vars}"] if opts.lab_vars else []
    run_playbook(opts, "site.yml", "--limit", ",".join([*opts.hosts, "localhost"]), *extra)
    dc = current(opts)
    missing = [h for h in opts.hosts if h not in dc.brokers.values()]
    if missing:
        raise RuntimeError(f"the inventory does not name {missing} as brokers of {opts.dc} after lab-up.yml")
    wait_brokers_healthy(conf, dc)


def down(opts: Options, conf: Mapping[str, str], ids: Mapping[str, int], run: HostRun) -> None:
    held = replicas_on(conf, list(ids.values()))
    kept = {t: ps for t, ps in held.items() if not t.startswith(opts.keep_prefix)}
    if kept:
        raise Refused(
            f"{', '.join(ids)} hold(s) replicas of {kept}: move them off (ops/scale-in.yml) before the spare goes; "
            "nothing was changed"
        )
    if held:
        delete_topics_retrying(conf, list(held))
        wait_for(
            "the case's topics gone from the spares", lambda: not replicas_on(conf, list(ids.values())), DRAIN_TIMEOUT
        )
    dc = current(opts)
    for host in ids:
        if host in dc.brokers.values():
            systemctl(run, host, "stop", BROKER_UNIT)
    if dc.controllers:
        for broker in ids.values():
            unregister(run, dc, broker, opts.controller_port)
    lab_up(opts, [])
    after = current(opts)
    still = [h for h in ids if h in after.brokers.values()]
    if still:
        raise RuntimeError(f"the inventory still names {still} after lab-up.yml")
    wait_brokers_healthy(conf, after)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m kafkakit.bench.spare", description=__doc__.split("\n\n")[0])
    p.add_argument("action", choices=["up", "down"])
    p.add_argument("hosts", nargs="+", help="spare hosts of lab_spare_hosts (kafka_broker ones of --dc)")
    p.add_argument("--dc", required=True)
    p.add_argument("--client-conf", type=Path, required=True, help="the data centre's admin client.conf")
    p.add_argument("--inventory", type=Path, default=Path("build/lab/hosts.yml"))
    p.add_argument("--lab-config", type=Path, default=Path("ansible/lab/lab-config.yml"))
    p.add_argument("--image-tag-file", type=Path, default=Path("build/lab-image.tag"))
    p.add_argument("--ansible-dir", type=Path, default=Path("ansible"))
    p.add_argument("--ansible-playbook", default="ansible-playbook")
    p.add_argument("--host-exec", default="podman exec", help="command prefix to run argv on a host (%(default)s)")
    p.add_argument("--controller-port", type=int, default=9094)
    p.add_argument("--keep-topics-not-prefixed", dest="keep_prefix", default=TOPIC_PREFIX,
                   help="down: topics on a spare named otherwise refuse its removal (%(default)s)")  # fmt: skip
    p.add_argument("--lab-vars", type=Path, help="up: the extra variables file the lab was deployed with")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    opts = Options(
        hosts=tuple(args.hosts),
        dc=args.dc,
        client_conf=args.client_conf,
        inventory=args.inventory.resolve(),
        lab_config=args.lab_config,
        image_tag_file=args.image_tag_file.resolve(),
        ansible_dir=args.ansible_dir.resolve(),
        ansible_playbook=args.ansible_playbook,
        host_exec=args.host_exec,
        controller_port=args.controller_port,
        keep_prefix=args.keep_prefix,
        lab_vars=args.lab_vars.resolve() if args.lab_vars else None,
    )
    start = time.monotonic()
    try:
        ids = spare_ids(yaml.safe_load(opts.lab_config.read_text()), opts.hosts, opts.dc)
        conf = read_client_conf(opts.client_conf)
        if args.action == "up":
            up(opts, conf)
        else:
            down(opts, conf, ids, host_runner(opts.host_exec))
    except (Refused, RuntimeError, TimeoutError, ValueError, OSError) as exc:
        print(f"spare {args.action}: {exc}", file=sys.stderr)
        return 1
    print(f"spare {args.action}: {', '.join(opts.hosts)} in {time.monotonic() - start:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
