"""What the kit's modules read of a systemd unit: when it last started, and which files are newer
(kafkakit_files's staleness, kafkakit_principal_state's "has the server loaded its config")."""

from __future__ import annotations

import os
import subprocess
from typing import Any

from ansible.module_utils.basic import AnsibleModule


def unit_state(module: AnsibleModule, unit: str) -> dict[str, Any]:
    """The unit's state, from one systemctl call (parse_unit_state)."""
    proc = subprocess.run(
        ["systemctl", "show", "--timestamp=unix", *[f"--property={p}" for p in PROPERTIES], unit],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        module.fail_json(msg=f"systemctl show {unit} failed: {proc.stderr.strip()}")
    return parse_unit_state(proc.stdout)


PROPERTIES = ("ActiveState", "ActiveEnterTimestamp", "UnitFileState")


def parse_unit_state(show: str) -> dict[str, Any]:
    """active and enabled (what systemd_service's started/enabled would change), and start: the
    last start as a Unix time, None when the unit is not active."""
    props = dict(line.split("=", 1) for line in show.splitlines() if "=" in line)
    active = props.get("ActiveState") == "active"
    stamp = props.get("ActiveEnterTimestamp", "")
    return {
        "active": active,
        "enabled": props.get("UnitFileState") == "enabled",
        "start": float(stamp[1:]) if active and stamp.startswith("@") else None,
    }


def unit_start(module: AnsibleModule, unit: str) -> float | None:
    """The unit's last start as a Unix time, None when it is not active."""
    return unit_state(module, unit)["start"]


def newer_than(paths: list[str], start: float) -> list[str]:
    # The start time has whole seconds: a file written in the same second as the start is older.
    newer = []
    for path in paths:
        try:
            if os.stat(path).st_mtime >= start + 1:
                newer.append(path)
        except FileNotFoundError:
            continue
    return newer
