#!/usr/bin/python
"""Format a KRaft node's log directories with Kafka's own storage tool, once and safely; runs on the host."""

from __future__ import annotations

DOCUMENTATION = r"""
module: kafka_storage_format
short_description: Format the log directories of a KRaft controller or broker, once, with Kafka's storage tool
description:
  - Runs Kafka's own C(kafka-storage format) (the class C(kafka.tools.StorageTool), started with
    C(java -cp '<kafka_home>/libs/*') as the kit's units do) for the node described by I(config), that is
    its C(log.dirs) (or C(log.dir)) and C(metadata.log.dir), and its C(node.id).
  - Idempotent. A directory whose C(meta.properties) already holds I(cluster_id) and the node's id is
    left alone (ok, unchanged). Only a missing or empty directory is formatted. When some directories
    are formatted and others are empty (a disk added), only the empty ones are, with C(--ignore-formatted).
  - A ZooKeeper-mode broker's directory (C(meta.properties) version 0 with C(broker.id)) counts as formatted
    for the node whose id is that C(broker.id), so a broker migrated to KRaft keeps its data.
  - Never reformats. A directory holding another cluster's id or another node id, a C(meta.properties)
    that is unreadable, incomplete or of an unknown version, or files without a C(meta.properties), is
    refused with one message per directory and nothing is changed.
  - The dynamic quorum (KIP-853) I(quorum) C(initial_controllers) for the first formatting of a data
    centre's controllers (C(--initial-controllers), every initial voter's C(id@host:port:directory-id)),
    C(no_initial_controllers) for brokers and for controllers added to a running quorum, C(standalone) for
    a single first controller (C(--standalone)).
  - I(scram_users) become C(--add-scram) bootstrap credentials (KRaft has no other way to create the first
    admin); they are never logged. I(release_version) becomes C(--release-version).
  - The storage tool is the release of I(kafka_home) (its C(libs/kafka_2.13-<version>.jar)). Kafka 4.4's
    format is not forward-compatible (KIP-1170 moved the bootstrap metadata into the zero checkpoint of
    C(__cluster_metadata-0)), so a node must run that release or a newer one. With I(kafka_version), the
    release the node runs, a tool of another release is refused before anything is formatted.
  - With I(record), the release that formatted each directory is kept in that JSON file (directory to
    release), which ops/upgrade.yml reads to refuse moving the node to an older release.
  - Check mode reports what would be formatted and runs nothing.
  - Runs on the Kafka host itself (not delegated).
options:
  config: {type: path, required: true, description: The node's server.properties or controller.properties.}
  cluster_id: {type: str, required: true, description: 'The data centre''s cluster id (22 characters, base64url).'}
  node_id:
    type: int
    description:
      - The node id expected in I(config) (C(node.id)); the run fails when they differ. Omitted, the
        config's C(node.id) is the expected one.
  kafka_home: {type: path, required: true, description: 'Kafka installation; its C(libs/) is the class path.'}
  java: {type: path, default: /usr/bin/java, description: The Java launcher.}
  java_opts:
    type: list
    elements: str
    default: [-Xmx256m]
    description: JVM options of the tool run.
  quorum:
    type: str
    required: true
    choices: [initial_controllers, no_initial_controllers, standalone]
    description: How the node enters the dynamic controller quorum (see the description).
  initial_controllers:
    type: str
    description:
      - 'C(id@host:port:directory-id), comma-separated: every initial voter. Required with
        I(quorum=initial_controllers).'
  scram_users:
    type: list
    elements: dict
    default: []
    description: SCRAM credentials stored in the bootstrap metadata (C(--add-scram)); never logged.
    suboptions:
      name: {type: str, required: true, description: User name.}
      password: {type: str, required: true, no_log: true, description: Its password.}
      mechanism:
        type: str
        default: SCRAM-SHA-512
        choices: [SCRAM-SHA-256, SCRAM-SHA-512]
        description: SCRAM mechanism.
      iterations: {type: int, description: SCRAM iterations (Kafka's default when omitted).}
  release_version:
    type: str
    description: 'C(--release-version), for example C(4.3); omitted, the tool''s latest production version.'
  owner: {type: str, description: Owner given to the formatted directories and their files.}
  group: {type: str, description: Group given to the formatted directories and their files.}
  timeout: {type: int, default: 120, description: Seconds the storage tool may run.}
  kafka_version:
    type: str
    description:
      - The Kafka release the node runs (for example C(4.4.0)); the storage tool of I(kafka_home) must be
        that release. Omitted, not checked.
  record:
    type: path
    description: JSON file kept with the release that formatted each directory; omitted, none is kept.
author: kafkakit
"""

