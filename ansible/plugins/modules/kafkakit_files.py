#!/usr/bin/python
"""Directories and small files of one role, made in one module run; runs on the host."""

from __future__ import annotations

DOCUMENTATION = r"""
module: kafkakit_files
short_description: Make a role's directories and small text files on a host in one run
description:
  - One module run for what would otherwise be one C(file) task per directory and two remote runs
    (stat, then copy or file) per C(template) or C(copy) task. On the lab every remote run costs about
    0.2 CPU-seconds (the module's Python is compiled anew each time), so a role's files in one run make a
    no-op deploy several times cheaper.
  - Directories are created when missing (with their missing parents) and their owner, group and mode
    enforced. A file is written, atomically, only when its content differs; its owner, group and mode
    are enforced either way.
  - Render templates on the controller (C(lookup('ansible.builtin.template', ...))) and pass the text.
  - A file that holds a secret takes its text in I(secret_content), which is never logged and never
    shown in a diff; I(content) is shown by C(--diff) like the template module shows it.
  - With I(unit), also reports whether any of the files, or of I(watch), is newer than the unit's last
    start (C(stale)), so that a run that failed between a change and its restart is caught by the next.
  - Check mode reports what would change and changes nothing.
options:
  directories:
    type: list
    elements: dict
    default: []
    description: Directories to have.
    suboptions:
      path: {type: path, required: true, description: The directory.}
      owner: {type: str, description: Its owner.}
      group: {type: str, description: Its group.}
      mode: {type: raw, description: Its mode (octal string).}
      create_only:
        type: bool
        default: false
        description: Give the attributes only to a directory made now; leave an existing one as it is.
  files:
    type: list
    elements: dict
    default: []
    description: Files to have, with exactly one of I(content), I(secret_content), I(src) and I(sha256) each.
    suboptions:
      dest: {type: path, required: true, description: The file.}
      content: {type: str, description: Its text, shown in a diff.}
      secret_content: {type: str, no_log: true, description: Its text when it holds a secret; never shown.}
      src: {type: path, description: A file on the host to copy (a key never leaves its host); never shown.}
      sha256:
        type: str
        description:
          - The SHA-256 the file must have; for a binary the caller copies (a jar). Nothing is written;
            when the file matches, its owner, group and mode are enforced, and otherwise (or missing) its
            I(dest) is returned in I(mismatched), so that the copy runs only then.
      owner: {type: str, description: Its owner.}
      group: {type: str, description: Its group.}
      mode: {type: raw, description: Its mode (octal string).}
      validate:
        type: str
        description:
          - A command that must accept the new text before it replaces the file, C(%s) standing for a
            temporary copy (as the C(copy) module's I(validate)). Not run in check mode.
  links:
    type: list
    elements: dict
    default: []
    description:
      - Symbolic links to have, made after the directories and files. A link that points elsewhere is
        replaced (atomically); a I(dest) that is not a link fails.
    suboptions:
      dest: {type: path, required: true, description: The link.}
      src: {type: path, required: true, description: What it points at.}
      require:
        type: path
        description:
          - A path that must exist first (an unpacked archive's marker). While it does not, the link is
            left as it is and its I(dest) returned in I(mismatched), so that the caller installs the
            target and then links it (a link never points at a half-installed target).
  read:
    type: dict
    default: {}
    description:
      - Files to read back, by a name of the caller's, after the directories and files are made. Their
        text is returned in I(read), C(null) for a missing file. Only for files that hold no secret.
  unit:
    type: str
    description: A systemd unit whose start time the files are compared with (see C(stale)); its state is returned too.
  watch:
    type: list
    elements: path
    default: []
    description: More paths (stores, binaries) compared with the unit's start time; missing ones are ignored.
author: kafkakit
"""

