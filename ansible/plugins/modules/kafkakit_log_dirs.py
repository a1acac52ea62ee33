#!/usr/bin/python
"""A broker's log directories, their topic ids and sizes; and removing the ones named; runs on the broker."""

from __future__ import annotations

DOCUMENTATION = r"""
module: kafkakit_log_dirs
short_description: List the entries of a broker's log dirs with their topic ids and sizes, remove named ones
description:
  - Lists every directory directly under each of I(dirs) with the topic id of its
    C(partition.metadata) (none when absent) and the bytes it takes on disk, and the size and the
    space an unprivileged writer still has on each dir's filesystem.
  - With I(remove), deletes those entries (C(dir) and C(name) as listed) and reports the space
    after. Which entries may go is not this module's choice (kafkakit.guards.log_reclaim decides, on the
    controller); it only refuses a name that is not a directory directly under one of I(dirs).
options:
  dirs: {type: list, elements: path, required: true, description: The broker's log.dirs.}
  remove:
    type: list
    elements: dict
    default: []
    description: Entries to delete, each C({dir, name}) as this module listed them.
author: kafkakit
"""

EXAMPLES = r"""
- name: List the log dirs
  kafkakit_log_dirs:
    dirs: [/var/lib/kafka/data]
"""

RETURN = r"""
entries:
  description: Each entry C({dir, name, topic_id, bytes}).
  type: list
  returned: always
volumes:
  description: Each dir's filesystem C({dir, size_bytes, avail_bytes}), after any removal.
  type: list
  returned: always
removed: {description: The entries deleted (or that would be, in check mode)., type: list, returned: always}
"""

import os
import shutil

from ansible.module_utils.basic import AnsibleModule


def disk_bytes(path: str) -> int:
    """Blocks in use, not apparent sizes: Kafka's index files are preallocated sparse."""
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in [*files, "."]:
            try:
                total += os.lstat(os.path.join(root, name)).st_blocks * 512
            except OSError:
                pass
    return total


def topic_id(path: str) -> str | None:
    try:
        with open(os.path.join(path, "partition.metadata"), encoding="utf-8") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() == "topic_id":
                    return value.strip() or None
    except OSError:
        return None
    return None


def volume(path: str) -> dict[str, object]:
    st = os.statvfs(path)
    return {"dir": path, "size_bytes": st.f_blocks * st.f_frsize, "avail_bytes": st.f_bavail * st.f_frsize}


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "dirs": {"type": "list", "elements": "path", "required": True},
            "remove": {"type": "list", "elements": "dict", "default": []},
        },
        supports_check_mode=True,
    )
    dirs = [os.path.normpath(d) for d in module.params["dirs"]]
    missing = [d for d in dirs if not os.path.isdir(d)]
    if missing:
        module.fail_json(msg=f"not a directory: {', '.join(missing)}")
    entries = [
        {"dir": d, "name": n, "topic_id": topic_id(os.path.join(d, n)), "bytes": disk_bytes(os.path.join(d, n))}
        for d in dirs
        for n in sorted(os.listdir(d))
        if os.path.isdir(os.path.join(d, n)) and not os.path.islink(os.path.join(d, n))
    ]
    listed = {(e["dir"], e["name"]) for e in entries}
    removed = []
    for item in module.params["remove"]:
        where = (os.path.normpath(str(item.get("dir", ""))), str(item.get("name", "")))
        if where not in listed or "/" in where[1] or where[1] in ("", ".", ".."):
            module.fail_json(msg=f"not an entry of the log dirs: {where[0]}/{where[1]}", entries=entries)
        removed.append({"dir": where[0], "name": where[1]})
    if removed and not module.check_mode:
        for item in removed:
            shutil.rmtree(os.path.join(item["dir"], item["name"]))
        gone = {(i["dir"], i["name"]) for i in removed}
        entries = [e for e in entries if (e["dir"], e["name"]) not in gone]
    module.exit_json(changed=bool(removed), entries=entries, volumes=[volume(d) for d in dirs], removed=removed)


if __name__ == "__main__":
    main()
