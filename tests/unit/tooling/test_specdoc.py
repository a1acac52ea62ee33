"""docs/variables.md is generated from the roles' argument specs (kafkakit.tooling.specdoc, `make docs`)."""

from __future__ import annotations

from pathlib import Path

from kafkakit.tooling.specdoc import format_value, load_roles, main, render

ROOT = Path(__file__).resolve().parents[3]
DOC = ROOT / "docs" / "variables.md"


def test_docs_variables_md_is_current() -> None:
    # Stale: run `make docs` and commit docs/variables.md with the spec change.
    assert DOC.read_text() == render(load_roles(ROOT / "roles"))


def test_check_reports_a_stale_file(tmp_path, capsys) -> None:
    stale = tmp_path / "variables.md"
    stale.write_text("# old\n")
    assert main(["--check", str(stale)]) == 1
    assert "make docs" in capsys.readouterr().err
    assert main(["--write", str(stale)]) == 0
    assert main(["--check", str(stale)]) == 0
    assert main(["--check"]) == 0  # docs/variables.md by default


def test_every_role_and_entry_point_has_its_section() -> None:
    text = DOC.read_text()
    for role in load_roles(ROOT / "roles"):
        assert f"\n## {role.name}\n" in text
        for entry in role.specs:
            assert f"\n### {role.name}: `{entry}`\n" in text


def test_rows_show_type_default_required_and_secrets() -> None:
    text = DOC.read_text()
    assert "| `kafka_client_port` | int | `9093` |  | Client listener port. |" in text
    assert "| `kafka_admin_password` (secret) | str |  | yes | Its password (vault it). |" in text
    # Suboptions under their list, and a default owned by another role named beside the value.
    assert "| `kafka_topics[].name` | str |  | yes | Topic name. |" in text
    assert "| `kafka_pki_dir` | str | `/etc/kafkakit/pki` (kafka_common) |" in text


def test_every_role_has_a_readme_that_links_its_variables() -> None:
    for role in load_roles(ROOT / "roles"):
        readme = ROOT / "roles" / role.name / "README.md"
        assert readme.exists(), f"roles/{role.name} has no README.md"
        assert f"(../../docs/variables.md#{role.name})" in readme.read_text(), readme


def test_a_small_role(tmp_path) -> None:
    role = tmp_path / "roles" / "demo"
    (role / "meta").mkdir(parents=True)
    (role / "defaults").mkdir()
    (role / "meta" / "main.yml").write_text("galaxy_info: {description: A demo role}\n")
    (role / "defaults" / "main.yml").write_text("demo_port: 8000\ndemo_url: 'http://{{ host }}:{{ demo_port }}'\n")
    (role / "meta" / "argument_specs.yml").write_text(
        "argument_specs:\n"
        "  main:\n"
        "    short_description: Demo\n"
        "    options:\n"
        "      demo_port: {type: int, default: 8000, description: Port | the only one}\n"
        "      demo_url: {type: str, description: URL}\n"
        "      demo_token: {type: str, required: true, no_log: true, choices: [a, b], description: Token}\n"
    )
    text = render(load_roles(tmp_path / "roles"), variables=())
    assert "## demo\n\nA demo role." in text
    assert "| `demo_port` | int | `8000` |  | Port \\| the only one. |" in text
    assert "| `demo_url` | str | `http://{{ host }}:{{ demo_port }}` |  | URL. |" in text
    assert "| `demo_token` (secret) | str |  | yes | Token. One of `a`, `b`. |" in text


def test_format_value() -> None:
    assert format_value("") == '`""`'
    assert format_value(False) == "`false`"
    assert format_value([1, 2]) == "`[1, 2]`"
    assert format_value("x" * 61) == "*long, see defaults/main.yml*"
    assert format_value("{{ " + "x" * 60 + " }}") == "*computed, see defaults/main.yml*"
