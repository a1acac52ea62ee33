"""The compiled-Jinja cache the workers share (src/kafkakit/jinja_code_cache.py): a template or a
condition compiled in one process is loaded, not compiled, in the next, renders as before, and a
source that does not compile is never kept."""

from __future__ import annotations

from pathlib import Path

from tests.unit.ansible_run import run_in_ansible

RENDER = """
from pathlib import Path
from kafkakit import jinja_code_cache
jinja_code_cache.install(Path({cache!r}))
from ansible.errors import AnsibleError
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template
templar = Templar(loader=DataLoader(), variables={{'a': 1, 'names': ['x', 'y']}})
out = {{}}
out['sum'] = templar.template(trust_as_template('{{{{ a + 1 }}}}'))
out['join'] = templar.template(trust_as_template('{{{{ names | join(",") }}}}-{{% if a == 1 %}}one{{% endif %}}'))
out['true'] = templar.evaluate_conditional(trust_as_template('a == 1'))
out['false'] = templar.evaluate_conditional(trust_as_template('a == 2'))
try:
    templar.template(trust_as_template('{{{{ a + }}}}'))
    out['broken'] = 'rendered'
except AnsibleError as ex:
    out['broken'] = type(ex).__name__
out['counts'] = jinja_code_cache.counts()
print(json.dumps(out))
"""


def render(cache: Path) -> dict:
    return run_in_ansible(RENDER.format(cache=str(cache)))


def test_a_second_process_loads_the_code_and_renders_the_same(tmp_path: Path):
    first = render(tmp_path)
    second = render(tmp_path)
    for out in (first, second):
        assert out["sum"] == 2 and out["join"] == "x,y-one", out
        # Two conditions apart only in a constant: one compiled code for both would answer alike.
        assert out["true"] is True and out["false"] is False, out
        assert out["broken"] == "AnsibleTemplateSyntaxError", out
    # First: every source compiled (the broken one too, every time). Second: all four found.
    assert first["counts"] == [0, 5], first
    assert second["counts"] == [4, 1], second
    kept = [p for p in tmp_path.iterdir() if not p.name.startswith(".")]
    assert len(kept) == 4, kept


def test_a_damaged_file_is_compiled_again(tmp_path: Path):
    render(tmp_path)
    for path in tmp_path.iterdir():
        path.write_bytes(b"not marshalled code")
    out = render(tmp_path)
    assert out["sum"] == 2 and out["true"] is True and out["false"] is False, out
    assert out["counts"] == [0, 5], out