EXAMPLES = r"""
- name: Write the configuration
  kafkakit_files:
    directories:
      - {path: /etc/kafka, owner: root, group: kafka, mode: "0750"}
    files:
      - dest: /etc/kafka/log4j.properties
        content: "{{ lookup('ansible.builtin.template', 'log4j.properties.j2') }}"
        mode: "0644"
      - dest: /etc/kafka/server.properties
        secret_content: "{{ lookup('ansible.builtin.template', 'server.properties.j2') }}"
        owner: root
        group: kafka
        mode: "0640"
    unit: kafka.service
    watch: [/etc/kafka/ssl/kafka.keystore.p12]
  register: kafka_files
"""

RETURN = r"""
mismatched:
  description: The I(sha256) files that are missing or differ, and the I(links) whose I(require) is missing.
  returned: always
  type: list
  elements: str
changed_paths:
  description: The directories and files created or changed (content or attributes).
  returned: always
  type: list
  elements: str
stale:
  description: The unit is active and one of the files or I(watch) is newer than its last start.
  returned: always
  type: bool
read:
  description: The text of each file of I(read), by its name; null when the file is missing.
  returned: always
  type: dict
unit_active:
  description: The unit is active (with I(unit)), so a task that starts it can be skipped.
  returned: when I(unit) is given
  type: bool
unit_enabled:
  description: The unit is enabled (with I(unit)).
  returned: when I(unit) is given
  type: bool
"""

import hashlib
import os
import shlex
import tempfile
from typing import Any

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.kafkakit_units import newer_than, unit_state

HIDDEN = "(holds a secret: not shown)\n"


def fs_args(path: str, item: dict[str, Any]) -> dict[str, Any]:
    """The attribute arguments AnsibleModule.set_fs_attributes_if_different takes."""
    mode = item.get("mode")
    return {
        "path": path,
        "owner": item.get("owner"),
        "group": item.get("group"),
        "mode": str(mode) if mode is not None else None,
        "seuser": None,
        "serole": None,
        "setype": None,
        "selevel": None,
        "secontext": [None, None, None],
        "attributes": None,
    }


def make_directory(module: AnsibleModule, item: dict[str, Any]) -> bool:
    path = item["path"]
    changed = False
    if item.get("create_only") and os.path.isdir(path):
        return False
    if not os.path.isdir(path):
        if os.path.exists(path):
            module.fail_json(msg=f"{path} exists and is not a directory")
        changed = True
        if module.check_mode:
            return True
        os.makedirs(path)
    return module.set_fs_attributes_if_different(fs_args(path, item), changed)