EXAMPLES = r"""
- name: Format the controller's metadata log directory (first formatting of the quorum)
  kafka_storage_format:
    config: /etc/kafka/controller.properties
    kafka_home: /opt/kafka
    cluster_id: "{{ kafka_cluster_id }}"
    quorum: initial_controllers
    initial_controllers: >-
      101@10.0.1.11:9094:pbvuBlaTTwKRxS5NLJwRFQ,102@10.0.2.11:9094:VuC5Gz3eRR2DaYvZV2Mf8Q,103@10.0.3.11:9094:Lhk4H1hsQ1qW7nVa7Kp2hA
    owner: kafka
    group: kafka

- name: Format a broker's log directories with the admin's bootstrap SCRAM credential
  kafka_storage_format:
    config: /etc/kafka/server.properties
    kafka_home: /opt/kafka
    cluster_id: "{{ kafka_cluster_id }}"
    quorum: no_initial_controllers
    scram_users:
      - {name: admin, password: "{{ kafka_admin_password }}", iterations: 8192}
    owner: kafka
    group: kafka
"""

RETURN = r"""
dirs: {description: Every log directory of the node (metadata one included)., type: list, returned: always}
formatted: {description: The directories formatted (check mode - to be formatted)., type: list, returned: always}
already_formatted: {description: Directories already formatted for this cluster and node., type: list, returned: always}
node_id: {description: The node id of the config., type: int, returned: always}
cluster_id: {description: The cluster id., type: str, returned: always}
tool_version:
  description: The release of the storage tool in I(kafka_home) ('' when it cannot be read).
  type: str
  returned: always
formatted_by:
  description: The record (directory -> release that formatted it); empty without I(record).
  type: dict
  returned: always
directory_id:
  description:
    - C(directory.id) of the metadata log directory (C(metadata.log.dir), else the first log directory),
      as the dynamic quorum knows this node; empty in check mode before a first format.
  type: str
  returned: always
"""

import json
import os
import re
import subprocess
from dataclasses import dataclass, field

from ansible.module_utils.basic import AnsibleModule

META = "meta.properties"
# Kafka's Uuid in its text form: 16 bytes, base64url without padding.
UUID_TEXT = re.compile(r"^[A-Za-z0-9_-]{22}$")
# What KRaft writes (version 1): these keys, directory.id optional (older formats lack it).
META_V1_REQUIRED = ("version", "cluster.id", "node.id")
META_V1_KEYS = {"version", "cluster.id", "node.id", "directory.id"}
# Characters that would break the tool's SCRAM argument syntax: SCRAM-SHA-512=[name=...,password=...].
SCRAM_UNSAFE = re.compile(r"[,\[\]\"\s]")
QUORUM_FLAGS = {"no_initial_controllers": ["--no-initial-controllers"], "standalone": ["--standalone"]}
# The tool prints the bootstrap metadata it writes, SCRAM credentials with their salt and salted keys
# among it (4.3 and 4.4 alike): enough for an offline guess of the password, never returned.
SCRAM_RECORD = re.compile(r"UserScramCredentialRecord\((name='[^']*')?[^)]*\)")
# The core jar every Kafka archive carries, named by its release (Apache's and the kit's alike).
CORE_JAR = re.compile(r"^kafka_\d+\.\d+-(\d+\.\d+\.\d+(?:-[\w.]+)?)\.jar$")


class FormatError(Exception):
    """A refusal: the directories are left as they are."""


def read_properties(text: str) -> dict[str, str]:
    """A Java .properties file's key=value pairs (comments and blank lines skipped; no continuations)."""
    props: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#!":
            continue
        cut = min((i for i in (line.find("="), line.find(":")) if i >= 0), default=-1)
        key, value = (line[:cut], line[cut + 1 :]) if cut >= 0 else (line, "")
        props[key.strip()] = value.strip()
    return props


