"""A produce quota measured on the lab (tests/integration/test_quotas.py, and after a broker restart
scenarios/test_quota_restart.py): quota-writer, which the inventory holds to a produce quota,
producing as fast as it can is throttled by its broker: the produce responses carry a throttle time
above zero, and the rate it gets stays within the quota and a margin; team-a beside it, with no
quota, is never throttled and goes far above the quota."""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import dataclass, field

import pytest
import yaml
from confluent_kafka import KafkaError, Message, Producer

from kafkakit.cluster.admin import read_client_conf
from tests.integration.accounting import account
from tests.integration.lab import CLIENT_DIR, ROOT, Lab
from tests.integration.playbooks import module_process, module_result

QUOTA_USER = "quota-writer"
QUOTA_TOPIC = "quota-test"  # one partition: one broker leads it, and enforces the whole quota
CONTROL_USER = "team-a"  # no quota; writes a topic of its own prefix
PAYLOAD = 1024
# A broker averages a client's rate over a window of quota.window.num samples of
# quota.window.size.seconds, counted as a whole window from the client's first request: a new
# client sends about one window's worth of its quota at once, then waits out throttles. A run as
# long as that window (Kafka's default one) measures what the quota lets through per window.
MEASURE_S = 10.0
MARGIN = 1.5  # the throttled rate stays below quota x MARGIN ...
LEAST = 0.25  # ... and above quota x LEAST: throttled, not stopped
CONTROL_FACTOR = 4  # the unthrottled one goes at least quota x CONTROL_FACTOR ...
CONTROL_PACE = 16  # ... paced at quota x CONTROL_PACE: beside it all along, and no more data than that


def user_conf(dc: str, name: str) -> dict[str, str]:
    """The user's librdkafka settings, as site.yml wrote them (kafka_resources, build/lab/<dc>/users)."""
    return read_client_conf(CLIENT_DIR / dc / "users" / f"{name}.conf")


def declared(lab: Lab, dc: str) -> dict[str, float]:
    """quota-writer's quotas as the inventory declares them for the DC."""
    users = [u for u in lab.group_vars(dc).get("kafka_users") or [] if u.get("name") == QUOTA_USER]
    if not users or not users[0].get("quotas"):
        pytest.skip(f"the inventory declares no quotas for {QUOTA_USER} in {dc}")
    return users[0]["quotas"]


@dataclass
class Flood:
    """A producer sending as fast as it can, and what came back: deliveries, throttles, statistics."""

    user: str
    acked: list[tuple[float, int]] = field(default_factory=list)  # (time.monotonic(), bytes) per delivery
    errors: list[str] = field(default_factory=list)
    throttles: list[tuple[float, float]] = field(default_factory=list)  # (when, seconds) from throttle_cb
    stats_throttle_ms: float = 0.0  # the largest of librdkafka's per-broker throttle windows
    started: float = 0.0
    ended: float = 0.0

    def first_throttle(self) -> float | None:
        """Seconds from the start to the first throttle, None if none."""
        return next((at - self.started for at, seconds in self.throttles if seconds > 0), None)

    def seconds(self) -> float:
        return self.ended - self.started

    def rate(self) -> float:
        """Bytes per second acknowledged between the start and the end of the run."""
        done = sum(size for at, size in self.acked if at <= self.ended)
        return done / self.seconds() if self.seconds() > 0 else 0.0

    def throttled_s(self) -> float:
        return sum(seconds for _, seconds in self.throttles)


def flood(conf: dict[str, str], topic: str, user: str, pace: float | None = None) -> Flood:
    """Produce PAYLOAD-byte records to `topic` for MEASURE_S: as fast as the client can, or at most
    `pace` bytes per second."""
    found = Flood(user)

    def delivered(err: KafkaError | None, msg: Message) -> None:
        if err is None:
            found.acked.append((time.monotonic(), len(msg.value())))
        elif err.code() not in (KafkaError._PURGE_QUEUE, KafkaError._PURGE_INFLIGHT):
            found.errors.append(str(err))

    def statistics(text: str) -> None:
        for broker in json.loads(text).get("brokers", {}).values():
            found.stats_throttle_ms = max(found.stats_throttle_ms, float(broker.get("throttle", {}).get("max", 0)))

    producer = Producer(
        {
            **conf,
            "acks": "all",
            "linger.ms": 5,
            # Small requests, each a small share of the quota: the rate is measured finely.
            "batch.size": 16384,
            "queue.buffering.max.messages": 2000,
            "statistics.interval.ms": 1000,
            "throttle_cb": lambda event: found.throttles.append((time.monotonic(), event.throttle_time)),
            "stats_cb": statistics,
        }
    )
    payload = os.urandom(PAYLOAD)
    found.started = time.monotonic()
    try:
        sent = 0
        while (elapsed := time.monotonic() - found.started) < MEASURE_S:
            if pace is not None and sent > pace * elapsed:
                producer.poll(0.01)
                continue
            try:
                producer.produce(topic, payload, on_delivery=delivered)
            except BufferError:
                producer.poll(0.05)
                continue
            sent += PAYLOAD
            producer.poll(0)
        found.ended = time.monotonic()
    finally:
        # What the client still holds is dropped, not sent at the quota's pace. A throttled
        # producer has it in flight already: a purge of the queue alone leaves it there.
        producer.purge(in_queue=True, in_flight=True)
        producer.flush(10)
    return found