def read_text(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", errors="surrogateescape")
    except FileNotFoundError:
        return None


def write_file(module: AnsibleModule, item: dict[str, Any], diffs: list[dict[str, str]]) -> bool:
    dest = item["dest"]
    secret = item.get("content") is None
    if item.get("src") is not None:
        text = read_text(item["src"])
        if text is None:
            module.fail_json(msg=f"{item['src']} (to copy to {dest}) does not exist")
    else:
        text = item["secret_content"] if secret else item["content"]
    before = read_text(dest)
    changed = before != text
    if changed:
        diffs.append(
            {
                "before_header": dest,
                "after_header": dest,
                "before": (HIDDEN if secret else before) if before is not None else "",
                "after": HIDDEN if secret else text,
            }
        )
        if module.check_mode:
            return True
        directory = os.path.dirname(dest)
        fd, tmp = tempfile.mkstemp(prefix=".kafkakit-", dir=directory)
        with os.fdopen(fd, "wb") as f:
            f.write(text.encode("utf-8", errors="surrogateescape"))
        if item.get("validate"):
            validate(module, item["validate"], tmp, dest)
        module.atomic_move(tmp, dest)
    if module.check_mode and before is None:
        return changed
    return module.set_fs_attributes_if_different(fs_args(dest, item), changed)


def make_link(module: AnsibleModule, item: dict[str, Any]) -> bool:
    dest, src = item["dest"], item["src"]
    if os.path.islink(dest):
        if os.readlink(dest) == src:
            return False
    elif os.path.lexists(dest):
        module.fail_json(msg=f"{dest} exists and is not a symbolic link")
    if module.check_mode:
        return True
    tmp = os.path.join(os.path.dirname(dest), f".kafkakit-link-{os.getpid()}")
    os.symlink(src, tmp)
    os.replace(tmp, dest)
    return True


def matches(path: str, sha256: str) -> bool:
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
    except FileNotFoundError:
        return False
    return digest.hexdigest() == sha256.lower()


def validate(module: AnsibleModule, command: str, tmp: str, dest: str) -> None:
    """Run the file's validate command on the temporary copy; refuse the file (and remove the copy)
    when it fails."""
    if "%s" not in command:
        os.unlink(tmp)
        module.fail_json(msg=f"validate for {dest} must contain %s: {command}")
    rc, out, err = module.run_command(command % shlex.quote(tmp))
    if rc != 0:
        os.unlink(tmp)
        module.fail_json(msg=f"{command % dest} refused the new {dest}: {(err or out).strip()}")


def dict_list(options: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """The argument spec of a list of dicts with these suboptions, empty by default."""
    return {"type": "list", "elements": "dict", "default": [], "options": options, **extra}


def main() -> None:
    attrs = {"owner": {"type": "str"}, "group": {"type": "str"}, "mode": {"type": "raw"}}
    contents = ["content", "secret_content", "src", "sha256"]
    module = AnsibleModule(
        argument_spec={
            "directories": dict_list(
                {"path": {"type": "path", "required": True}, "create_only": {"type": "bool", "default": False}, **attrs}
            ),
            "files": dict_list(
                {
                    "dest": {"type": "path", "required": True},
                    "content": {"type": "str"},
                    "secret_content": {"type": "str", "no_log": True},
                    "src": {"type": "path"},
                    "sha256": {"type": "str"},
                    "validate": {"type": "str"},
                    **attrs,
                },
                mutually_exclusive=[contents],
                required_one_of=[contents],
            ),
            "links": dict_list(
                {
                    "dest": {"type": "path", "required": True},
                    "src": {"type": "path", "required": True},
                    "require": {"type": "path"},
                }
            ),
            "read": {"type": "dict", "default": {}},
            "unit": {"type": "str"},
            "watch": {"type": "list", "elements": "path", "default": []},
        },
        supports_check_mode=True,
    )
    changed_paths: list[str] = []
    mismatched: list[str] = []
    diffs: list[dict[str, str]] = []
    for item in module.params["directories"]:
        if make_directory(module, item):
            changed_paths.append(item["path"])
    for item in module.params["files"]:
        if item.get("sha256") is not None:
            if not matches(item["dest"], item["sha256"]):
                mismatched.append(item["dest"])
            elif module.set_fs_attributes_if_different(fs_args(item["dest"], item), False):
                changed_paths.append(item["dest"])
        elif write_file(module, item, diffs):
            changed_paths.append(item["dest"])
    for item in module.params["links"]:
        if item.get("require") and not os.path.exists(item["require"]):
            mismatched.append(item["dest"])
        elif make_link(module, item):
            changed_paths.append(item["dest"])
    result: dict[str, Any] = {
        "changed": bool(changed_paths),
        "changed_paths": changed_paths,
        "mismatched": mismatched,
        "stale": False,
        "read": {name: read_text(str(path)) for name, path in module.params["read"].items()},
    }
    if module.params["unit"]:
        state = unit_state(module, module.params["unit"])
        paths = [item["dest"] for item in module.params["files"]] + module.params["watch"]
        result["stale"] = state["start"] is not None and bool(newer_than(paths, state["start"]))
        result["unit_active"] = state["active"]
        result["unit_enabled"] = state["enabled"]
    if module._diff and diffs:
        result["diff"] = diffs
    module.exit_json(**result)


if __name__ == "__main__":
    main()