def node_dirs(config: dict[str, str]) -> list[str]:
    """The node's log directories as Kafka finds them: log.dirs, else log.dir, plus metadata.log.dir."""
    dirs = [d.strip() for d in (config.get("log.dirs") or config.get("log.dir") or "").split(",") if d.strip()]
    metadata = config.get("metadata.log.dir", "").strip()
    if metadata and metadata not in dirs:
        dirs.append(metadata)
    if not dirs:
        raise FormatError("the config names no log directory (log.dirs, log.dir or metadata.log.dir)")
    return dirs


@dataclass
class Plan:
    dirs: list[str]
    to_format: list[str] = field(default_factory=list)
    formatted: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def inspect_dir(path: str, cluster_id: str, node_id: int) -> str | None:
    """'empty', 'formatted' (for this cluster and node), or raise FormatError saying why it is refused."""
    if not os.path.exists(path):
        return "empty"
    if not os.path.isdir(path):
        raise FormatError(f"{path} is not a directory")
    entries = os.listdir(path)
    if not entries:
        return "empty"
    meta_path = os.path.join(path, META)
    if META not in entries:
        raise FormatError(
            f"{path} holds files ({', '.join(sorted(entries)[:5])}) but no {META}: it is not an empty directory "
            "and not a formatted one; refusing to format over it"
        )
    try:
        with open(meta_path, encoding="utf-8") as f:
            meta = read_properties(f.read())
    except (OSError, UnicodeDecodeError) as exc:
        raise FormatError(f"{meta_path} cannot be read ({exc}); refusing to touch {path}") from exc
    if meta.get("version") == "0" and "broker.id" in meta and "node.id" not in meta:
        # A ZooKeeper-mode broker's directory carried into KRaft (ops/migrate-to-kraft.yml): Kafka reads it
        # as it is, its broker.id being the node id; it is formatted, never to be formatted again.
        meta = {**{k: v for k, v in meta.items() if k != "broker.id"}, "version": "1", "node.id": meta["broker.id"]}
    missing = [k for k in META_V1_REQUIRED if not meta.get(k)]
    if missing:
        raise FormatError(
            f"{meta_path} is incomplete (no {', '.join(missing)}): a partial or foreign format; "
            f"refusing to reformat {path}, inspect it by hand"
        )
    if meta["version"] != "1":
        raise FormatError(
            f"{meta_path} has version {meta['version']} (KRaft writes 1; 0 is ZooKeeper mode's): "
            f"refusing to reformat {path}"
        )
    unexpected = sorted(set(meta) - META_V1_KEYS)
    if unexpected:
        raise FormatError(f"{meta_path} has unexpected keys {unexpected}; refusing to reformat {path}")
    if meta["cluster.id"] != cluster_id:
        raise FormatError(
            f"{path} belongs to another cluster (cluster.id {meta['cluster.id']}, expected {cluster_id}); "
            "refusing to reformat it: move its data away by hand if it is really not needed"
        )
    if meta["node.id"] != str(node_id):
        raise FormatError(
            f"{path} belongs to another node (node.id {meta['node.id']}, this node is {node_id}); "
            "refusing to reformat it"
        )
    return "formatted"


def metadata_directory_id(config: dict[str, str]) -> str:
    """directory.id of the metadata log directory (KIP-853 names a voter by node id and this), or ''."""
    path = config.get("metadata.log.dir", "").strip() or node_dirs(config)[0]
    try:
        with open(os.path.join(path, META), encoding="utf-8") as f:
            return read_properties(f.read()).get("directory.id", "")
    except OSError:
        return ""


def plan_format(dirs: list[str], cluster_id: str, node_id: int) -> Plan:
    """Which directories to format and which are refused, touching nothing."""
    plan = Plan(dirs=dirs)
    for d in dirs:
        try:
            state = inspect_dir(d, cluster_id, node_id)
        except FormatError as exc:
            plan.problems.append(str(exc))
            continue
        (plan.formatted if state == "formatted" else plan.to_format).append(d)
    return plan


