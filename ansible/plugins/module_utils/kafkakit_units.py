"""What the kit's modules read of a systemd unit: when it last started, and which files are newer
(kafkakit_files's staleness, kafkakit_principal_state's "has the server loaded its config")."""

from __future__ import annotations

import os
import subprocess

from ansible.module_utils.basic import AnsibleModule


def unit_start(module: AnsibleModule, unit: str) -> float | None:
    """The unit's last start as a Unix time, None when it is not active."""
    proc = subprocess.run(
        ["systemctl", "show", "--timestamp=unix", "-p", "ActiveState", "-p", "ActiveEnterTimestamp", unit],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        module.fail_json(msg=f"systemctl show {unit} failed: {proc.stderr.strip()}")
    props = dict(line.split("=", 1) for line in proc.stdout.splitlines() if "=" in line)
    if props.get("ActiveState") != "active" or not props.get("ActiveEnterTimestamp", "").startswith("@"):
        return None
    return float(props["ActiveEnterTimestamp"][1:])


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
