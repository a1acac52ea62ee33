"""The lab containers' specs and which existing containers lab/lab-up.yml removes first."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kafkakit.tooling.labhosts import SPEC_LABEL, container_spec, mac_address, stale_containers, without_role

CONFIG = yaml.safe_load((Path(__file__).parents[3] / "ansible/lab/lab-config.yml").read_text())
PERMANENT = CONFIG["lab_hosts"]
OPTIONAL = CONFIG["lab_spare_hosts"] + CONFIG["lab_dc3_hosts"]


def spec(host: dict, **over: object) -> dict:
    kw: dict = {
        "image": "localhost/kafkakit-lab-base:abc",
        "permanent_hosts": PERMANENT,
        "optional_hosts": OPTIONAL,
        "public_key": "/work/main/build/lab/ssh/id_ed25519.pub",
        "network": CONFIG["lab_network"],
        "ulimits": CONFIG["lab_ulimits"],
        "app_label": "kafkakit-lab",
    }
    return container_spec(host, **{**kw, **over})


def inspected(s: dict, running: bool = True, digest: str | None = None) -> dict:
    """A podman inspect document as containers.podman.podman_container_info returns it."""
    labels = {**s["label"], SPEC_LABEL: digest if digest is not None else s["label"][SPEC_LABEL]}
    return {"Name": s["name"], "State": {"Running": running}, "Config": {"Labels": labels}}


def test_mac_address_is_the_ip_under_a_local_prefix() -> None:
    assert mac_address("10.213.7.11") == "02:00:0a:d5:07:0b"
    with pytest.raises(ValueError, match="not an IPv4 address"):
        mac_address("10.213.7")


def test_the_same_inputs_give_the_same_digest() -> None:
    assert spec(PERMANENT[0]) == spec(PERMANENT[0])


@pytest.mark.parametrize(
    "change",
    [
        {"image": "localhost/kafkakit-lab-base:def"},
        # Another checkout: its own SSH key, so the old container would refuse the new key.
        {"public_key": "/check/work/main/build/lab/ssh/id_ed25519.pub"},
        {"ulimits": ["nofile=1024:1024"]},
        {"network": "other"},
    ],
    ids=lambda c: next(iter(c)),
)
def test_a_changed_input_changes_the_digest(change: dict) -> None:
    before, after = spec(PERMANENT[0]), spec(PERMANENT[0], **change)
    assert before["label"][SPEC_LABEL] != after["label"][SPEC_LABEL]


def test_starting_optional_hosts_leaves_the_permanent_hosts_specs_alone() -> None:
    # A spare or dc3 started: the permanent hosts' /etc/hosts (and so their digest) stay as they were.
    first = spec(PERMANENT[0])
    assert set(first["etc_hosts"]) == {h["name"] for h in PERMANENT}
    optional = spec(OPTIONAL[0])
    assert set(optional["etc_hosts"]) == {h["name"] for h in PERMANENT + OPTIONAL}
    # A migrated dc3 host loses its ZooKeeper role, not its container.
    dc3 = next(h for h in OPTIONAL if "zookeeper" in h.get("roles", []))
    migrated = without_role(dc3, "zookeeper")
    assert "zookeeper" not in migrated["roles"] and "zookeeper_id" not in migrated
    assert spec(migrated)["label"][SPEC_LABEL] == spec(dc3)["label"][SPEC_LABEL]


def test_only_stopped_unasked_or_other_spec_containers_are_stale() -> None:
    wanted = [spec(h) for h in PERMANENT[:3]]
    same, stopped, other = (inspected(wanted[0]), inspected(wanted[1], running=False), inspected(wanted[2], digest="x"))
    unlabelled = inspected(wanted[2])
    del unlabelled["Config"]["Labels"][SPEC_LABEL]
    unasked = inspected(spec(OPTIONAL[0]))
    # Positive control: a running container of the same spec stays.
    assert stale_containers([same], wanted) == []
    assert stale_containers([same, stopped, other, unasked], wanted) == [
        wanted[1]["name"],
        wanted[2]["name"],
        OPTIONAL[0]["name"],
    ]
    # Made by a version of lab-up.yml without the label.
    assert stale_containers([unlabelled], wanted) == [wanted[2]["name"]]