def scram_argument(user: dict) -> str:
    """One --add-scram value; refused when a name or password would break the tool's syntax."""
    for key in ("name", "password"):
        if not user.get(key) or SCRAM_UNSAFE.search(str(user[key])):
            raise FormatError(
                f"SCRAM user {user.get('name') if key == 'password' else '(a name)'}: its {key} is empty or holds a "
                "comma, bracket, quote or blank, which kafka-storage's --add-scram syntax cannot carry"
            )
    fields = [f"name={user['name']}", f"password={user['password']}"]
    if user.get("iterations"):
        fields.append(f"iterations={int(user['iterations'])}")
    return f"{user.get('mechanism') or 'SCRAM-SHA-512'}=[{','.join(fields)}]"


def storage_command(params: dict, ignore_formatted: bool) -> list[str]:
    """The kafka-storage format command line for these module parameters."""
    cmd = [params["java"], *params["java_opts"], "-cp", os.path.join(params["kafka_home"], "libs", "*")]
    cmd += ["kafka.tools.StorageTool", "format", "--config", params["config"], "--cluster-id", params["cluster_id"]]
    if params["quorum"] == "initial_controllers":
        cmd += ["--initial-controllers", params["initial_controllers"]]
    else:
        cmd += QUORUM_FLAGS[params["quorum"]]
    if params.get("release_version"):
        cmd += ["--release-version", params["release_version"]]
    for user in params.get("scram_users") or []:
        cmd += ["--add-scram", scram_argument(user)]
    if ignore_formatted:
        cmd.append("--ignore-formatted")
    return cmd


def redacted(output: str) -> str:
    """The tool's output without the SCRAM credentials' salts and keys (the user's name stays)."""
    return SCRAM_RECORD.sub(lambda m: f"UserScramCredentialRecord({m.group(1) or ''}, <redacted>)", output)


def tool_version(kafka_home: str) -> str:
    """The Kafka release of an installation, from its core jar (libs/kafka_2.13-4.4.0.jar); '' if none."""
    try:
        names = os.listdir(os.path.join(kafka_home, "libs"))
    except OSError:
        return ""
    found = sorted(
        {m.group(1) for n in names if (m := CORE_JAR.match(n)) and not n.endswith(("-test.jar", "-sources.jar"))}
    )
    return found[0] if len(found) == 1 else ""


def tool_refusal(tool: str, kafka_home: str, node_version: str | None) -> str:
    """Why the storage tool of `kafka_home` must not format this node ('' when it may)."""
    if not node_version:
        return ""
    if not tool:
        return (
            f"cannot tell which Kafka release {kafka_home} holds (no single libs/kafka_2.13-<version>.jar): "
            f"refusing to format a node that runs {node_version} with it"
        )
    if tool != node_version:
        return (
            f"refusing to format with Kafka {tool}'s storage tool ({kafka_home}): this node runs {node_version}. "
            "Storage formatted by Kafka 4.4 or later is not forward-compatible, and the kit formats with the "
            "release the node runs: install it first"
        )
    return ""


def read_record(path: str | None) -> dict[str, str]:
    """The record of which release formatted each directory; {} when there is none yet."""
    if not path or not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    if not isinstance(data, dict):
        raise FormatError(f"{path} is not a record of formatted directories (a JSON object)")
    return {str(k): str(v) for k, v in data.items()}


def write_record(path: str, record: dict[str, str]) -> None:
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(dict(sorted(record.items())), f, indent=1)
        f.write("\n")
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


def check_params(params: dict, config: dict[str, str]) -> int:
    """The node id, after the checks that need no directory; raises FormatError."""
    if not UUID_TEXT.match(params["cluster_id"]):
        raise FormatError(f"cluster_id {params['cluster_id']!r} is not a Kafka cluster id (22 base64url characters)")
    raw = config.get("node.id", "")
    if not raw.strip().isdigit():
        raise FormatError(f"{params['config']} has no numeric node.id (a KRaft node's config)")
    node_id = int(raw)
    if params.get("node_id") is not None and params["node_id"] != node_id:
        raise FormatError(f"{params['config']} has node.id {node_id}, expected {params['node_id']}")
    if params["quorum"] == "initial_controllers" and not params.get("initial_controllers"):
        raise FormatError("quorum=initial_controllers needs initial_controllers (id@host:port:directory-id,...)")
    if params["quorum"] != "no_initial_controllers" and "controller" not in config.get("process.roles", ""):
        raise FormatError(f"quorum={params['quorum']} is for controllers; {params['config']} is not one")
    for user in params.get("scram_users") or []:
        scram_argument(user)
    return node_id


