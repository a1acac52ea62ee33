"""How far behind its database the output of cdc.py is, as a Prometheus text file for node
exporter's textfile collector (`cdc.py run --metrics-file`). No Spark here: the unit tests import it.

The job commits no Kafka consumer offsets, so the kit's consumer-lag exporter cannot see it; the
driver reports for itself after each micro-batch has committed its output version."""

from __future__ import annotations

import os
import re
import tempfile
import threading
from dataclasses import dataclass, replace
from pathlib import Path

SOURCE_COMMIT = "kafkakit_cdc_source_commit_timestamp_seconds"
BATCH_COMMIT = "kafkakit_cdc_batch_commit_timestamp_seconds"
LAG = "kafkakit_cdc_lag_seconds"
PROGRESS = "kafkakit_cdc_progress_timestamp_seconds"

HELP = {
    SOURCE_COMMIT: "Commit time in the database of the newest change the output holds, as a Unix time.",
    BATCH_COMMIT: "Wall-clock time the last micro-batch committed its output version, as a Unix time.",
    LAG: "Of the last micro-batch that had changes: its commit time minus the oldest database commit time among them.",
    PROGRESS: "Last time the job started, committed a micro-batch or found no change waiting, as a Unix time.",
}


@dataclass(frozen=True)
class Figures:
    """What the file reports, in seconds; None: not known yet (no such sample written)."""

    source_commit: float | None = None
    batch_commit: float | None = None
    lag: float | None = None
    progress: float | None = None


def after_batch(before: Figures, committed: float, oldest_ms: int | None, newest_ms: int | None) -> Figures:
    """The figures once a micro-batch has committed its output at `committed` (Unix s); oldest_ms
    and newest_ms are the database commit times (Debezium's source.ts_ms) of its changes, None when
    it had none. A batch Spark runs again, or one of older changes, never lowers source_commit."""
    out = replace(before, batch_commit=committed, progress=committed)
    if oldest_ms is None or newest_ms is None:
        return out
    newest = newest_ms / 1000
    held = newest if before.source_commit is None else max(before.source_commit, newest)
    return replace(out, source_commit=held, lag=committed - oldest_ms / 1000)


def after_idle(before: Figures, now: float) -> Figures:
    """The driver found its query with no change waiting (or has just started it)."""
    return replace(before, progress=now)


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def labels_text(labels: dict[str, str]) -> str:
    return ",".join(f'{k}="{_escape(v)}"' for k, v in sorted(labels.items()))


def render(figures: Figures, labels: dict[str, str]) -> str:
    """Prometheus text format: a gauge per known figure, each with HELP and TYPE."""
    lines = []
    for name, value in (
        (SOURCE_COMMIT, figures.source_commit),
        (BATCH_COMMIT, figures.batch_commit),
        (LAG, figures.lag),
        (PROGRESS, figures.progress),
    ):
        if value is not None:
            sample = f"{name}{{{labels_text(labels)}}} {value!r}"
            lines += [f"# HELP {name} {HELP[name]}", f"# TYPE {name} gauge", sample]
    return "".join(line + "\n" for line in lines)


_SAMPLE = re.compile(r"^(kafkakit_cdc_\w+)\{(.*)\} (\S+)$")


def parse(text: str, labels: dict[str, str]) -> Figures:
    """The figures of a file render() wrote for these labels (a restarted driver carries them on:
    the output it resumes holds the same changes). Samples with other labels are ignored."""
    found = {}
    for line in text.splitlines():
        m = _SAMPLE.match(line)
        if m and m.group(2) == labels_text(labels):
            found[m.group(1)] = float(m.group(3))
    return Figures(found.get(SOURCE_COMMIT), found.get(BATCH_COMMIT), found.get(LAG), found.get(PROGRESS))


def write_atomically(path: str | Path, text: str) -> None:
    """Temp file in the same folder, then renamed over `path`: the collector never reads half a
    file. Its name does not end in .prom, so the collector skips it meanwhile."""
    target = Path(path)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        # mkstemp makes it 0600; the node exporter runs as another user.
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class MetricsFile:
    """The driver's figures and their file. foreachBatch runs in py4j's callback thread, the
    progress loop in the main one: hence the lock."""

    def __init__(self, path: str | Path, topic: str, output: str, now: float) -> None:
        self.path = Path(path)
        self.labels = {"topic": topic, "output": output}
        seeded = parse(self.path.read_text(), self.labels) if self.path.exists() else Figures()
        self.figures = after_idle(seeded, now)
        self._lock = threading.Lock()
        # Written at once: an unwritable path fails the start, not the first batch.
        self._write()

    def _write(self) -> None:
        write_atomically(self.path, render(self.figures, self.labels))

    def batch(self, committed: float, oldest_ms: int | None, newest_ms: int | None) -> None:
        with self._lock:
            self.figures = after_batch(self.figures, committed, oldest_ms, newest_ms)
            self._write()

    def idle(self, now: float) -> None:
        with self._lock:
            self.figures = after_idle(self.figures, now)
            self._write()
