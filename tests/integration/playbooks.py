"""Running the kit's playbooks against the deployment from the tests, and reading their output."""

from __future__ import annotations

import json
import os
import re
import subprocess
from datetime import datetime
from pathlib import Path

import ansible_mitogen

from tests.integration.lab import ANSIBLE_INVENTORY, ROOT

LOGS = ROOT / "build/test-logs"
# The tests' playbook runs go over Mitogen's own linear strategy: one Python per host for the whole
# run instead of one per task, on a lab whose 2 cores are the limit. `make lab`'s first deploy keeps
# Ansible's default: Mitogen copies archives slower. KAFKAKIT_TEST_STRATEGY=linear turns it off.
STRATEGY = os.environ.get("KAFKAKIT_TEST_STRATEGY", "mitogen_linear")
MITOGEN_STRATEGIES = Path(ansible_mitogen.__file__).parent / "plugins" / "strategy"


def playbook_process(
    playbook: str, *extra: str, strategy: str = STRATEGY, task_times: bool = False, timeout: float = 1200
) -> subprocess.CompletedProcess[str]:
    """Run an ansible/ playbook against the deployment, whatever its outcome. The whole output
    also goes to build/test-logs/<playbook>.log (the last run of each), for failures whose cause
    is far above the tail. Over `strategy` (STRATEGY unless a test says otherwise); `task_times`
    stamps each task's start (profile_tasks) for task_started()."""
    env = {**os.environ, "ANSIBLE_CONFIG": "ansible.cfg", "ANSIBLE_NOCOLOR": "1"}
    env["ANSIBLE_STRATEGY"] = strategy
    if strategy.startswith("mitogen_"):
        env["ANSIBLE_STRATEGY_PLUGINS"] = str(MITOGEN_STRATEGIES)
    if task_times:
        env["ANSIBLE_CALLBACKS_ENABLED"] = "ansible.posix.profile_roles,ansible.posix.profile_tasks"
    LOGS.mkdir(parents=True, exist_ok=True)
    log = LOGS / f"{Path(playbook).stem}.log"
    try:
        proc = subprocess.run(
            ["ansible-playbook", "-i", str(ANSIBLE_INVENTORY), playbook, *extra],
            cwd=ROOT / "ansible",
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as expired:
        # What it printed until it was killed is where it waited: kept like a finished run's.
        log.write_bytes((expired.stdout or b"") + (expired.stderr or b""))
        raise AssertionError(f"{playbook} still ran after {timeout} s (its output so far: {log})") from expired
    log.write_text(proc.stdout + proc.stderr)
    return proc


def run_playbook(playbook: str, *extra: str, strategy: str = STRATEGY, task_times: bool = False) -> str:
    """Run an ansible/ playbook against the deployment (`strategy` and `task_times` as
    playbook_process); its output, or a failure with the hosts that failed and its tail."""
    proc = playbook_process(playbook, *extra, strategy=strategy, task_times=task_times)
    failures = [line for line in proc.stdout.splitlines() if line.startswith(("fatal:", "failed:"))]
    assert proc.returncode == 0, (
        f"{playbook} failed (whole output: {LOGS}/{Path(playbook).stem}.log)\n"
        + "\n".join(failures[:20])
        + "\n...\n"
        + proc.stdout[-3000:]
        + proc.stderr[-2000:]
    )
    return proc.stdout


def run_site(*extra: str) -> str:
    return run_playbook("site.yml", *extra)


def lab_up(*spares: str) -> None:
    """lab/lab-up.yml: the lab's usual hosts plus `spares` (ansible/lab/lab-config.yml's
    lab_spare_hosts), running and in the inventory; spares not named are removed."""
    tag = (ROOT / "build/lab-image.tag").read_text().strip()
    run_playbook("lab/lab-up.yml", "-e", f"lab_image={tag}", "-e", json.dumps({"lab_spares": list(spares)}))


def task_started(output: str) -> list[tuple[float, str]]:
    """(time.time(), banner) of each task of a run made with task_times=True."""
    stamped = re.findall(r"^TASK \[(.*?)\] \**\n(\w+ \d+ \w+ \d{4}  \d\d:\d\d:\d\d [+-]\d{4})", output, re.M)
    return [(datetime.strptime(at, "%A %d %B %Y  %H:%M:%S %z").timestamp(), task) for task, at in stamped]


def recap(output: str) -> dict[str, dict[str, int]]:
    rows = re.findall(r"^(\S+)\s+: (ok=.*)$", output, re.M)
    return {host: {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", stats)} for host, stats in rows}


def restart_order(output: str, unit: str = "kafka") -> list[str]:
    """Hosts in the order the roll (roles/roll) restarted `unit` on them, from the task banners."""
    return [host for u, host in re.findall(r"^TASK \[roll : Restart (\S+) on (\S+)\]", output, re.M) if u == unit]


def roll_report(output: str, service: str = "kafka_broker") -> tuple[list[str], list[str]]:
    """The order the roll of `service` (roles/roll's roll_services: kafka_broker, zookeeper, ...)
    planned and the hosts it read as leaders (ZooKeeper leader, ZooKeeper-mode controller) and so
    put last, from its "Report the order of the roll" line (printed by a check-only roll too)."""
    found = re.search(rf"roll of {re.escape(service)}:\s+order\s+(\S*)\s+leaders\s+read\s+([\w,.-]*)", output)
    assert found, f"no roll report of {service} in the output"
    return [h for h in found.group(1).split(",") if h], [h for h in found.group(2).split(",") if h]


def roll_leaders(output: str, service: str = "kafka_broker") -> list[str]:
    """The hosts the roll of `service` read as leaders (roll_report)."""
    return roll_report(output, service)[1]


def module_process(host: str, module: str, args: dict) -> subprocess.CompletedProcess[str]:
    """Run one of the kit's modules ad hoc on one host (ansible -m), whatever its outcome; JSON out."""
    env = {**os.environ, "ANSIBLE_CONFIG": "ansible.cfg", "ANSIBLE_NOCOLOR": "1", "ANSIBLE_LOAD_CALLBACK_PLUGINS": "1"}
    # JSON only: no timing callback lines around it.
    env.update(ANSIBLE_STDOUT_CALLBACK="ansible.posix.json", ANSIBLE_CALLBACKS_ENABLED="ansible.posix.json")
    return subprocess.run(
        ["ansible", "-i", str(ANSIBLE_INVENTORY), host, "-m", module, "-a", json.dumps(args)],
        cwd=ROOT / "ansible",
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def module_result(proc: subprocess.CompletedProcess[str], host: str) -> dict:
    """The module's result on `host` from module_process's JSON output."""
    data = json.loads(proc.stdout)
    return data["plays"][0]["tasks"][0]["hosts"][host]
