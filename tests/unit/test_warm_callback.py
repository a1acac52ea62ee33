"""What ansible-playbook's main process loads before it forks its workers, so that each worker does
not load it anew: the Jinja plugins (ansible/plugins/callback/kafkakit_warm.py) and, over Mitogen,
the list of installed collections (ansible/plugins/strategy/mitogen_linear.py)."""

from __future__ import annotations

import re

from tests.unit.ansible_run import REPO, run_in_ansible

# A collection filter, after a pipe or named to map/select/reject: `| ns.coll.name`, `map('ns.coll.name'`.
FILTER_USE = re.compile(
    r"\|\s*([a-z0-9_]+\.[a-z0-9_]+\.[a-z0-9_]+)|\b(?:map|select|reject)\(\s*['\"]([a-z0-9_]+\.[a-z0-9_]+\.[a-z0-9_]+)['\"]"
)


def collection_filters_used() -> set[str]:
    found = set()
    for path in [*REPO.glob("roles/**/*.yml"), *REPO.glob("roles/**/*.j2"), *REPO.glob("ansible/**/*.yml")]:
        for match in FILTER_USE.finditer(path.read_text()):
            name = match.group(1) or match.group(2)
            if not name.startswith("ansible.builtin."):
                found.add(name)
    return found


def test_the_warm_up_names_every_collection_filter_the_kit_uses():
    names = run_in_ansible("print(json.dumps(load('callback/kafkakit_warm.py', 'kafkakit_warm').COLLECTION_FILTERS))")
    used = collection_filters_used()
    # Positive control: the scan finds the two the roles are known to use.
    assert {"community.crypto.x509_certificate_info", "community.general.dict_kv"} <= used, used
    assert used <= set(names), f"collection filters the warm-up leaves to each worker: {sorted(used - set(names))}"


def test_after_the_warm_up_a_forked_worker_finds_every_filter_loaded():
    result = run_in_ansible(
        """
        import os
        crypto = 'ansible_collections.community.crypto.plugins.filter.x509_certificate_info'
        def loaded():
            return {
                'kit': any(name.startswith('ansible.plugins.filter.ops_guards_') for name in sys.modules),
                'builtin': any(name.startswith('ansible.plugins.filter.core_') for name in sys.modules),
                'tests': any(name.startswith('ansible.plugins.test.core_') for name in sys.modules),
                'collection': crypto in sys.modules,
            }
        before = loaded()
        load('callback/kafkakit_warm.py', 'kafkakit_warm').warm_jinja_plugins()
        read, write = os.pipe()
        if os.fork() == 0:
            os.write(write, json.dumps(loaded()).encode())
            os._exit(0)
        os.wait()
        print(json.dumps({'before': before, 'worker': json.loads(os.read(read, 4096))}))
        """
    )
    # Positive control: nothing was loaded before the warm-up, so the worker's view is its doing.
    assert result["before"] == {"kit": False, "builtin": False, "tests": False, "collection": False}
    assert result["worker"] == {"kit": True, "builtin": True, "tests": True, "collection": True}


def test_mitogen_workers_inherit_the_collection_list_made_once():
    result = run_in_ansible(
        """
        import inspect
        import ansible.collections.list as collections_list
        import ansible_mitogen.planner as planner
        original = inspect.getsource(planner._load_collections)
        strategy = load('strategy/mitogen_linear.py', 'mitogen_linear')

        class Invocation:
            _extra_sys_paths = set()

        # Counts the listings a worker would make from here on (none: the strategy made it).
        calls = []
        real = collections_list.list_collection_dirs
        collections_list.list_collection_dirs = lambda *a, **k: calls.append(1) or real(*a, **k)
        planner._load_collections(Invocation)
        print(json.dumps({
            'original': original,
            'replaced': planner._load_collections is strategy._load_collections,
            'paths': sorted(Invocation._extra_sys_paths),
            'expected': sorted(path.decode('utf-8') for path in real()),
            'listed_again': len(calls),
        }))
        """
    )
    # What the replacement stands in for: Mitogen's own adds the installed collections' paths to
    # the invocation, listing them each time. A Mitogen release that changes it fails here.
    assert "list_collection_dirs()" in result["original"] and "_extra_sys_paths" in result["original"]
    assert result["replaced"]
    assert result["paths"] == result["expected"] and result["paths"], result
    assert result["listed_again"] == 0
