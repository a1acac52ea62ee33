"""spark-jobs/kafkakit_jobs/cdc_metrics.py: the figures cdc.py's driver reports about how far
behind its database the output is, and the node exporter text file they are written to (no Spark
needed)."""

from __future__ import annotations

import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from kafkakit.monitoring import prometheus as monitoring
from tests.unit.monitoring.test_monitoring_rules import ALERTS, promtool

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "spark-jobs"))

from kafkakit_jobs import cdc_metrics as m  # noqa: E402

LABELS = {"topic": "shop.public.orders", "output": "/srv/spark/cdc/orders"}


def test_a_batch_gives_its_lag_from_the_oldest_change_and_the_newest_change_held():
    first = m.after_batch(
        m.Figures(progress=100.0), committed=1_700_000_010.5, oldest_ms=1_700_000_004_000, newest_ms=1_700_000_009_250
    )
    assert first.lag == pytest.approx(6.5)  # from the oldest change, not the newest
    assert first.source_commit == pytest.approx(1_700_000_009.25)
    assert first.batch_commit == first.progress == 1_700_000_010.5
    # A batch of older changes (run again, or delivered again) does not lower what the output holds.
    again = m.after_batch(first, committed=1_700_000_020.0, oldest_ms=1_700_000_001_000, newest_ms=1_700_000_002_000)
    assert again.source_commit == pytest.approx(1_700_000_009.25)
    assert again.lag == pytest.approx(19.0)


def test_a_batch_without_changes_keeps_the_lag_and_the_newest_change():
    before = m.after_batch(m.Figures(), committed=50.0, oldest_ms=40_000, newest_ms=45_000)
    after = m.after_batch(before, committed=60.0, oldest_ms=None, newest_ms=None)
    assert (after.lag, after.source_commit) == (before.lag, before.source_commit) == (10.0, 45.0)
    assert after.batch_commit == after.progress == 60.0
    # Nothing waiting in the topic: progress only.
    idle = m.after_idle(after, 75.0)
    assert idle == m.Figures(source_commit=45.0, batch_commit=60.0, lag=10.0, progress=75.0)


def test_the_file_is_prometheus_text_with_help_type_and_the_labels():
    figures = m.Figures(source_commit=1_700_000_009.25, batch_commit=1_700_000_010.5, lag=6.5, progress=1_700_000_011.0)
    text = m.render(figures, LABELS)
    labels = '{output="/srv/spark/cdc/orders",topic="shop.public.orders"}'
    assert text.splitlines()[0::3] == [
        f"# HELP {m.SOURCE_COMMIT} {m.HELP[m.SOURCE_COMMIT]}",
        f"# HELP {m.BATCH_COMMIT} {m.HELP[m.BATCH_COMMIT]}",
        f"# HELP {m.LAG} {m.HELP[m.LAG]}",
        f"# HELP {m.PROGRESS} {m.HELP[m.PROGRESS]}",
    ]
    samples = [line for line in text.splitlines() if not line.startswith("#")]
    assert samples == [
        f"{m.SOURCE_COMMIT}{labels} 1700000009.25",
        f"{m.BATCH_COMMIT}{labels} 1700000010.5",
        f"{m.LAG}{labels} 6.5",
        f"{m.PROGRESS}{labels} 1700000011.0",
    ]
    assert text.count("# TYPE ") == 4 and all(f"# TYPE {n} gauge" in text for n in m.HELP)
    # Not known yet: not written at all (no sample, no HELP).
    assert m.render(m.Figures(progress=5.0), LABELS).count("# HELP") == 1


def test_promtool_accepts_the_file():
    figures = m.Figures(source_commit=1_700_000_009.25, batch_commit=1_700_000_010.5, lag=6.5, progress=1_700_000_011.0)
    quoted = {"topic": 'a"b\\c', "output": "/x\ny"}
    for text in (m.render(figures, LABELS), m.render(figures, quoted)):
        result = subprocess.run(
            [promtool(), "check", "metrics"], input=text, capture_output=True, text=True, check=False
        )
        # It lints as well as parses: units in the names, HELP and TYPE present.
        assert result.returncode == 0 and not result.stdout.strip(), result.stdout + result.stderr


def test_a_label_value_is_escaped_and_read_back():
    quoted = {"topic": 'a"b\\c', "output": "/x\ny"}
    text = m.render(m.Figures(lag=1.5), quoted)
    assert '{output="/x\\ny",topic="a\\"b\\\\c"}' in text
    assert m.parse(text, quoted) == m.Figures(lag=1.5)


def test_the_file_is_replaced_whole_and_readable_by_the_node_exporter(tmp_path: Path):
    path = tmp_path / "kafkakit-cdc-orders.prom"
    path.write_text("old\n")
    m.write_atomically(path, "new\n")
    assert path.read_text() == "new\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temp file left
    with pytest.raises(FileNotFoundError):
        m.write_atomically(tmp_path / "missing" / "x.prom", "x\n")


