"""Encrypted storage (roles/storage): the data directories of brokers and ZooKeeper servers sit on an
encrypted volume, and a payload produced to Kafka is readable by a consumer, present in the broker's
(decrypted) segment files and absent from the raw volume image.

In the lab the volume is an ext4 image with native encryption (fscrypt) on a loop device. On AWS the
encryption is the KMS-encrypted EBS volume, below the block device, where the raw bytes cannot be
read from the host: those checks are skipped there (hosts with `storage_volume_id` in the inventory).
In the lab, a data directory anywhere but on the loop-mounted image fails the tests. A ZooKeeper
server beside a broker (dc1) has a volume of its own, so a full Kafka disk leaves its log room."""

from __future__ import annotations

import shlex
import uuid
from dataclasses import dataclass

import pytest
from confluent_kafka import KafkaError, Message, Producer
from confluent_kafka.admin import AdminClient

from tests.integration.clients import read_all
from tests.integration.lab import Lab, properties

LAB = Lab()
DCS = ("dc1", "dc2")
STORAGE_UNIT = "kafkakit-storage"
ZOOKEEPER_STORAGE_UNIT = "kafkakit-storage-zookeeper"  # its own volume, beside a broker
BROKERS = [(h, "kafka") for dc in DCS for h in LAB.brokers(dc)]
ZOOKEEPERS = [(h, "zookeeper") for dc in DCS for h in LAB.zookeepers(dc)]


# Which of argv[2:] occur in the file argv[1], reading only its data extents (SEEK_DATA/SEEK_HOLE): a
# hole reads as zeros and holds nothing, and the lab's images are sparse (2 GiB, tens of MiB written),
# so this reads what grep would find in a fraction of the time. A window keeps a needle that straddles
# two reads. Where the file system cannot tell holes, SEEK_HOLE gives the end: the whole file is read.
SCAN = r"""
import os, sys
needles = [a.encode() for a in sys.argv[2:]]
keep = max(map(len, needles)) - 1
found = set()
fd = os.open(sys.argv[1], os.O_RDONLY)
pos, end = 0, os.fstat(fd).st_size
while pos < end:
    try:
        start = os.lseek(fd, pos, os.SEEK_DATA)
    except OSError:
        break
    stop = os.lseek(fd, start, os.SEEK_HOLE)
    os.lseek(fd, start, os.SEEK_SET)
    tail = b""
    while start < stop:
        block = os.read(fd, min(1 << 20, stop - start))
        if not block:
            break
        start += len(block)
        window = tail + block
        found.update(n for n in needles if n in window)
        tail = window[-keep:]
    pos = stop
print("\n".join(sorted(n.decode() for n in found)))
"""


def found_in(host, path: str, *needles: str) -> set[str]:
    """Which of `needles` the file `path` on `host` holds (SCAN)."""
    args = " ".join(shlex.quote(a) for a in (path, *needles))
    return set(host.check_output(f"python3 -c {shlex.quote(SCAN)} {args}").split())


def data_dirs(host, service: str) -> list[str]:
    """The directories the service really writes to, from its own configuration."""
    if service == "kafka":
        return properties(host.file("/etc/kafka/server.properties").content_string)["log.dirs"].split(",")
    cfg = properties(host.file("/etc/zookeeper/zoo.cfg").content_string)
    return [cfg["dataDir"], cfg["dataLogDir"]]


def on_ebs(node) -> bool:
    """AWS hosts carry their EBS volume id in the inventory; the lab's do not."""
    children = LAB.doc["all"]["children"].values()
    return any("storage_volume_id" in (((body or {}).get("hosts") or {}).get(node.name) or {}) for body in children)


@dataclass(frozen=True)
class Volume:
    device: str
    fstype: str
    image: str | None


def volume_of(host, node, path: str) -> Volume:
    """The device (and, in the lab, the image file) under `path`, a bind mount of the volume."""
    # -v: the device alone, without the bind mount's [/kafka] suffix.
    device, fstype = host.check_output(f"findmnt -n -v -o SOURCE,FSTYPE -T {shlex.quote(path)}").split()
    if on_ebs(node):
        root = host.check_output("findmnt -n -v -o SOURCE /").strip()
        assert device != root, f"{path} is on the root disk {root}, not on the data volume"
        return Volume(device, fstype, None)
    # In the lab anything but the loop-mounted image (e.g. the container's overlay) is plain storage.
    assert device.startswith("/dev/loop"), f"{path} is on {device} ({fstype}), not on the encrypted image"
    return Volume(device, fstype, host.check_output(f"losetup -n -O BACK-FILE {device}").strip())


