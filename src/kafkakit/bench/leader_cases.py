"""leader-failover (issue #47): the host of a partition's leader lost under an independent
idempotent acks=all producer, in both metadata modes. One case per mode, the ZooKeeper one first,
in a group of their own (Case.group; runner.run_plan runs it after the other cases):

    leader-failover/zookeeper   the ZooKeeper-mode data centre (the lab's dc1, 3 brokers)
    leader-failover/kraft       the KRaft data centre; the lab's dc2 has 2 brokers, so its spare
                                broker (ansible/lab/lab-config.yml's lab_spare_hosts, dc2-kafka3)
                                joins it in the group's set-up and leaves it in its teardown
                                (kafkakit.bench.spare): the other cases never see it, and the lab
                                is as `make lab` left it afterwards

Each run is one `python -m kafkakit.bench.scenarios leader-failover` (kafkakit.bench.leader_failover).
The settings that decide the window are whatever the lab was deployed with: the before/after
comparison is two bench runs (docs/benchmark.md).
"""

from __future__ import annotations

PREFIX = "leader-failover"
GROUP = PREFIX
BROKERS = 3  # the topic's replicas, one on each of as many brokers
PARTITIONS = 3  # one led by each of them; partition 0 by the broker whose host is lost
VICTIM_PARTITION = 0
MIN_INSYNC = 2
RATE = 300  # records/s over the partitions: an ack of each every 10 ms, the gaps' resolution
RESTART_AFTER = 10.0  # s from the kill to the start
TARGET_S = 6.0  # the longest window without an acknowledgement issue #47 asks for
