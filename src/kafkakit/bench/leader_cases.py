"""leader-failover (issue #47): the host of a partition's leader lost under an independent
idempotent acks=all producer, in both metadata modes. One case per mode, the ZooKeeper one first,
in a group of their own (Case.group; runner.run_plan runs it after the other cases):

    leader-failover/zookeeper   the ZooKeeper-mode data centre (the lab's dc1, 3 brokers)
    leader-failover/kraft       the KRaft data centre; the lab's dc2 has 2 brokers, so its spare
                                broker (ansible/lab/lab-config.yml's lab_spare_hosts, dc2-kafka3)
                                joins it in the group's set-up and leaves it in its teardown
                                (kafkakit.bench.spare): the other cases never see it, and the lab
                                is as `make lab` left it afterwards

Each run is one `python -m kafkakit.bench.scenarios leader-failover` (kafkakit.bench.leader_failover).
The settings that decide the window are whatever the lab was deployed with: the before/after
comparison is two bench runs (docs/benchmark.md).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kafkakit.bench.modes import MODES, ModeTarget, ScenarioSettings
from kafkakit.bench.plan import RUN, Case

PREFIX = "leader-failover"
GROUP = PREFIX
BROKERS = 3  # the topic's replicas, one on each of as many brokers
PARTITIONS = 3  # one led by each of them; partition 0 by the broker whose host is lost
VICTIM_PARTITION = 0
MIN_INSYNC = 2
RATE = 300  # records/s over the partitions: an ack of each every 10 ms, the gaps' resolution
RESTART_AFTER = 10.0  # s from the kill to the start
TARGET_S = 6.0  # the longest window without an acknowledgement issue #47 asks for
LAB_CONFIG = Path(__file__).resolve().parents[3] / "ansible" / "lab" / "lab-config.yml"


def case_name(mode: str) -> str:
    return f"{PREFIX}/{mode}"


TOPIC_PREFIX = "bench-lf-"  # the case's topics; the spares' teardown refuses to go while holding any other


def topic_name(mode: str, tag: str = RUN) -> str:
    return f"{TOPIC_PREFIX}{mode}-{tag}"


def _brokers(hosts: Sequence[Mapping[str, Any]], dc: str) -> list[str]:
    return [h["name"] for h in hosts if h.get("dc") == dc and "kafka_broker" in h.get("roles", ())]


def spares_needed(lab_config: Mapping[str, Any], dc: str, brokers: int = BROKERS) -> list[str]:
    """The spare hosts (lab_spare_hosts) that must join `dc` for it to have `brokers` brokers;
    none when its permanent hosts (lab_hosts) are enough."""
    permanent = _brokers(lab_config.get("lab_hosts") or [], dc)
    missing = brokers - len(permanent)
    if missing <= 0:
        return []
    spares = _brokers(lab_config.get("lab_spare_hosts") or [], dc)
    if len(spares) < missing:
        raise ValueError(
            f"{PREFIX} needs {brokers} brokers in {dc}, which has {len(permanent)}: add {missing - len(spares)} more "
            f"kafka_broker host(s) of {dc} to lab_spare_hosts in ansible/lab/lab-config.yml"
        )
    return spares[:missing]


@dataclass(frozen=True)
class SpareSettings:
    """How the set-up and teardown of a case that needs spares start kafkakit.bench.spare."""

    python: str = sys.executable
    inventory: str = "build/lab/hosts.yml"
    lab_config: str = str(LAB_CONFIG)
    image_tag_file: str = "build/lab-image.tag"
    ansible_dir: str = "ansible"
    ansible_playbook: str = "ansible-playbook"
    # Extra variables the lab was deployed with (make's LAB_VARS): the spare gets the same.
    lab_vars: str = ""
    host_exec: str = "podman exec"
    controller_port: int = 9094

    def command(self, action: str, hosts: Sequence[str], target: ModeTarget) -> list[str]:
        argv = [
            self.python, "-m", "kafkakit.bench.spare", action, *hosts,
            "--dc", target.dc, "--client-conf", target.client_conf, "--inventory", self.inventory,
            "--lab-config", self.lab_config, "--image-tag-file", self.image_tag_file,
            "--ansible-dir", self.ansible_dir, "--ansible-playbook", self.ansible_playbook,
            "--host-exec", self.host_exec, "--controller-port", str(self.controller_port),
            "--keep-topics-not-prefixed", TOPIC_PREFIX,
        ]  # fmt: skip
        return argv + (["--lab-vars", self.lab_vars] if self.lab_vars and action == "up" else [])


def leader_case(target: ModeTarget, spares: Sequence[str], settings: ScenarioSettings, spare: SpareSettings) -> Case:
    args = settings.command(PREFIX, target, "--tag", RUN, "--restart-after", f"{RESTART_AFTER:g}")
    setup = (tuple(spare.command("up", spares, target)),) if spares else ()
    teardown = (tuple(spare.command("down", spares, target)),) if spares else ()
    return Case(
        name=case_name(target.mode),
        tool="leader-failover",
        args=tuple(args),
        setup=setup,
        teardown=teardown,
        topic=f"{TOPIC_PREFIX}{target.mode}",
        mode=target.mode,
        group=GROUP,
    )


def leader_cases(
    targets: Sequence[ModeTarget],
    lab_config: Mapping[str, Any],
    *,
    settings: ScenarioSettings | None = None,
    spare: SpareSettings | None = None,
) -> list[Case]:
    """Both cases, the ZooKeeper one first; a data centre with fewer than BROKERS permanent
    brokers gets its spares for the group's rounds."""
    if sorted(t.mode for t in targets) != sorted(MODES):
        raise ValueError(f"{PREFIX} needs one data centre of each mode {MODES}, got {[t.mode for t in targets]}")
    settings, spare = settings or ScenarioSettings(), spare or SpareSettings()
    ordered = sorted(targets, key=lambda t: MODES.index(t.mode))
    return [leader_case(t, spares_needed(lab_config, t.dc), settings, spare) for t in ordered]
