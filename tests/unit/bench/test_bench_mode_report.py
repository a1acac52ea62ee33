"""The report's ZooKeeper vs KRaft section: medians per mode, the ratio, the winner sentence."""

from kafkakit.bench.__main__ import write_outputs
from kafkakit.bench.mode_report import MODE_METRICS, render_mode_section, verdict
from kafkakit.bench.modes import ModeTarget, ScenarioSettings, mode_cases
from kafkakit.bench.plan import Endpoint, make_case
from kafkakit.bench.report import Machine
from kafkakit.bench.runner import run_plan
from kafkakit.bench.stats import summarize
from tests.unit.support.bench_fakes import FakeRunner

ZK = ModeTarget("zookeeper", "dc1", "/lab/dc1/client.conf", "/lab/dc1/client.properties", "10.0.0.11:9093")
KRAFT = ModeTarget("kraft", "dc2", "/lab/dc2/client.conf", "/lab/dc2/client.properties", "10.0.0.21:9093")
CASES = mode_cases([ZK, KRAFT], settings=ScenarioSettings(inventory="/lab/hosts.yml", python="python3"))
MACHINE = Machine("2", "23.5 GiB", "Test CPU", "2026-11-22 14:00 UTC")
LABELS = {"zookeeper": "dc1, Kafka 3.9.2", "kraft": "dc2, Kafka 4.3.1"}


def metric(kind, name):
    return next(m for m in MODE_METRICS if m.kind == kind and m.metric == name)


CREATE = metric("partitions", "create_s")
RATE = metric("throughput", "records_per_sec")


def test_lower_time_wins_by_the_ratio_of_medians():
    text = verdict(CREATE, summarize([14.0, 15.0, 13.0]), summarize([2.0, 2.5, 1.9]))
    assert text == (
        "Creating 1,000 partitions: KRaft wins by 7.00× (faster), 2.00 s with KRaft against 14.0 s with ZooKeeper."
    )


def test_higher_throughput_wins():
    text = verdict(RATE, summarize([21000.0, 22000.0, 20000.0]), summarize([18000.0, 17500.0, 18500.0]))
    assert text.startswith("Producer throughput at equal durability: ZooKeeper wins by 1.17× (more records/s), ")
    assert "18000 records/s with KRaft against 21000 records/s with ZooKeeper." in text


def test_overlapping_ranges_are_said():
    text = verdict(CREATE, summarize([10.0, 12.0, 20.0]), summarize([8.0, 9.0, 11.0]))
    assert "KRaft wins by 1.33×" in text and "ranges overlap" in text


def test_within_five_percent_is_a_draw():
    text = verdict(CREATE, summarize([10.0]), summarize([10.3]))
    assert text.startswith("Creating 1,000 partitions: neither mode wins, 10.3 s with KRaft against 10.0 s")


def test_a_mode_without_results_gets_no_verdict():
    assert "no verdict, KRaft has no successful run" in verdict(CREATE, summarize([10.0]), None)


def test_section_table_ratio_and_one_sentence_per_case():
    summaries = {
        "kraft-vs-zk/partitions/zookeeper": {"create_s": summarize([14.0, 13.0, 15.0]), "delete_s": summarize([6.0])},
        "kraft-vs-zk/partitions/kraft": {"create_s": summarize([2.0, 1.8, 2.2]), "delete_s": summarize([3.0])},
        "kraft-vs-zk/shutdown/zookeeper": {"stop_s": summarize([9.0])},
    }
    text = render_mode_section(CASES, summaries, LABELS)
    assert text.startswith("## ZooKeeper vs KRaft")
    assert "ZooKeeper mode: dc1, Kafka 3.9.2. KRaft: dc2, Kafka 4.3.1." in text
    row = next(line for line in text.splitlines() if "create 1,000 partitions" in line)
    assert row == (
        "| `kraft-vs-zk/partitions` | create 1,000 partitions until all have a leader "
        "| 14.0 s (13.0–15.0, 3 runs) | 2.00 s (1.80–2.20, 3 runs) | **0.14** |"
    )
    sentences = [line for line in text.splitlines() if line.startswith("- ") and ("wins" in line or "verdict" in line)]
    assert len(sentences) == 4  # one per kind: partitions, failover, shutdown, throughput
    assert "no partition leader dies" in text  # the failover's placement is explained


def test_no_section_without_mode_cases():
    sasl = Endpoint("SASL_SSL", "b1:9093", "/etc/kafka/client.properties")
    assert render_mode_section([make_case("producer", sasl)], {}, LABELS) == ""


def test_report_has_the_section_and_keeps_mode_cases_out_of_the_client_tables(tmp_path):
    throughput = [c for c in CASES if c.name.startswith("kraft-vs-zk/throughput/")]
    picked = [c for c in CASES if c.tool == "failover"] + throughput
    fake = FakeRunner(
        rates={throughput[0].topic: [1.0, 20000.0, 21000.0], throughput[1].topic: [1.0, 24000.0, 26000.0]},
        scenarios={
            ("failover", "zookeeper"): [{"ack_gap_s": 0.2, "metadata_write_s": 19.0, "failed_sends": 0.0}] * 2,
            ("failover", "kraft"): [{"ack_gap_s": 0.1, "metadata_write_s": 3.0, "failed_sends": 0.0}] * 2,
        },
    )
    measurements = run_plan(picked, fake, repetitions=2, records=100)
    write_outputs(
        picked, measurements, out=tmp_path, repetitions=2, records=100, seconds=None, machine=MACHINE,
        chart=False, mode_labels=LABELS,
    )  # fmt: skip
    text = (tmp_path / "report.md").read_text()
    assert "## ZooKeeper vs KRaft" in text and "## Producer" not in text
    assert "The longest wait for an acknowledgement while the active controller fails over: KRaft wins by 2.00×" in text
    assert "Producer throughput at equal durability: KRaft wins by 1.22× (more records/s)" in text
    assert "| `kraft-vs-zk/failover` | kill until a topic can be created | 19.0 s" in text
