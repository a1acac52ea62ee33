"""No secret in a dry run (issue 16): every task that writes a file holding a secret has `diff: false`.

The secrets are the variables the roles' argument specs mark no_log (a list whose elements have
a no_log key counts whole) plus kafkakit.rules.inventory.SECRETS, and every variable defined from one of
them (role defaults and vars, set_fact, task and block vars). A task writes a file when it is a
template, or a copy/lineinfile/blockinfile/ini_file/replace with inline text; it holds a secret when
its text (the template file, or the inline text), its vars or its loop name one of those variables.
The kit's own kafkakit_files module writes many files in one task: there a secret may be in an
item's `secret_content` (never shown by the module), not in its `content`.
"""

from __future__ import annotations

import functools
import re
import warnings
from pathlib import Path
from typing import Any

import jinja2
import jinja2.nodes
import pytest

from kafkakit.rules.inventory import SECRETS
from tests.unit.support.task_files import ROOT, Task, all_tasks, load

# Module -> its argument holding inline text (None: a template, whose text is the src file).
WRITERS: dict[str, str | None] = {
    "template": None,
    "copy": "content",
    "lineinfile": "line",
    "blockinfile": "block",
    "replace": "replace",
    "ini_file": "value",
}
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
ENV = jinja2.Environment()
GENERATED = "<a password lookup>"


