"""Print how to reach the lab after `make lab` (python -m kafkakit.tooling.labinfo)."""

from __future__ import annotations

import sys
from pathlib import Path

import yaml


def describe(build_lab: Path) -> str:
    doc = yaml.safe_load((build_lab / "hosts.yml").read_text())
    children = doc["all"]["children"]
    lines = ["", "The kafkakit lab is up.", ""]
    dcs = sorted({hv["dc"] for g in children.values() for hv in ((g or {}).get("hosts") or {}).values() if hv})
    for dc in dcs:
        hosts = children[dc]["hosts"]
        conf = build_lab / dc / "client.conf"
        lines.append(
            f"  {dc}: " + ", ".join(f"{h} ({hv['private_ip']}, {hv['kafka_rack']})" for h, hv in hosts.items())
        )
        lines.append(f"    kcat -F {conf} -L")
        lines.append(f"    Java clients: --command-config {build_lab / dc / 'client.properties'}")
    lines += [
        "",
        f"  Inventory: {build_lab / 'hosts.yml'}  (ssh key {build_lab / 'ssh/id_ed25519'})",
        "  A shell on a host: podman exec -it dc1-kafka1 bash",
        "  Tear down: make lab-down",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    print(describe(Path(sys.argv[1] if len(sys.argv) > 1 else "build/lab")))