def throttled(found: Flood) -> int:
    return len([seconds for _, seconds in found.throttles if seconds > 0])


def assert_held_to_its_quota(lab: Lab, dc: str, control_topic: str, when: str = "") -> None:
    """quota-writer floods QUOTA_TOPIC while CONTROL_USER floods `control_topic` (one of its
    prefix) beside it: the first is throttled and held near its quota, the second is not."""
    quota = float(declared(lab, dc)["producer_byte_rate"])
    beside: dict[str, Flood | BaseException] = {}

    def control() -> None:
        try:
            beside["control"] = flood(user_conf(dc, CONTROL_USER), control_topic, CONTROL_USER, quota * CONTROL_PACE)
        except BaseException as exc:  # raised again in the test's thread
            beside["control"] = exc

    thread = threading.Thread(target=control)
    thread.start()
    try:
        held = flood(user_conf(dc, QUOTA_USER), QUOTA_TOPIC, QUOTA_USER)
    finally:
        thread.join(MEASURE_S + 60)
    free = beside.get("control")
    if isinstance(free, BaseException):
        raise free
    assert isinstance(free, Flood), "the control producer did not finish"

    first = held.first_throttle()
    where = f"{dc}{' ' + when if when else ''}"
    account(
        f"{where}: {QUOTA_USER} held to producer_byte_rate={quota:.0f} B/s: {held.rate():.0f} B/s over "
        f"{held.seconds():.1f} s, first throttled "
        + (f"{first:.1f} s in" if first is not None else "never")
        + f", then {throttled(held)} times for {held.throttled_s():.1f} s in all; librdkafka's largest "
        f"throttle window {held.stats_throttle_ms:.0f} ms"
    )
    account(
        f"{where}: {CONTROL_USER} beside it, no quota: {free.rate():.0f} B/s over {free.seconds():.1f} s, "
        f"throttled {throttled(free)} times, largest throttle window {free.stats_throttle_ms:.0f} ms"
    )
    assert held.errors == [] and free.errors == [], (held.errors[:3], free.errors[:3])
    # Throttled, by the broker's answer: a throttle time above zero, both as the callback reports it
    # and in librdkafka's statistics of the broker.
    assert first is not None, f"{QUOTA_USER} was not throttled in {held.seconds():.1f} s"
    assert held.throttled_s() > 0 and held.stats_throttle_ms > 0
    # Held to the quota, yet still writing.
    assert quota * LEAST <= held.rate() <= quota * MARGIN, f"{held.rate():.0f} B/s for a quota of {quota:.0f} B/s"
    # The positive control: the same client and settings, beside it all along, without a quota.
    assert free.first_throttle() is None and free.stats_throttle_ms == 0
    assert free.rate() >= quota * CONTROL_FACTOR, f"{free.rate():.0f} B/s: the control is too slow to prove anything"


def apply_quotas(lab: Lab, dc: str, quotas: dict | None) -> dict:
    """kafka_quotas on the DC's first broker for quota-writer only (no other user's quotas are
    owned, nothing is exclusive), as roles/kafka_resources/tasks/quotas.yml runs it. The admin's
    password is a template Ansible fills from the inventory: it is on no command line."""
    host = lab.brokers(dc)[0].name
    conf = lab.client_conf(dc)
    defaults = yaml.safe_load((ROOT / "roles/kafka_common/defaults/main.yml").read_text())
    pki = lab.group_vars(dc).get("kafka_pki_dir") or defaults["kafka_pki_dir"]
    args = {
        "bootstrap_servers": conf["bootstrap.servers"],
        "kafka_version": str(lab.group_vars(dc).get("kafka_version") or defaults["kafka_version"]),  # the host's
        "admin_user": conf["sasl.username"],
        "admin_password": "{{ kafka_admin_password }}",
        "truststore": f"{pki}/ca.crt",
        "users": [{"name": QUOTA_USER, "quotas": quotas}],
    }
    proc = module_process(host, "kafka_quotas", args)
    assert proc.stdout.strip(), proc.stderr[-2000:]
    result = module_result(proc, host)
    assert not result.get("failed"), result.get("msg")
    return result
