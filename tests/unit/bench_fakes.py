"""A fake runner for the bench harness tests: answers each command with real tool output
(the fixtures), with the producer's rate taken from a list so that medians are known."""

from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures" / "bench"


def producer_line(records_per_sec: float, mb_per_sec: float = 10.0) -> str:
    return (
        f"100 records sent, {records_per_sec} records/sec ({mb_per_sec} MB/sec), 5.0 ms avg latency, "
        "9.00 ms max latency, 4 ms 50th, 7 ms 95th, 8 ms 99th, 9 ms 99.9th.\n"
    )


class FakeRunner:
    def __init__(self, rates=None, fail_on=None):
        self.calls: list[list[str]] = []
        self.rates = dict(rates or {})  # topic -> list of records/s, served in order
        self.fail_on = fail_on

    def __call__(self, command: list[str]) -> str:
        self.calls.append(command)
        if self.fail_on and self.fail_on in " ".join(command):
            raise RuntimeError("exit 1: broker unreachable")
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
