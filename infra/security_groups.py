"""Least-privilege security groups, one per component group of a data centre.

Ingress, port by port:
  ZooKeeper 2182 (TLS client)  from ZooKeeper and the brokers;  2888/3888  from ZooKeeper only
                               (ZooKeeper data centres only)
  KRaft controller 9094 (mTLS) from the controllers and the brokers of the same data centre
                               (KRaft data centres only: they have no ZooKeeper group)
  Kafka 9091 (inter-broker)    from the brokers only
  Kafka 9093 (SASL_SSL client) from the brokers, MM2, Connect, Spark, monitoring, the declared
                               client CIDRs/groups, and the remote MM2 and monitoring hosts (by /32:
                               groups do not cross regions)
  Spark internal range         from the Spark group only (7077, driver 7078, block manager 7079,
                               the workers' ephemeral RPC port), and SSH 22 for the sshfs share;
                               7077 from declared Spark clients; UIs 8080/8081 from admin CIDRs
  MM2 REST 8083                from the MM2 group only
  Connect REST 8083 (mTLS)     from the Connect workers of the same data centre (requests forwarded
                               to the leader), the monitoring hosts (remote ones by /32) and admin CIDRs
  JMX agents 7071/7072/7073/7074, node exporter 9100
                               from the monitoring groups of every data centre (remote by /32);
                               on the Spark group the node exporter only (the master's: the CDC
                               jobs' lag)
  Prometheus 9090              from admin CIDRs only
  SSH 22                       nowhere, unless the stack declares admin CIDRs
Nothing is open to 0.0.0.0/0. Egress: HTTP(S) out (packages, archives, AWS APIs) and
anything to the own and peered VPCs (the other side's ingress rules decide).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from infra import ports
from infra.model import DataCentreConfig, StackConfig
from infra.tagging import Tagger

# What Prometheus scrapes (and the lag exporter reads as a Kafka client), per scraped group.
SCRAPED_PORTS: dict[str, tuple[int, ...]] = {
    "zookeeper": (ports.JMX_ZOOKEEPER, ports.NODE_EXPORTER),
    "controller": (ports.JMX_KAFKA_CONTROLLER, ports.NODE_EXPORTER),
    "kafka": (ports.JMX_KAFKA_BROKER, ports.NODE_EXPORTER, ports.KAFKA_CLIENT),
    "mirrormaker": (ports.JMX_MIRRORMAKER, ports.NODE_EXPORTER),
    "connect": (ports.JMX_KAFKA_CONNECT, ports.NODE_EXPORTER),
    # The master's node exporter serves the CDC jobs' textfile metrics; the group is the workers' too.
    "spark": (ports.NODE_EXPORTER,),
}


@dataclass(frozen=True)
class Source:
    """Where traffic may come from: a security group of the same region, or a CIDR."""

    label: str
    group_id: pulumi.Input[str] | None = None
    cidr: pulumi.Input[str] | None = None


class ClusterSecurityGroups(pulumi.ComponentResource):
    """One data centre's groups, keyed by component: zookeeper (ZooKeeper DCs) or controller (KRaft
    DCs), kafka, spark, mirrormaker, connect, monitoring."""

    groups: dict[str, aws.ec2.SecurityGroup]

    def __init__(
        self,
        dc: DataCentreConfig,
        vpc_id: pulumi.Input[str],
        *,
        cfg: StackConfig,
        peer_cidrs: Sequence[str],
        with_spark: bool,
        with_mirrormaker: bool,
        with_connect: bool,
        with_monitoring: bool,
        tagger: Tagger,
        provider: aws.Provider,
    ) -> None:
        super().__init__(
            "kafkakit:security:ClusterSecurityGroups",
            f"{dc.name}-security-groups",
            None,
            pulumi.ResourceOptions(providers=[provider]),
        )
        self.dc = dc.name
        self.tagger = tagger
        self.opts = pulumi.ResourceOptions(parent=self, provider=provider)
        kraft = dc.metadata_mode == "kraft"
        wanted = ["controller" if kraft else "zookeeper", "kafka"]
        wanted += ["spark"] if with_spark else []
        wanted += ["mirrormaker"] if with_mirrormaker else []
        wanted += ["connect"] if with_connect else []
        wanted += ["monitoring"] if with_monitoring else []
        self.groups = {
            g: aws.ec2.SecurityGroup(
                f"{dc.name}-{g}-sg",
                vpc_id=vpc_id,
                description=f"kafkakit {dc.name} {g}",
                revoke_rules_on_delete=True,
                tags=tagger(f"{dc.name}-{g}-sg", DataCentre=dc.name, Role=g),
                opts=self.opts,
            )
            for g in wanted
        }
        kafka = self.source("kafka")
        # The one admin source: the networks SSH is allowed from.
        admins = [Source(f"admin{i}", cidr=c) for i, c in enumerate(cfg.ssh.cidrs)]

        if kraft:
            # Raft between the controllers; registration, heartbeats and metadata fetches from the
            # brokers. Controllers never connect to brokers, and nothing else reaches them.
            controller = self.source("controller")
            self.allow("controller", ports.KAFKA_CONTROLLER, [controller, kafka], "KRaft controller listener (mTLS)")
        else:
            zk = self.source("zookeeper")
            self.allow("zookeeper", ports.ZOOKEEPER_CLIENT_TLS, [zk, kafka], "ZooKeeper TLS clients")
            self.allow("zookeeper", ports.ZOOKEEPER_PEER, [zk], "ZooKeeper quorum")
            self.allow("zookeeper", ports.ZOOKEEPER_ELECTION, [zk], "ZooKeeper leader election")

        self.allow("kafka", ports.KAFKA_INTER_BROKER, [kafka], "inter-broker replication")
        clients = [kafka]
        clients += [Source(f"client{i}", cidr=c) for i, c in enumerate(cfg.client_cidrs)]
        clients += [Source(f"clientsg{i}", group_id=g) for i, g in enumerate(dc.client_security_group_ids)]
        if with_spark:
            clients.append(self.source("spark"))
        if with_mirrormaker:
            clients.append(self.source("mirrormaker"))
        if with_connect:
            clients.append(self.source("connect"))
        self.allow("kafka", ports.KAFKA_CLIENT, clients, "Kafka SASL_SSL clients")

        if with_spark:
            spark = self.source("spark")
            self.allow("spark", ports.SPARK_INTERNAL, [spark], "Spark master, workers, executors")
            # Workers mount the master's shared folder over SFTP (spark_shared_storage: sshfs).
            self.allow("spark", ports.SSH, [spark], "Spark shared folder over sshfs")
            spark_clients = [Source(f"sparkclient{i}", cidr=c) for i, c in enumerate(cfg.spark.client_cidrs)]
            self.allow("spark", ports.SPARK_MASTER, spark_clients, "Spark clients")
            for port in (ports.SPARK_MASTER_UI, ports.SPARK_WORKER_UI):
                self.allow("spark", port, admins, "Spark UI from declared admin networks")
        if with_mirrormaker:
            self.allow("mirrormaker", ports.MIRRORMAKER_REST, [self.source("mirrormaker")], "MM2 nodes")
        if with_connect:
            # A follower forwards writes to the leader: the cluster's workers talk to each other.
            connect = self.source("connect")
            self.allow("connect", ports.KAFKA_CONNECT_REST, [connect], "Connect workers, to the leader")
            self.allow("connect", ports.KAFKA_CONNECT_REST, admins, "Connect REST from declared admin networks")
        if with_monitoring:
            self.allow_monitoring([self.source("monitoring")])
            self.allow("monitoring", ports.PROMETHEUS, admins, "Prometheus from declared admin networks")

        for g in self.groups:
            self.allow(g, ports.SSH, admins, "SSH from declared admin networks")
            self._egress(g, dc.vpc_cidr, peer_cidrs)
        self.register_outputs({g: sg.id for g, sg in self.groups.items()})

    def source(self, group: str) -> Source:
        return Source(group, group_id=self.groups[group].id)

    def allow(
        self,
        group: str,
        port: int | tuple[int, int],
        sources: Sequence[Source],
        description: str,
    ) -> None:
        """Ingress to `group` on `port` (or a (from, to) range) from each source."""
        low, high = port if isinstance(port, tuple) else (port, port)
        for src in sources:
            name = f"{self.dc}-{group}-in-{low}-from-{src.label}"
            aws.vpc.SecurityGroupIngressRule(
                name,
                security_group_id=self.groups[group].id,
                ip_protocol="tcp",
                from_port=low,
                to_port=high,
                referenced_security_group_id=src.group_id,
                cidr_ipv4=src.cidr,
                description=f"{description} ({src.label})",
                tags=self.tagger(name, DataCentre=self.dc),
                opts=self.opts,
            )

    def allow_monitoring(self, sources: Sequence[Source]) -> None:
        """Let the monitoring hosts at `sources` reach what they read here: the scrape ports, and the
        Connect workers' REST API (connector and task states)."""
        self.allow_scrapes(sources)
        if "connect" in self.groups:
            self.allow("connect", ports.KAFKA_CONNECT_REST, sources, "Connect REST from the monitoring hosts")

    def allow_scrapes(self, sources: Sequence[Source]) -> None:
        """Let Prometheus (and the lag exporter) at `sources` reach every scraped group here."""
        for group, scraped in SCRAPED_PORTS.items():
            if group in self.groups:
                for port in scraped:
                    self.allow(group, port, sources, "metrics scrapes and consumer-lag reads")

    def _egress(self, group: str, vpc_cidr: str, peer_cidrs: Sequence[str]) -> None:
        sg = self.groups[group].id
        for port in (ports.HTTPS, ports.HTTP):
            name = f"{self.dc}-{group}-out-{port}"
            aws.vpc.SecurityGroupEgressRule(
                name,
                security_group_id=sg,
                ip_protocol="tcp",
                from_port=port,
                to_port=port,
                cidr_ipv4="0.0.0.0/0",
                description="packages, archives and AWS APIs",
                tags=self.tagger(name, DataCentre=self.dc),
                opts=self.opts,
            )
        for i, cidr in enumerate([vpc_cidr, *peer_cidrs]):
            name = f"{self.dc}-{group}-out-vpc{i}"
            aws.vpc.SecurityGroupEgressRule(
                name,
                security_group_id=sg,
                ip_protocol="-1",
                cidr_ipv4=cidr,
                description="own and peered data centres",
                tags=self.tagger(name, DataCentre=self.dc),
                opts=self.opts,
            )
