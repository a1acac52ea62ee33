"""The guard of ops/replace-controller.yml and ops/remove-controller.yml (kafkakit.guards.operations)."""

from __future__ import annotations

from kafkakit.guards.operations import controller_change_refusal

GROUPS = {"kafka_controller": ["dc2-controller1", "dc2-controller2", "dc2-controller3", "dc3-controller1"]}
DC_OF = {"dc2-controller1": "dc2", "dc2-controller2": "dc2", "dc2-controller3": "dc2", "dc3-controller1": "dc3"}


def test_replace_goes_ahead_when_the_host_is_named() -> None:
    assert controller_change_refusal("replace", "dc2-controller3", "dc2-controller3", GROUPS, DC_OF) == ""


def test_replace_without_confirmation_says_what_it_touches() -> None:
    why = controller_change_refusal("replace", "dc2-controller3", None, GROUPS, DC_OF)
    assert why.startswith("refusing to replace dc2-controller3")
    assert "-e controller_replace_confirm=dc2-controller3" in why
    assert "dc2's quorum" in why


def test_a_confirmation_naming_another_host_is_refused() -> None:
    why = controller_change_refusal("replace", "dc2-controller3", "dc2-controller1", GROUPS, DC_OF)
    assert "controller_replace_confirm=dc2-controller1 does not name dc2-controller3" in why


def test_an_unknown_or_missing_host_is_refused() -> None:
    assert "is not a kafka_controller host" in controller_change_refusal(
        "replace", "dc2-kafka1", "dc2-kafka1", GROUPS, DC_OF
    )
    assert "-e controller_replace=<host>" in controller_change_refusal("replace", "", "", GROUPS, DC_OF)


def test_removal_keeps_at_least_three_voters() -> None:
    why = controller_change_refusal("remove", "dc2-controller3", "dc2-controller3", GROUPS, DC_OF)
    assert "would keep 2 controller(s)" in why
    four = {"kafka_controller": [*GROUPS["kafka_controller"], "dc2-controller4"]}
    assert (
        controller_change_refusal(
            "remove", "dc2-controller3", "dc2-controller3", four, {**DC_OF, "dc2-controller4": "dc2"}
        )
        == ""
    )
    assert "-e controller_remove_confirm=dc2-controller3" in controller_change_refusal(
        "remove", "dc2-controller3", None, four, {**DC_OF, "dc2-controller4": "dc2"}
    )
