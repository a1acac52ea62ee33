#!/usr/bin/python
"""Whether the declared retention fits a broker's data volume; runs on the broker."""

from __future__ import annotations

DOCUMENTATION = r"""
module: kafkakit_volume_fit
short_description: Warn when the retention declared for a broker cannot fit its data volume
description:
  - Reads the size of the filesystem that holds I(path) and compares it with I(need_bytes), the bytes
    the size-bounded topics can put on this broker (the kafkakit_retention_need filter works it out
    from the inventory's topics).
  - When the need is above I(ratio) of the volume, returns a warning naming the largest topics. A full
    log dir stops the broker, so this is the warning before that happens; it changes nothing.
options:
  path: {type: path, required: true, description: A data directory of the broker.}
  need_bytes: {type: int, required: true, description: The bytes the declared retention can take on this broker.}
  need_detail:
    type: list
    elements: str
    default: []
    description: One line per size-bounded topic, largest first, for the warning.
  ratio:
    type: float
    default: 0.8
    description: The share of the volume the retention may take (the data-disk alert's threshold).
author: kafkakit
"""

EXAMPLES = r"""
- name: Warn when the declared retention cannot fit the data volume
  kafkakit_volume_fit:
    path: /var/lib/kafka/data
    need_bytes: "{{ need.bytes }}"
    need_detail: "{{ need.topics }}"
    ratio: 0.8
"""

RETURN = r"""
volume_bytes:
  description: The size of the filesystem that holds I(path).
  returned: always
  type: int
fits:
  description: I(need_bytes) is at most I(ratio) of I(volume_bytes).
  returned: always
  type: bool
"""

import os

from ansible.module_utils.basic import AnsibleModule


def gib(n: float) -> str:
    return f"{n / 1024**3:.1f} GiB"


def fit_warning(path: str, volume_bytes: int, need_bytes: int, detail: list[str], ratio: float) -> str | None:
    """The warning, or None when the need fits below `ratio` of the volume (where the disk alert
    fires: a volume filled that far already pages someone)."""
    if need_bytes <= ratio * volume_bytes:
        return None
    return (
        f"the declared retention can take {gib(need_bytes)} of the {gib(volume_bytes)} volume at {path},"
        f" more than {ratio:.0%} (where the disk alert fires; a full log dir stops the broker): "
        + "; ".join(detail[:5])
        + ". Lower retention.bytes or grow the volume."
    )


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "path": {"type": "path", "required": True},
            "need_bytes": {"type": "int", "required": True},
            "need_detail": {"type": "list", "elements": "str", "default": []},
            "ratio": {"type": "float", "default": 0.8},
        },
        supports_check_mode=True,
    )
    p = module.params
    try:
        st = os.statvfs(p["path"])
    except OSError as e:
        module.fail_json(msg=f"{p['path']}: {e.strerror}")
    volume = st.f_blocks * st.f_frsize
    warning = fit_warning(p["path"], volume, p["need_bytes"], p["need_detail"], p["ratio"])
    if warning:
        module.warn(warning)
    module.exit_json(changed=False, volume_bytes=volume, fits=warning is None)


if __name__ == "__main__":
    main()