def test_a_restarted_driver_carries_on_the_figures_of_its_own_file(tmp_path: Path):
    path = tmp_path / "kafkakit-cdc-orders.prom"
    first = m.MetricsFile(path, LABELS["topic"], LABELS["output"], now=100.0)
    assert m.parse(path.read_text(), LABELS) == m.Figures(progress=100.0)  # written at start
    first.batch(110.0, oldest_ms=104_000, newest_ms=108_000)
    first.idle(120.0)
    assert m.parse(path.read_text(), LABELS) == m.Figures(
        source_commit=108.0, batch_commit=110.0, lag=6.0, progress=120.0
    )
    # Restarted: what the output holds is known again at once; its start counts as progress.
    second = m.MetricsFile(path, LABELS["topic"], LABELS["output"], now=300.0)
    assert second.figures == m.Figures(source_commit=108.0, batch_commit=110.0, lag=6.0, progress=300.0)
    # The file of another output is not taken over.
    other = m.MetricsFile(path, LABELS["topic"], "/srv/spark/cdc/other", now=400.0)
    assert other.figures == m.Figures(progress=400.0)


def test_an_unwritable_metrics_file_fails_the_start(tmp_path: Path):
    with pytest.raises(FileNotFoundError):
        m.MetricsFile(tmp_path / "missing" / "x.prom", "t", "/o", now=1.0)


def test_the_alerts_use_the_names_the_job_writes():
    used = set().union(*monitoring.alert_rules_metric_names(yaml.safe_load(ALERTS.read_text())).values())
    cdc = {n for n in used | set(monitoring.KAFKAKIT_METRICS) if n.startswith("kafkakit_cdc_")}
    assert cdc == {m.LAG, m.BATCH_COMMIT, m.PROGRESS}
    assert cdc <= set(m.HELP)


OTHER = {"topic": "shop.public.items", "output": "/srv/spark/cdc/items"}


def test_the_jobs_sharing_the_file_keep_each_others_samples(tmp_path: Path):
    """One file for every CDC job of the host (the spark role links it into the textfile folder):
    each job rewrites only its own samples, and each metric's samples stay together under one HELP."""
    path = tmp_path / "kafkakit-cdc.prom"
    path.write_text("")  # as the spark role makes it
    orders = m.MetricsFile(path, LABELS["topic"], LABELS["output"], now=100.0)
    items = m.MetricsFile(path, OTHER["topic"], OTHER["output"], now=105.0)
    orders.batch(110.0, oldest_ms=104_000, newest_ms=108_000)
    items.idle(120.0)
    text = path.read_text()
    assert m.parse(text, LABELS) == m.Figures(source_commit=108.0, batch_commit=110.0, lag=6.0, progress=110.0)
    assert m.parse(text, OTHER) == m.Figures(progress=120.0)
    assert text.count(f"# HELP {m.PROGRESS} ") == 1
    progress = [line for line in text.splitlines() if line.startswith(m.PROGRESS)]
    assert len(progress) == 2 and text.index(progress[0]) + len(progress[0]) + 1 == text.index(progress[1])
    result = subprocess.run([promtool(), "check", "metrics"], input=text, capture_output=True, text=True, check=False)
    assert result.returncode == 0 and not result.stdout.strip(), result.stdout + result.stderr


def test_a_retired_jobs_samples_are_dropped_and_the_others_kept(tmp_path: Path):
    path = tmp_path / "kafkakit-cdc.prom"
    m.MetricsFile(path, LABELS["topic"], LABELS["output"], now=100.0)
    m.MetricsFile(path, OTHER["topic"], OTHER["output"], now=105.0)
    assert m.main(["forget", "--metrics-file", str(path), "--source", OTHER["topic"], "--output", OTHER["output"]]) == 0
    assert m.parse_all(path.read_text()) == {m.labels_text(LABELS): m.Figures(progress=100.0)}
    m.forget(path, LABELS["topic"], LABELS["output"])
    assert path.read_text() == ""  # still there: the textfile folder's link does not dangle


def test_given_the_textfile_folders_link_the_driver_writes_the_file_it_points_at(tmp_path: Path):
    """The link stays a link, and no temporary file ever lands in the textfile folder (the driver
    may not write there)."""
    own, textfile = tmp_path / "spark-metrics", tmp_path / "node-exporter"
    own.mkdir()
    textfile.mkdir()
    target = own / "kafkakit-cdc.prom"
    target.write_text("")
    link = textfile / "kafkakit-cdc.prom"
    link.symlink_to(target)
    textfile.chmod(0o555)
    try:
        job = m.MetricsFile(link, LABELS["topic"], LABELS["output"], now=100.0)
        job.batch(110.0, oldest_ms=104_000, newest_ms=108_000)
    finally:
        textfile.chmod(0o755)
    assert link.is_symlink() and link.resolve() == target
    assert m.parse(link.read_text(), LABELS).lag == 6.0
    assert sorted(p.name for p in textfile.iterdir()) == ["kafkakit-cdc.prom"]
    assert sorted(p.name for p in own.iterdir()) == [".kafkakit-cdc.prom.lock", "kafkakit-cdc.prom"]