def names_in(value: Any) -> set[str]:
    """Every variable a value reads: the names loaded in its Jinja expressions, recursively."""
    if isinstance(value, dict):
        return set().union(*(names_in(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(names_in(v) for v in value))
    if not isinstance(value, str) or ("{{" not in value and "{%" not in value):
        return set()
    return names_in_template(value)


def names_in_template(text: str) -> set[str]:
    """The names a template loads, plus GENERATED when it makes a password (the password lookup)."""
    try:
        with warnings.catch_warnings():  # regexes in the kit's expressions: not this test's business
            warnings.simplefilter("ignore", DeprecationWarning)
            tree = ENV.parse(text)
    except jinja2.TemplateSyntaxError:  # Ansible-only syntax: every word counts (over, never under)
        return set(IDENTIFIER.findall(text))
    names = {n.name for n in tree.find_all(jinja2.nodes.Name) if n.ctx == "load"}
    for call in tree.find_all(jinja2.nodes.Call):
        plugin = call.args[0] if call.args else None
        if (
            isinstance(call.node, jinja2.nodes.Name)
            and call.node.name in ("lookup", "query", "q")
            and isinstance(plugin, jinja2.nodes.Const)
            and str(plugin.value).rsplit(".", 1)[-1] == "password"
        ):
            names.add(GENERATED)
    return names


def shared_template(arg: jinja2.nodes.Node) -> Path | None:
    """kafka_common_templates ~ '/name.j2': the template the broker and controller roles share."""
    if (
        isinstance(arg, jinja2.nodes.Concat)
        and len(arg.nodes) == 2
        and isinstance(arg.nodes[0], jinja2.nodes.Name)
        and arg.nodes[0].name == "kafka_common_templates"
        and isinstance(arg.nodes[1], jinja2.nodes.Const)
    ):
        return ROOT / "roles" / "kafka_common" / "templates" / str(arg.nodes[1].value).lstrip("/")
    return None


def shown_in_expression(files: str, templates: Path) -> set[str]:
    """What the `content` values of the dict literals in a files expression read (shown by --diff)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        tree = ENV.parse(files)
    names: set[str] = set()
    for pair in tree.find_all(jinja2.nodes.Pair):
        if isinstance(pair.key, jinja2.nodes.Const) and pair.key.value == "content":
            expr = jinja2.nodes.Template([jinja2.nodes.Output([pair.value])])
            names |= {n.name for n in expr.find_all(jinja2.nodes.Name) if n.ctx == "load"}
            for call in expr.find_all(jinja2.nodes.Call):
                if (
                    call.args
                    and isinstance(call.args[-1], jinja2.nodes.Const)
                    and str(call.args[-1].value).endswith(".j2")
                ):
                    names |= names_in_template((templates / str(call.args[-1].value)).read_text())
    return names


def lookup_templates(value: Any, templates: Path) -> set[str]:
    """The names read by the role templates a value renders with lookup('ansible.builtin.template', ...)."""
    if isinstance(value, dict):
        return set().union(*(lookup_templates(v, templates) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(lookup_templates(v, templates) for v in value))
    if not isinstance(value, str) or ("lookup(" not in value and "query(" not in value):
        return set()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        tree = ENV.parse(value)
    names: set[str] = set()
    for call in tree.find_all(jinja2.nodes.Call):
        args = call.args
        if not (
            isinstance(call.node, jinja2.nodes.Name)
            and call.node.name in ("lookup", "query", "q")
            and args
            and isinstance(args[0], jinja2.nodes.Const)
            and str(args[0].value).rsplit(".", 1)[-1] == "template"
        ):
            continue
        if len(args) >= 2 and isinstance(args[1], jinja2.nodes.Const) and call.dyn_args is None:
            files = [templates / str(args[1].value)]
        elif len(args) == 2 and call.dyn_args is None and (name := shared_template(args[1])) is not None:
            files = [name]
        else:  # names computed at run time: any of the role's templates (over, never under)
            files = sorted(templates.glob("*.j2"))
        for path in files:
            names |= names_in_template(path.read_text())
    return names


def files_module_secrets(task: Task, secrets: set[str]) -> tuple[set[str], bool] | None:
    """For a kafkakit_files task: (the secrets its files may hold, whether one is in a shown `content`)."""
    args = next((a for k, a in task.task.items() if k.rsplit(".", 1)[-1] == "kafkakit_files"), None)
    if args is None:
        return None
    around = names_in(task.vars) | names_in(task.task.get("loop", task.task.get("with_items")))
    files = args.get("files", [])
    if isinstance(files, str):  # one expression builds the list: shown unless it has secret_content only
        held = (names_in(files) | lookup_templates(files, task.templates) | around) & secrets
        return held, bool(held) and bool((shown_in_expression(files, task.templates) | around) & secrets)
    held: set[str] = set()
    in_shown = False
    for item in files:
        for key in ("content", "secret_content"):
            if key in item:
                names = (names_in(item[key]) | lookup_templates(item[key], task.templates) | around) & secrets
                held |= names
                in_shown = in_shown or (key == "content" and bool(names))
    return held, in_shown


def module_of(task: dict) -> tuple[str, Any] | None:
    """(short module name, its arguments) when the task is one of WRITERS."""
    for key, args in task.items():
        short = key.rsplit(".", 1)[-1]
        if short in WRITERS and (key == short or key.startswith(("ansible.builtin.", "community.general."))):
            return short, args
    return None


def spec_secrets(root: Path = ROOT) -> set[str]:
    """Options the roles' argument specs mark no_log, at the top or in their elements."""

    def any_no_log(opt: dict) -> bool:
        return bool(opt.get("no_log")) or any(any_no_log(o or {}) for o in (opt.get("options") or {}).values())

    found = set()
    for path in root.glob("roles/*/meta/argument_specs.yml"):
        for entry in (load(path) or {}).get("argument_specs", {}).values():
            found |= {name for name, opt in ((entry or {}).get("options") or {}).items() if any_no_log(opt or {})}
    return found


def definitions(root: Path = ROOT) -> dict[str, set[str]]:
    """Each variable the roles and playbooks define -> the variables its value reads."""
    defs: dict[str, set[str]] = {}

    def define(mapping: Any) -> None:
        for key, value in (mapping or {}).items() if isinstance(mapping, dict) else []:
            defs.setdefault(str(key), set()).update(names_in(value))

    for path in [*root.glob("roles/*/defaults/main.yml"), *root.glob("roles/*/vars/main.yml")]:
        define(load(path))
    for task in all_tasks(root):
        define(task.vars)
        for key, args in task.task.items():
            if key.rsplit(".", 1)[-1] == "set_fact":
                define(args)
    return defs


def secret_variables(root: Path = ROOT) -> set[str]:
    """The secrets and every variable defined from one, to a fixed point."""
    secrets = spec_secrets(root) | set(SECRETS) | {GENERATED}
    defs = definitions(root)
    while True:
        more = {name for name, reads in defs.items() if reads & secrets} - secrets
        if not more:
            return secrets
        secrets |= more


def template_files(task: Task, src: str) -> list[Path]:
    """The template file(s) a src names: rendered per item of a literal loop, else its {{ }} as a glob."""
    loop = task.task.get("loop", task.task.get("with_items"))
    if "{{" in src and isinstance(loop, list):
        try:
            srcs = [ENV.from_string(src).render(item=item, **task.vars) for item in loop]
        except jinja2.UndefinedError:
            srcs = []
        if srcs and all("{{" not in s for s in srcs):
            return [task.templates / s for s in srcs]
    pattern = re.sub(r"\{\{.*?\}\}", "*", src)
    return sorted(task.templates.glob(pattern)) if "*" in pattern else [task.templates / pattern]


def secrets_read(task: Task, secrets: set[str]) -> set[str]:
    """The secret variables the file this task writes may hold (empty: it writes none, or no file)."""
    files = files_module_secrets(task, secrets)
    if files is not None:
        return files[0]
    found = module_of(task.task)
    if found is None:
        return set()
    module, args = found
    if isinstance(args, str):  # free-form arguments: the old k=v style
        args = dict(kv.split("=", 1) for kv in args.split() if "=" in kv)
    args = args or {}
    if module == "template":
        files = template_files(task, str(args["src"]))
        assert files and all(f.is_file() for f in files), f"{task.name}: template {args['src']} not found"
        text_names = set().union(*(names_in_template(f.read_text()) for f in files))
    elif WRITERS[module] in args:
        text_names = names_in(args[WRITERS[module]])
    else:
        return set()  # a copy of a file (src): its content is not the kit's text
    reads = text_names | names_in(task.vars) | names_in(task.task.get("loop", task.task.get("with_items")))
    return reads & secrets


def shown(task: Task, secrets: set[str]) -> bool:
    """Whether --diff would show the secrets the task writes: always, but for kafkakit_files items
    that hold them in `secret_content`."""
    files = files_module_secrets(task, secrets)
    return files is None or files[1]


@functools.cache
def unguarded(root: Path = ROOT) -> tuple[dict[str, set[str]], list[str]]:
    """(every secret-bearing writing task -> its secrets, those without diff: false)."""
    secrets = secret_variables(root)
    bearing = {t.name: s for t in all_tasks(root) if (s := secrets_read(t, secrets))}
    missing = [t.name for t in all_tasks(root) if t.name in bearing and t.diff is not False and shown(t, secrets)]
    return bearing, missing


def test_every_task_writing_a_secret_has_diff_false() -> None:
    bearing, missing = unguarded()
    assert missing == [], "tasks writing a secret without `diff: false` (--check --diff would print it):\n" + "\n".join(
        f"  {name}: {sorted(bearing[name])}" for name in missing
    )


# The scan must see the files the issue found leaking: if it does not, it checks nothing.
@pytest.mark.parametrize(
    "task",
    [
        "roles/mirrormaker2/tasks/main.yml: Write the MirrorMaker configuration and unit",
        "roles/kafka_broker/tasks/main.yml: Write the Kafka configuration and unit",
        "roles/zookeeper/tasks/main.yml: Write the ZooKeeper configuration and unit",
        "roles/kafka_controller/tasks/main.yml: Write the controller configuration and unit",
        "roles/spark/tasks/main.yml: Write the Spark configuration, unit and Kafka client files",
        "roles/kafka_resources/tasks/main.yml: Write the admin's and the users' client configs of {{ dc }}",
        "roles/monitoring/tasks/lag-exporter.yml: Write the exporter, its settings, certificate and unit",
        "roles/monitoring/tasks/jmx-agent.yml: Install the JMX exporter rules of {{ monitoring_jmx_component }}",
        "roles/spark/tasks/secret.yml: Generate the RPC secret on the master unless one is given",
    ],
)
def test_the_scan_sees_the_known_secret_files(task: str) -> None:
    bearing, _ = unguarded()
    assert task in bearing


def test_secrets_include_derived_variables() -> None:
    secrets = secret_variables()
    # set_fact from spark_auth_secret; role defaults built from passwords.
    assert {
        "spark_auth_secret_effective",
        "kafka_service_users",
        "zookeeper_sasl_users",
        "kafka_admin_client_config",
    } <= secrets
    assert "kafka_topics" not in secrets and "dc" not in secrets


def write_role(root: Path, tasks: str, template: str) -> None:
    role = root / "roles" / "demo"
    for folder in ("tasks", "templates", "meta"):
        (role / folder).mkdir(parents=True)
    (role / "tasks" / "main.yml").write_text(tasks)
    (role / "templates" / "demo.conf.j2").write_text(template)
    (role / "meta" / "argument_specs.yml").write_text(
        "argument_specs:\n  main:\n    options:\n      demo_token: {type: str, no_log: true}\n"
    )


DEMO_TASKS = """\
- name: Derive
  ansible.builtin.set_fact:
    demo_line: "token={{ demo_token }}"
- name: Template without diff false
  ansible.builtin.template: {src: "{{ item }}.j2", dest: /tmp/x, mode: "0600"}
  loop: [demo.conf]
- name: Copy a derived secret
  ansible.builtin.copy: {content: "{{ demo_line }}", dest: /tmp/y, mode: "0600"}
  no_log: true
- name: Guarded by its block
  diff: false
  block:
    - name: Copy inside
      ansible.builtin.copy: {content: "{{ kafka_admin_password }}", dest: /tmp/z, mode: "0600"}
- name: A plain file
  ansible.builtin.copy: {content: "{{ dc }}", dest: /tmp/w, mode: "0644"}
- name: Files with the secret kept out of the diff
  kafkakit_files:
    files:
      - {dest: /tmp/v, secret_content: "{{ lookup('ansible.builtin.template', 'demo.conf.j2') }}"}
      - {dest: /tmp/u, content: "{{ dc }}"}
- name: Files with the secret in a shown content
  kafkakit_files:
    files:
      - {dest: /tmp/t, content: "{{ lookup('ansible.builtin.template', 'demo.conf.j2') }}"}
"""


def test_the_scan_flags_a_task_without_diff_false(tmp_path: Path) -> None:
    write_role(tmp_path, DEMO_TASKS, "secret={{ demo_token }}\n")
    bearing, missing = unguarded(tmp_path)
    demo = "roles/demo/tasks/main.yml: "
    assert set(bearing) == {
        demo + "Template without diff false",
        demo + "Copy a derived secret",
        demo + "Copy inside",
        demo + "Files with the secret kept out of the diff",
        demo + "Files with the secret in a shown content",
    }
    # no_log alone does not count: the rule is diff: false, whatever else the task says.
    assert missing == [
        demo + "Template without diff false",
        demo + "Copy a derived secret",
        demo + "Files with the secret in a shown content",
    ]