@pytest.mark.parametrize(("node", "service"), BROKERS + ZOOKEEPERS, ids=lambda v: getattr(v, "name", v))
def test_data_dirs_are_on_the_encrypted_volume(node, service):
    host = LAB.testinfra(node)
    beside_broker = service == "zookeeper" and node.broker_id is not None
    unit = host.service(ZOOKEEPER_STORAGE_UNIT if beside_broker else STORAGE_UNIT)
    assert unit.is_enabled and unit.is_running
    kafka_devices = {volume_of(host, node, d).device for d in data_dirs(host, "kafka")} if beside_broker else set()
    for path in data_dirs(host, service):
        volume = volume_of(host, node, path)
        assert volume.device not in kafka_devices, f"{path} shares {volume.device} with the broker's log dirs"
        assert volume.fstype == "ext4", f"{path}: {volume}"
        if volume.image is None:
            continue  # EBS: encrypted by KMS below the block device, nothing to see from the host
        superblock = host.check_output(f"tune2fs -l {volume.device}").splitlines()
        features = next(line for line in superblock if line.startswith("Filesystem features:"))
        assert "encrypt" in features.split(), f"{volume.device}: {features}"
        status = host.check_output(f"fscrypt status {shlex.quote(path)}")
        assert "is encrypted with fscrypt" in status and "Unlocked: Yes" in status, status
        # autoclear: the loop device detaches itself when the container goes, so teardown leaks none.
        assert host.check_output(f"losetup -n -O AUTOCLEAR {volume.device}").strip() == "1"


def produce_one(conf: dict[str, str], topic: str, value: str) -> None:
    """One acks=all record, uncompressed so its bytes land in the segment as they are."""
    results: list[KafkaError | None] = []

    def on_delivery(err: KafkaError | None, _msg: Message) -> None:
        results.append(err)

    producer = Producer({**conf, "acks": "all", "enable.idempotence": "true", "compression.type": "none"})
    producer.produce(topic, value=value.encode(), partition=0, on_delivery=on_delivery)
    assert producer.flush(60) == 0, "record still in flight after 60 s"
    assert results == [None], f"delivery failed: {results}"


def test_payload_is_readable_but_not_in_the_raw_image(client_conf, new_topic, admin: AdminClient):
    topic = new_topic(partitions=1, replication_factor=3)
    payload = f"kafkakit-storage-proof-{uuid.uuid4().hex}"
    produce_one(client_conf, topic, payload)
    assert [m.value().decode() for m in read_all(client_conf, topic, expected=1)] == [payload]

    partition = admin.list_topics(topic=topic, timeout=10).topics[topic].partitions[0]
    # The leader first, then every other in-sync replica: acks=all put the record on each.
    replicas = [partition.leader] + [b for b in partition.isrs if b != partition.leader]
    raw_unreadable: list[str] = []
    for broker_id in replicas:
        node = LAB.broker_by_id(broker_id, "dc1")
        host = LAB.testinfra(node)
        candidates = [f"{d}/{topic}-0" for d in data_dirs(host, "kafka")]
        partition_dirs = [d for d in candidates if host.file(d).is_directory]
        assert len(partition_dirs) == 1, f"broker {broker_id}: {partition_dirs}"
        # Through the mounted (decrypted) directory the segment holds the payload (the positive
        # control of the scan below, with the same scanner)...
        segments = host.check_output(f"grep -a -r -l -F -- {shlex.quote(payload)} {shlex.quote(partition_dirs[0])}")
        assert any(s.endswith(".log") for s in segments.split()), f"broker {broker_id}: {segments!r}"
        segment = next(s for s in segments.split() if s.endswith(".log"))
        assert found_in(host, segment, payload, topic) == {payload}, f"broker {broker_id}: the scan missed {segment}"
        # ...and once written out, neither the payload nor the topic's directory name (file names are
        # encrypted too) is anywhere in the image file that holds the volume.
        host.check_output("sync")
        image = volume_of(host, node, partition_dirs[0]).image
        if image is None:
            raw_unreadable.append(node.name)
            continue
        leak = found_in(host, image, payload, topic)
        assert leak == set(), f"broker {broker_id}: {image} leaks {sorted(leak)}"
    if raw_unreadable:
        pytest.skip(f"raw bytes of EBS volumes cannot be read from the host ({', '.join(raw_unreadable)})")
