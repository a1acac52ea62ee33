"""A fake runner for the bench harness tests: answers each command with real tool output
(the fixtures), with the producer's rate taken from a list so that medians are known; the
kraft-vs-zk scenarios answer with their result line, figures from a list per scenario and mode."""

from pathlib import Path

from kafkakit.bench.parsers import format_scenario

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "bench"


def producer_line(records_per_sec: float, mb_per_sec: float = 10.0) -> str:
    return (
        f"100 records sent, {records_per_sec} records/sec ({mb_per_sec} MB/sec), 5.0 ms avg latency, "
        "9.00 ms max latency, 4 ms 50th, 7 ms 95th, 8 ms 99th, 9 ms 99.9th.\n"
    )


SCENARIO_DEFAULTS = {
    "partitions": {"create_s": 10.0, "delete_s": 5.0},
    "failover": {"ack_gap_s": 0.5, "metadata_write_s": 19.0, "failed_sends": 0.0},
    "shutdown": {"stop_s": 8.0, "restart_s": 30.0},
    "leader-failover": {"ack_gap_s": 13.5, "any_ack_gap_s": 13.6, "elected_s": 13.4, "isr_back_s": 9.0, "lost": 0.0},
}


class FakeRunner:
    def __init__(self, rates=None, fail_on=None, scenarios=None):
        self.calls: list[list[str]] = []
        self.rates = dict(rates or {})  # topic -> list of records/s, served in order
        self.fail_on = fail_on
        # (scenario, mode) -> list of metric dicts, served in order
        self.scenarios = {k: list(v) for k, v in (scenarios or {}).items()}

    def scenario(self, command: list[str]) -> str:
        name = command[command.index("kafkakit.bench.scenarios") + 1]
        if name == "topic":
            return ""
        queue = self.scenarios.get((name, command[command.index("--mode") + 1]))
        return "JVM noise\n" + format_scenario(name, queue.pop(0) if queue else SCENARIO_DEFAULTS[name]) + "\n"

    def __call__(self, command: list[str]) -> str:
        self.calls.append(command)
        if self.fail_on and self.fail_on in " ".join(command):
            raise RuntimeError("exit 1: broker unreachable")
        if "kafkakit.bench.scenarios" in command:
            return self.scenario(command)
        if "org.apache.kafka.tools.TopicCommand" in command or "kafka.admin.ConfigCommand" in command:
            return ""
        if "org.apache.kafka.tools.ProducerPerformance" in command:
            topic = command[command.index("--topic") + 1]
            # Producer runs write to "<case topic>-<run>": the rates are keyed by the case's topic.
            rates = next((r for t, r in self.rates.items() if topic == t or topic.startswith(f"{t}-")), None)
            return producer_line(rates.pop(0)) if rates else (FIXTURES / "producer_100_none.txt").read_text()
        if "org.apache.kafka.tools.ConsumerPerformance" in command:
            return (FIXTURES / "consumer_hide_header.txt").read_text()
        if "org.apache.kafka.tools.EndToEndLatency" in command:
            return (FIXTURES / "end_to_end_latency.txt").read_text()
        raise AssertionError(f"unexpected command {command}")

    def measured(self, main_class: str) -> list[list[str]]:
        return [c for c in self.calls if main_class in c]
