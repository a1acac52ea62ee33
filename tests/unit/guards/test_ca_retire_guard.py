"""Retiring the old CA (ops/retire-ca.yml) is refused unless the run names the CA folder, before
the promote phase has soaked, and while a client configuration the kit writes does not trust the
new CA (kafkakit.guards.pki.retire_refusal), on real certificates; each refusal beside the run
that passes."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from kafkakit.guards.pki import PROMOTED_AT, promoted_at, retire_refusal
from tests.unit.support.pki import Ca

HOUR = 3600.0


@pytest.fixture(scope="module")
def old() -> Ca:
    return Ca("kafkakit internal CA old")


@pytest.fixture(scope="module")
def new() -> Ca:
    return Ca("kafkakit internal CA new")


@pytest.fixture
def ca_dir(tmp_path: Path, old: Ca, new: Ca) -> Path:
    """The folder as promote leaves it: the new CA signs, the old one in old/, the time recorded."""
    new.store(tmp_path)
    old.store(tmp_path / "old")
    (tmp_path / PROMOTED_AT).write_text(f"{time.time() - 200 * HOUR:.0f}\n")
    return tmp_path


def both(old: Ca, new: Ca) -> str:
    return new.pem + old.pem


def refuse(ca_dir: Path, bundles: dict[str, str | None], confirm: object = None, soak: float = 168) -> str:
    return retire_refusal(str(ca_dir), confirm, promoted_at(str(ca_dir)), time.time(), soak, bundles)


def test_confirmed_soaked_and_trusted_everywhere_passes(ca_dir: Path, old: Ca, new: Ca) -> None:
    bundles = {"dc1-kafka1:/etc/kafkakit/pki/ca.crt": both(old, new), "dc1-spark-worker-1:ca.pem": both(old, new)}
    assert refuse(ca_dir, bundles, confirm=str(ca_dir)) == ""
    # The path may be given with a trailing slash: the same folder.
    assert refuse(ca_dir, bundles, confirm=f"{ca_dir}/") == ""


def test_without_the_confirmation_it_is_refused_and_says_how(ca_dir: Path, old: Ca, new: Ca) -> None:
    for confirm in (None, "", "yes", str(ca_dir / "old")):
        message = refuse(ca_dir, {"h": both(old, new)}, confirm=confirm)
        assert message.startswith(f"refusing to retire the old CA of {ca_dir}: ")
        assert f"-e rotate_retire_confirm={ca_dir}" in message and message.endswith("Nothing was changed")


def test_before_the_soak_it_is_refused_with_the_hours_left(ca_dir: Path, old: Ca, new: Ca) -> None:
    (ca_dir / PROMOTED_AT).write_text(f"{time.time() - 2 * HOUR:.0f}\n")
    message = refuse(ca_dir, {"h": both(old, new)}, confirm=str(ca_dir))
    assert "promoted 2.0 h ago, the soak is 168 h (rotate_soak_hours): retire after 166.0 more hours" in message
    # The operator's own soak: zero lets it through.
    assert refuse(ca_dir, {"h": both(old, new)}, confirm=str(ca_dir), soak=0) == ""


def test_without_a_recorded_promotion_it_is_refused(ca_dir: Path, old: Ca, new: Ca) -> None:
    (ca_dir / PROMOTED_AT).unlink()
    assert "records no promotion: run ops/rotate-ca.yml (promote) first" in refuse(
        ca_dir, {"h": both(old, new)}, confirm=str(ca_dir), soak=0
    )


def test_a_client_configuration_without_the_new_ca_is_named(ca_dir: Path, old: Ca, new: Ca) -> None:
    bundles = {
        "dc1-kafka1:/etc/kafkakit/pki/ca.crt": both(old, new),
        "dc2-mm2-1:/etc/kafka-mirrormaker/truststore.pem": old.pem,
        "dc1-spark-worker-1:/opt/spark/conf/kafka/ca.pem": None,
    }
    message = refuse(ca_dir, bundles, confirm=str(ca_dir), soak=0)
    assert (
        "do not trust the new CA (kafkakit internal CA new) yet: "
        "dc2-mm2-1:/etc/kafka-mirrormaker/truststore.pem, dc1-spark-worker-1:/opt/spark/conf/kafka/ca.pem"
    ) in message
    assert "dc1-kafka1" not in message
