"""The filter plugins import kafkakit only when one of their filters runs. Ansible imports every
file of the filter folder in each worker process that templates any filter (a task's worker, per
host), most of them for tasks that use none of the kit's filters."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

FILTERS = Path(__file__).resolve().parents[2] / "ansible" / "plugins" / "filter"

LOAD = textwrap.dedent(
    """
    import importlib.util, json, sys
    from pathlib import Path

    loaded = {}
    for path in sorted(Path(sys.argv[1]).glob("*.py")):
        spec = importlib.util.spec_from_file_location(f"kit_filter_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        loaded.update(module.FilterModule().filters())
    before = sorted(n for n in sys.modules if n.split(".")[0] == "kafkakit")
    # Positive control: a filter that runs imports what it needs.
    loaded["kafkakit_mirror_dcs"]([])
    after = sorted(n for n in sys.modules if n.split(".")[0] == "kafkakit")
    print(json.dumps({"filters": len(loaded), "before": before, "after": after}))
    """
)


def test_loading_every_filter_file_imports_no_kafkakit_module_until_a_filter_runs():
    done = subprocess.run(
        [sys.executable, "-c", LOAD, str(FILTERS)], capture_output=True, text=True, timeout=60, check=True
    )
    found = json.loads(done.stdout.splitlines()[-1])
    assert found["filters"] > 50
    assert found["before"] == []
    assert "kafkakit.mirror.flows" in found["after"]
