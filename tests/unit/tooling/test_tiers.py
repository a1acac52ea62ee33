"""The map of the two tiers (kafkakit.tooling.tiers): every role, playbook and plugin reached by a contract
test or a scenario, every scenario file in the map, and the reach rules on a tree made here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kafkakit.tooling import tiers

REPO = Path(__file__).resolve().parents[3]


def test_every_role_playbook_and_plugin_is_reached_by_a_test():
    assert tiers.covered_by_nothing(REPO) == []


def test_what_no_test_runs_is_really_not_reached_and_exists():
    reached = tiers.contract_reach(REPO).union(*(tiers.scenario_reach(s.name, REPO) for s in tiers.SCENARIOS))
    for path, why in tiers.NOT_RUN_BY_A_TEST.items():
        assert (REPO / path).is_file(), path
        assert why, path
        assert path not in reached, f"{path} is reached by a test now: take it off NOT_RUN_BY_A_TEST"


def test_every_scenario_file_is_in_exactly_one_scenario():
    on_disk = sorted(p.name for p in (REPO / tiers.SCENARIO_DIR).glob("test_*.py"))
    mapped = sorted(f for s in tiers.SCENARIOS for f in s.files)
    assert mapped == on_disk


def test_the_makefile_has_a_target_per_scenario():
    makefile = (REPO / "Makefile").read_text()
    names = re.search(r"^SCENARIOS := (.*)$", makefile, re.M)
    assert names and names[1].split() == [s.name for s in tiers.SCENARIOS]


def test_the_contract_tier_holds_no_scenario_file():
    assert not [f for f in tiers.contract_files(REPO) if f.startswith(tiers.SCENARIO_DIR)]
    assert "tests/integration/test_idempotence.py" in tiers.contract_files(REPO)


def test_a_change_selects_the_scenarios_that_run_it_and_only_those():
    assert tiers.affected(["ansible/ops/rotate-certificates.yml"], REPO) == ["rotation"]
    assert tiers.affected(["src/kafkakit/mirror/dr_drill.py"], REPO) == ["dr"]
    assert tiers.affected(["tests/integration/scenarios/test_disk_full.py"], REPO) == ["disk-full"]
    assert tiers.affected(["README.md", "docs/ci.md"], REPO) == []
    # A task file only the retire phase includes: the rotation alone.
    assert tiers.affected(["roles/spark/tasks/trust-read.yml"], REPO) == ["rotation"]
    # The roll restarts brokers in every scenario that rolls or restarts them through a playbook.
    broker = tiers.affected(["roles/kafka_broker/tasks/roll-plan.yml"], REPO)
    assert {"rotation", "upgrade", "scale", "faults", "migration"} <= set(broker), broker


def test_an_unknown_scenario_is_one_clear_error():
    with pytest.raises(KeyError, match="no scenario 'rotaton'; the scenarios are: rotation"):
        tiers.scenario_files("rotaton")
    assert tiers.main(["files", "rotaton"]) == 2


def write(root: Path, path: str, text: str) -> None:
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    (root / path).write_text(text)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A tree of the kit's shape: a scenario runs ops/op.yml, whose role calls a module, uses a
    filter (which imports a kafkakit module) and includes a second role by name."""
    write(tmp_path, "tests/integration/scenarios/test_op.py", 'run_playbook("ops/op.yml")\n')
    write(tmp_path, "tests/integration/test_contract.py", "from kafkakit import plain\n")
    write(tmp_path, "ansible/ops/op.yml", "- hosts: all\n  roles:\n    - worker\n")
    write(tmp_path, "ansible/ops/idle.yml", "- hosts: all\n  tasks: []\n")
    write(
        tmp_path,
        "roles/worker/tasks/main.yml",
        "- name: Call\n  kafka_thing:\n    x: 1\n- ansible.builtin.include_tasks: more.yml\n",
    )
    write(tmp_path, "roles/worker/tasks/unused.yml", "- name: Call\n  kafka_other:\n    x: 1\n")
    write(
        tmp_path,
        "roles/worker/tasks/more.yml",
        "- ansible.builtin.include_role:\n    name: helper\n    tasks_from: part.yml\n",
    )
    write(tmp_path, "roles/worker/templates/a.j2", "{{ x | kafkakit_shape }}\n")
    write(tmp_path, "roles/helper/tasks/main.yml", "[]\n")
    write(tmp_path, "roles/helper/tasks/part.yml", "[]\n")
    write(tmp_path, "roles/helper/tasks/other.yml", "[]\n")
    write(tmp_path, "roles/unused/tasks/main.yml", "[]\n")
    write(tmp_path, "ansible/plugins/modules/kafka_thing.py", "x = 1\n")
    write(tmp_path, "ansible/plugins/modules/kafka_other.py", "x = 1\n")
    # kafka_thing has an action plugin, which runs a module of its own by name.
    write(tmp_path, "ansible/plugins/action/kafka_thing.py", 'from kafkakit.acted import x\nRUNNER = "kafka_runner"\n')
    write(tmp_path, "ansible/plugins/modules/kafka_runner.py", "x = 1\n")
    write(tmp_path, "src/kafkakit/acted.py", "x = 1\n")
    filters = "from kafkakit.shapes import shape\n\nclass FilterModule:\n    def filters(self):\n"
    write(tmp_path, "ansible/plugins/filter/shapes.py", filters + '        return {"kafkakit_shape": shape}\n')
    write(tmp_path, "src/kafkakit/shapes.py", "def shape(x):\n    return x\n")
    write(tmp_path, "src/kafkakit/plain.py", "")
    return tmp_path


def test_the_reach_follows_playbooks_roles_modules_filters_and_imports(tree: Path, monkeypatch):
    monkeypatch.setattr(tiers, "SCENARIOS", (tiers.Scenario("op", ("test_op.py",), "an operation"),))
    monkeypatch.setattr(tiers, "NOT_RUN_BY_A_TEST", {})
    reach = tiers.scenario_reach("op", tree)
    for path in (
        "ansible/ops/op.yml",
        "roles/worker/tasks/main.yml",
        "roles/helper/tasks/main.yml",
        "roles/helper/tasks/part.yml",
        "ansible/plugins/modules/kafka_thing.py",
        "ansible/plugins/action/kafka_thing.py",
        "ansible/plugins/modules/kafka_runner.py",
        "src/kafkakit/acted.py",
        "ansible/plugins/filter/shapes.py",
        "src/kafkakit/shapes.py",
    ):
        assert path in reach, path
    # A role's task files only where something includes them; so the module only they call is not reached.
    for path in ("roles/worker/tasks/unused.yml", "roles/helper/tasks/other.yml", "roles/unused/tasks/main.yml"):
        assert path not in reach, path
    assert "ansible/plugins/modules/kafka_other.py" not in reach
    assert tiers.affected(["roles/helper/tasks/other.yml"], tree) == []
    assert tiers.affected(["roles/helper/tasks/part.yml"], tree) == ["op"]
    assert tiers.affected(["src/kafkakit/shapes.py"], tree) == ["op"]
    assert tiers.affected(["src/kafkakit/plain.py"], tree) == []
    assert tiers.affected(["src/kafkakit/acted.py"], tree) == ["op"]  # through the action plugin
    # What nothing reaches is named, one by one; the rest is not.
    assert tiers.covered_by_nothing(tree) == [
        "roles/unused",
        "ansible/ops/idle.yml",
        "ansible/plugins/modules/kafka_other.py",
    ]
