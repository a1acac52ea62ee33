"""How far behind its database the output of cdc.py is, as a Prometheus text file for node
exporter's textfile collector (`cdc.py run --metrics-file`). No Spark here: the unit tests import it.

The job commits no Kafka consumer offsets, so the kit's consumer-lag exporter cannot see it; the
driver reports for itself after each micro-batch has committed its output version.

Every CDC job on a host writes its samples, told apart by their labels, into the one file the
spark role links into the textfile folder (<spark_metrics_dir>/kafkakit-cdc.prom): a job rewrites
the file with the others' samples kept, under a lock, so two drivers never lose each other's.
`python3 -m kafkakit_jobs.cdc_metrics forget ...` drops a retired job's samples."""

from __future__ import annotations

import argparse
import fcntl
import os
import re
import sys
import tempfile
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
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


def _values(figures: Figures) -> dict[str, float | None]:
    return {
        SOURCE_COMMIT: figures.source_commit,
        BATCH_COMMIT: figures.batch_commit,
        LAG: figures.lag,
        PROGRESS: figures.progress,
    }


def render_all(jobs: Mapping[str, Figures]) -> str:
    """Prometheus text format for every job (by labels_text()): a gauge per figure some job knows,
    its HELP and TYPE once, then each job's sample (a metric's samples must stay together)."""
    lines = []
    for name in HELP:
        samples = [(key, _values(figures)[name]) for key, figures in sorted(jobs.items())]
        samples = [(key, value) for key, value in samples if value is not None]
        if samples:
            lines += [f"# HELP {name} {HELP[name]}", f"# TYPE {name} gauge"]
            lines += [f"{name}{{{key}}} {value!r}" for key, value in samples]
    return "".join(line + "\n" for line in lines)


def render(figures: Figures, labels: dict[str, str]) -> str:
    """The file of one job alone."""
    return render_all({labels_text(labels): figures})


_SAMPLE = re.compile(r"^(kafkakit_cdc_\w+)\{(.*)\} (\S+)$")


def parse_all(text: str) -> dict[str, Figures]:
    """Every job's figures in a file render_all() wrote, by labels_text()."""
    found: dict[str, dict[str, float]] = {}
    for line in text.splitlines():
        m = _SAMPLE.match(line)
        if m and m.group(1) in HELP:
            found.setdefault(m.group(2), {})[m.group(1)] = float(m.group(3))
    return {
        key: Figures(v.get(SOURCE_COMMIT), v.get(BATCH_COMMIT), v.get(LAG), v.get(PROGRESS)) for key, v in found.items()
    }


def parse(text: str, labels: dict[str, str]) -> Figures:
    """The figures of the job with these labels (a restarted driver carries them on: the output it
    resumes holds the same changes); none when the file has no sample of it."""
    return parse_all(text).get(labels_text(labels), Figures())


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


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """The file's lock between the drivers sharing it: a lock file beside it, never removed (a
    lock on a file someone may replace would lock nothing)."""
    # Read-only is enough for flock, and lets the drivers use a lock file another user made.
    fd = os.open(path.parent / f".{path.name}.lock", os.O_RDONLY | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def update(path: Path, key: str, figures: Figures | None) -> Figures:
    """Set (None: drop) the samples of the job `key` in the file, the other jobs' kept; what the
    file held for it before."""
    with _locked(path):
        jobs = parse_all(path.read_text()) if path.exists() else {}
        before = jobs.pop(key, Figures())
        if figures is not None:
            jobs[key] = figures
        write_atomically(path, render_all(jobs))
    return before


def forget(path: str | Path, topic: str, output: str) -> None:
    """Drop a retired job's samples: left in the file, they would read as a stalled job."""
    update(Path(path).resolve(), labels_text({"topic": topic, "output": output}), None)


class MetricsFile:
    """The driver's figures and their file. foreachBatch runs in py4j's callback thread, the
    progress loop in the main one: hence the lock."""

    def __init__(self, path: str | Path, topic: str, output: str, now: float) -> None:
        # Given the link in the textfile folder, the file it points at: the temporary file of each
        # write goes beside the real one, in a folder the driver may write to.
        self.path = Path(path).resolve()
        self.labels = {"topic": topic, "output": output}
        self._key = labels_text(self.labels)
        self._lock = threading.Lock()
        # Written at once, seeded from the file: an unwritable path fails the start, not the first batch.
        with _locked(self.path):
            jobs = parse_all(self.path.read_text()) if self.path.exists() else {}
            self.figures = after_idle(jobs.get(self._key, Figures()), now)
            jobs[self._key] = self.figures
            write_atomically(self.path, render_all(jobs))

    def _write(self) -> None:
        update(self.path, self._key, self.figures)

    def batch(self, committed: float, oldest_ms: int | None, newest_ms: int | None) -> None:
        with self._lock:
            self.figures = after_batch(self.figures, committed, oldest_ms, newest_ms)
            self._write()

    def idle(self, now: float) -> None:
        with self._lock:
            self.figures = after_idle(self.figures, now)
            self._write()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m kafkakit_jobs.cdc_metrics", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    drop = sub.add_parser("forget", help="drop a retired job's samples from the metrics file (run as its user)")
    drop.add_argument("--metrics-file", required=True)
    drop.add_argument("--source", required=True, help="the job's --source")
    drop.add_argument("--output", required=True, help="the job's --output")
    args = parser.parse_args(argv)
    forget(args.metrics_file, args.source, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
