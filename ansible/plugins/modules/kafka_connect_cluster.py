#!/usr/bin/python
"""Read, and wait for, a Kafka Connect cluster's health; runs on the controller."""

from __future__ import annotations

DOCUMENTATION = r"""
module: kafka_connect_cluster
short_description: Read a Connect cluster through its REST API (mutual TLS)
description:
  - Asks every worker C(GET /), C(GET /health), Connect's own readiness (the worker has joined
    its group and read the config topic), and C(GET /connectors?expand=status), over HTTPS with a
    client certificate.
  - Judged by C(kafkakit.cluster.connect.cluster_problems). With I(wait) it reads again until healthy or
    I(timeout), then fails naming every problem; without it only reports (a roll's health gate
    judges C(problems) itself).
  - Runs on the Ansible controller (C(delegate_to) localhost).
options:
  workers: {type: dict, required: true, description: Worker host name -> REST URL (https://ip:port).}
  ca: {type: path, required: true, description: CA bundle the workers' certificates chain to.}
  cert: {type: path, required: true, description: Client certificate of the kit's CA.}
  key: {type: path, required: true, description: Its private key.}
  group: {type: str, required: true, description: The workers' group.id (named in the messages).}
  expect_connectors: {type: list, elements: str, default: [], description: Connectors that must exist.}
  require_running: {type: bool, default: false, description: Every expected connector and task RUNNING too.}
  restart_failed:
    type: bool
    default: false
    description:
      - First restart what is FAILED of each connector (Connect's C(onlyFailed) restart, the tasks
        included), nothing that runs; then wait as usual. Check mode names them only.
  restart_lost:
    type: bool
    default: false
    description:
      - While waiting with I(require_running), restart once a task some worker has answered without
        the status another worker has, in every read for I(lost_grace) seconds
        (C(kafkakit.cluster.connect.LostStatusRepair)). Check mode names it only.
  lost_grace: {type: int, default: 60, description: Seconds a lost task status is waited for before restart_lost acts.}
  wait: {type: bool, default: true, description: Wait until healthy; false only reports.}
  timeout: {type: int, default: 300, description: Seconds to wait.}
author: kafkakit
"""

RETURN = r"""
problems: {description: Why the cluster is not healthy (empty when healthy)., type: list, returned: always}
restarted:
  description: Connectors (restart_failed) and tasks (restart_lost, as <connector>-<id>) restarted.
  type: list
  returned: always
workers: {description: Each answering worker's GET / (version, commit, kafka_cluster_id)., type: dict, returned: always}
errors: {description: Workers that did not answer, and why., type: dict, returned: always}
health: {description: Each answering worker's GET /health status (healthy, or why not)., type: dict, returned: always}
connectors: {description: Each connector's state and its tasks' states and workers., type: dict, returned: always}
"""

from ansible.module_utils.basic import AnsibleModule


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "workers": {"type": "dict", "required": True},
            "ca": {"type": "path", "required": True},
            "cert": {"type": "path", "required": True},
            "key": {"type": "path", "required": True},
            "group": {"type": "str", "required": True},
            "expect_connectors": {"type": "list", "elements": "str", "default": []},
            "require_running": {"type": "bool", "default": False},
            "restart_failed": {"type": "bool", "default": False},
            "restart_lost": {"type": "bool", "default": False},
            "lost_grace": {"type": "int", "default": 60},
            "wait": {"type": "bool", "default": True},
            "timeout": {"type": "int", "default": 300},
        },
        supports_check_mode=True,
    )
    from kafkakit.cluster.connect import (
        ClusterView,
        LostStatusRepair,
        RestError,
        TlsFiles,
        cluster_problems,
        read_cluster,
        settled,
        wait_cluster,
    )
    from kafkakit.cluster.connectors import restart_failed, restart_task

    p = module.params
    tls = TlsFiles(p["ca"], p["cert"], p["key"])
    workers = list(p["workers"])

    def read() -> ClusterView:
        return read_cluster(p["workers"], tls)

    def judge(view: ClusterView) -> list[str]:
        return cluster_problems(view, workers, p["expect_connectors"], p["require_running"])

    restarted: list[str] = []
    if p["restart_failed"]:
        restarted = [c.name for c in read().connectors if c.failed()]
        if restarted and not module.check_mode:
            url = next(iter(p["workers"].values()))
            try:
                restart_failed(url, tls, restarted, settled())
            except RestError as exc:
                module.fail_json(msg=f"Connect refused a restart: {exc}", changed=False, restarted=restarted)

    def restart_lost(name: str, task: int) -> None:
        if module.check_mode:
            return
        try:
            restart_task(next(iter(p["workers"].values())), tls, name, task, settled())
        except RestError as exc:
            done = restarted + (repair.restarted if repair else [])
            module.fail_json(msg=f"Connect refused to restart {name}-{task}: {exc}", changed=bool(done), restarted=done)

    repair = LostStatusRepair(restart_lost, p["lost_grace"]) if p["restart_lost"] and p["require_running"] else None
    view, problems = wait_cluster(read, judge, p["timeout"] if p["wait"] else 0, repair=repair)
    restarted += repair.restarted if repair else []
    result = {"changed": bool(restarted), "restarted": restarted, "problems": problems, **view.as_dict()}
    if p["wait"] and problems:
        module.fail_json(
            msg=f"Connect cluster {p['group']} not healthy after {p['timeout']}s: " + "; ".join(problems), **result
        )
    module.exit_json(**result)


if __name__ == "__main__":
    main()
