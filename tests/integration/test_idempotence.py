"""A second site.yml run on a deployed lab changes nothing (and --check agrees)."""

from __future__ import annotations

from tests.integration.playbooks import recap, run_site


def test_second_site_run_reports_no_change():
    stats = recap(run_site())
    assert stats, "no PLAY RECAP found"
    changed = {h: s["changed"] for h, s in stats.items() if s["changed"]}
    assert changed == {}, f"hosts reporting changes on a no-op run: {changed}"
    assert all(s["failed"] == 0 and s["unreachable"] == 0 for s in stats.values())