def chown_tree(module: AnsibleModule, paths: list[str], owner: str | None, group: str | None) -> None:
    if not owner and not group:
        return
    for top in paths:
        for root, dirs, files in os.walk(top):
            for name in [root] + [os.path.join(root, n) for n in dirs + files]:
                module.set_owner_if_different(name, owner, False)
                module.set_group_if_different(name, group, False)


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "config": {"type": "path", "required": True},
            "cluster_id": {"type": "str", "required": True},
            "node_id": {"type": "int"},
            "kafka_home": {"type": "path", "required": True},
            "java": {"type": "path", "default": "/usr/bin/java"},
            "java_opts": {"type": "list", "elements": "str", "default": ["-Xmx256m"]},
            "quorum": {
                "type": "str",
                "required": True,
                "choices": ["initial_controllers", "no_initial_controllers", "standalone"],
            },
            "initial_controllers": {"type": "str"},
            "scram_users": {
                "type": "list",
                "elements": "dict",
                "default": [],
                "options": {
                    "name": {"type": "str", "required": True},
                    "password": {"type": "str", "required": True, "no_log": True},
                    "mechanism": {
                        "type": "str",
                        "default": "SCRAM-SHA-512",
                        "choices": ["SCRAM-SHA-256", "SCRAM-SHA-512"],
                    },
                    "iterations": {"type": "int"},
                },
            },
            "release_version": {"type": "str"},
            "owner": {"type": "str"},
            "group": {"type": "str"},
            "timeout": {"type": "int", "default": 120},
            "kafka_version": {"type": "str"},
            "record": {"type": "path"},
        },
        required_if=[("quorum", "initial_controllers", ["initial_controllers"])],
        supports_check_mode=True,
    )
    p = module.params
    result: dict = {
        "changed": False,
        "cluster_id": p["cluster_id"],
        "formatted": [],
        "already_formatted": [],
        "dirs": [],
        "directory_id": "",
        "tool_version": tool_version(p["kafka_home"]),
        "formatted_by": {},
    }
    try:
        with open(p["config"], encoding="utf-8") as f:
            config = read_properties(f.read())
        node_id = check_params(p, config)
        result["node_id"] = node_id
        plan = plan_format(node_dirs(config), p["cluster_id"], node_id)
        record = read_record(p["record"])
    except (OSError, ValueError, FormatError) as exc:
        module.fail_json(msg=str(exc), **result)
    result["formatted_by"] = record
    result.update(dirs=plan.dirs, already_formatted=plan.formatted)
    if plan.problems:
        module.fail_json(msg="refusing to format: " + " | ".join(plan.problems), **result)
    if not plan.to_format:
        result["directory_id"] = metadata_directory_id(config)
        module.exit_json(**result)
    refusal = tool_refusal(result["tool_version"], p["kafka_home"], p["kafka_version"])
    if refusal:
        module.fail_json(msg=refusal, **result)
    result.update(changed=True, formatted=plan.to_format)
    if module.check_mode:
        module.exit_json(**result)
    cmd = storage_command(p, ignore_formatted=bool(plan.formatted))
    try:
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=p["timeout"], check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        module.fail_json(msg=f"kafka-storage format did not run: {exc}", **result)
    output = redacted((run.stdout + run.stderr).strip())
    if run.returncode != 0:
        module.fail_json(msg=f"kafka-storage format failed (exit {run.returncode}): {output}", **result)
    # The tool wrote meta.properties; check it says what was asked before reporting success.
    after = plan_format(plan.dirs, p["cluster_id"], node_id)
    if after.problems or after.to_format:
        module.fail_json(msg="after kafka-storage format: " + " | ".join(after.problems or after.to_format), **result)
    chown_tree(module, plan.to_format, p["owner"], p["group"])
    if p["record"]:
        record = {**record, **dict.fromkeys(plan.to_format, result["tool_version"] or "?")}
        try:
            write_record(p["record"], record)
        except OSError as exc:
            module.fail_json(msg=f"formatted, but {p['record']} could not be written: {exc}", **result)
        result["formatted_by"] = record
    result["stdout"] = output
    result["directory_id"] = metadata_directory_id(config)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
