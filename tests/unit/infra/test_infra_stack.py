"""The rules of issue 5, asserted on the resources the program registers under mocks."""

from __future__ import annotations

import ipaddress
from collections import Counter

import pytest
from stack_harness import AwsMocks, Res, StackRun, example_config, run_stack

from infra.model import ConfigError, DataCentreConfig, SparkConfig, SshConfig, StackConfig
from infra.tagging import BASE_TAG_KEYS

INSTANCE = "aws:ec2/instance:Instance"
VOLUME = "aws:ebs/volume:Volume"
ATTACHMENT = "aws:ec2/volumeAttachment:VolumeAttachment"
SUBNET = "aws:ec2/subnet:Subnet"
KEY = "aws:kms/key:Key"
SG = "aws:ec2/securityGroup:SecurityGroup"
INGRESS = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
EGRESS = "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule"
ROUTE = "aws:ec2/route:Route"
RTA = "aws:ec2/routeTableAssociation:RouteTableAssociation"
VPC = "aws:ec2/vpc:Vpc"
PEERING = "aws:ec2/vpcPeeringConnection:VpcPeeringConnection"
ACCEPTER = "aws:ec2/vpcPeeringConnectionAccepter:VpcPeeringConnectionAccepter"
ENDPOINT = "aws:ec2/vpcEndpoint:VpcEndpoint"
UNTAGGABLE = {
    RTA,
    ROUTE,
    ATTACHMENT,
    "aws:iam/rolePolicyAttachment:RolePolicyAttachment",
    "aws:kms/alias:Alias",
    "aws:ec2/peeringConnectionOptions:PeeringConnectionOptions",
    "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock",
    "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
    "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration",
    "aws:s3/bucketPolicy:BucketPolicy",
}


def hosts(run: StackRun, role: str | None = None, dc: str | None = None) -> list[Res]:
    return [
        i
        for i in run.of(INSTANCE)
        if (role is None or i.inputs["tags"]["Role"] == role) and (dc is None or i.inputs["tags"]["DataCentre"] == dc)
    ]


def subnet_zone(run: StackRun, instance: Res) -> str:
    return run.by_id(instance.inputs["subnetId"]).inputs["availabilityZone"]


def region_of(run: StackRun, dc: str) -> str:
    return run.outputs["dataCentres"][dc]["region"]


# ------------------------------------------------------------------------ placement


def test_brokers_are_spread_evenly_over_every_az(example: StackRun) -> None:
    for dc, info in example.outputs["dataCentres"].items():
        per_zone = Counter(subnet_zone(example, b) for b in hosts(example, "kafka_broker", dc))
        assert set(per_zone) == set(info["availabilityZones"])
        assert len(set(per_zone.values())) == 1, per_zone


def metadata_mode(run: StackRun, dc: str) -> str:
    return run.outputs["inventory"]["all"]["children"][dc]["vars"]["kafka_metadata_mode"]


def test_zookeeper_is_an_odd_ensemble_of_three_or_more_over_distinct_azs(example: StackRun) -> None:
    for dc in example.outputs["dataCentres"]:
        zones = [subnet_zone(example, z) for z in hosts(example, "zookeeper", dc)]
        if metadata_mode(example, dc) == "kraft":
            assert zones == []
            continue
        assert len(zones) >= 3 and len(zones) % 2 == 1
        assert len(set(zones)) == len(zones)


def test_instance_subnet_matches_its_planned_rack(example: StackRun) -> None:
    for i in example.of(INSTANCE):
        assert i.inputs["availabilityZone"] == subnet_zone(example, i) == i.inputs["tags"]["Rack"]


def test_small_stack_zones_come_from_the_region_and_production_pins_them(small: StackRun, production: StackRun) -> None:
    asked = {c.token for c in small.calls}
    assert "aws:index/getAvailabilityZones:getAvailabilityZones" in asked
    assert small.outputs["dataCentres"]["dc2"]["availabilityZones"] == [
        "eu-central-1a",
        "eu-central-1b",
        "eu-central-1c",
    ]
    assert "aws:index/getAvailabilityZones:getAvailabilityZones" not in {c.token for c in production.calls}


def test_mirrormaker_runs_in_the_target_dc_and_spark_beside_dc1(example: StackRun) -> None:
    assert hosts(example, "mirrormaker") == hosts(example, "mirrormaker", "dc2") != []
    assert len(hosts(example, "spark_master", "dc1")) == 1
    assert hosts(example, "spark_worker") == hosts(example, "spark_worker", "dc1") != []


# ------------------------------------------------------------------------ encryption


def test_every_data_volume_is_gp3_encrypted_with_its_dcs_rotating_cmk(example: StackRun) -> None:
    keys = {k.region: k for k in example.of(KEY)}
    assert len(keys) == 2 and all(k.inputs["enableKeyRotation"] is True for k in keys.values())
    volumes = example.of(VOLUME)
    data_nodes = hosts(example, "zookeeper") + hosts(example, "kafka_controller") + hosts(example, "kafka_broker")
    assert len(volumes) == len(data_nodes)
    for v in volumes:
        assert v.inputs["type"] == "gp3"
        assert v.inputs["encrypted"] is True
        assert v.inputs["kmsKeyId"] == keys[v.region].state["arn"]


def test_root_volumes_are_encrypted_with_the_same_key(example: StackRun) -> None:
    keys = {k.region: k.state["arn"] for k in example.of(KEY)}
    for i in example.of(INSTANCE):
        root = i.inputs["rootBlockDevice"]
        assert root["encrypted"] is True and root["kmsKeyId"] == keys[i.region]


def test_data_volumes_are_separate_attached_in_the_instance_az(example: StackRun) -> None:
    attachments = example.of(ATTACHMENT)
    attached = Counter(a.inputs["instanceId"] for a in attachments)
    for i in hosts(example, "zookeeper") + hosts(example, "kafka_controller") + hosts(example, "kafka_broker"):
        assert attached[i.id] == 1, i.name
    for i in hosts(example, "mirrormaker") + hosts(example, "kafka_connect") + hosts(example, "spark_worker"):
        assert attached[i.id] == 0, i.name
    for a in attachments:
        volume, instance = (
            example.by_id(a.inputs["volumeId"]),
            example.by_id(a.inputs["instanceId"]),
        )
        assert volume.inputs["availabilityZone"] == subnet_zone(example, instance)
        assert volume.region == instance.region
    # A block device of the instance would die with it; data volumes must not.
    assert all(not i.inputs.get("ebsBlockDevices") for i in example.of(INSTANCE))


def test_production_keeps_data_volumes_with_a_final_snapshot(small: StackRun, production: StackRun) -> None:
    assert all(v.inputs["finalSnapshot"] is True for v in production.of(VOLUME))
    assert all(v.inputs["finalSnapshot"] is False for v in small.of(VOLUME))
    assert {v.inputs["iops"] for v in production.of(VOLUME) if "kafka" in v.name} == {6000}


# ------------------------------------------------------------------------ hosts


def test_every_instance_requires_imdsv2(example: StackRun) -> None:
    for i in example.of(INSTANCE):
        assert i.inputs["metadataOptions"]["httpTokens"] == "required", i.name
        assert i.inputs["metadataOptions"]["httpPutResponseHopLimit"] == 1


def test_no_instance_has_a_public_ip_or_a_route_from_the_internet(example: StackRun) -> None:
    igw_tables = {r.inputs["routeTableId"] for r in example.of(ROUTE) if r.inputs.get("gatewayId")}
    table_of = {a.inputs["subnetId"]: a.inputs["routeTableId"] for a in example.of(RTA)}
    for i in example.of(INSTANCE):
        assert i.inputs["associatePublicIpAddress"] is False
        subnet = example.by_id(i.inputs["subnetId"])
        assert subnet.inputs["mapPublicIpOnLaunch"] is False
        assert table_of[subnet.id] not in igw_tables, f"{i.name} is in a public subnet"


def test_hosts_use_the_ssm_profile_and_no_ssh_key_by_default(example: StackRun) -> None:
    profile = example.of("aws:iam/instanceProfile:InstanceProfile")[0]
    policy = example.of("aws:iam/rolePolicyAttachment:RolePolicyAttachment")[0]
    assert policy.inputs["policyArn"].endswith(":iam::aws:policy/AmazonSSMManagedInstanceCore")
    for i in example.of(INSTANCE):
        assert i.inputs["iamInstanceProfile"] == profile.state["name"]
        assert "keyName" not in i.inputs
        assert "amazon-ssm-agent" in i.inputs["userData"]


# ------------------------------------------------------------------------ security groups


def ingress_table(run: StackRun, dc: str) -> set[tuple[str, int, int, str]]:
    """(target group, from port, to port, source group or CIDR) for each ingress rule of `dc`."""
    roles = {
        g.id: g.inputs["tags"]["Role"]
        for g in run.of(SG)
        if g.inputs["tags"].get("DataCentre") == dc and "Role" in g.inputs["tags"]
    }
    rows = set()
    for r in run.of(INGRESS):
        if r.inputs["securityGroupId"] in roles:
            ref = r.inputs.get("referencedSecurityGroupId")
            source = roles.get(ref, ref) if ref else r.inputs["cidrIpv4"]
            rows.add(
                (
                    roles[r.inputs["securityGroupId"]],
                    int(r.inputs["fromPort"]),
                    int(r.inputs["toPort"]),
                    source,
                )
            )
    return rows


def test_security_groups_allow_exactly_the_declared_paths(small: StackRun) -> None:
    vpn = "192.168.100.0/24"
    zookeeper = {
        ("zookeeper", 2182, 2182, "zookeeper"),
        ("zookeeper", 2182, 2182, "kafka"),
        ("zookeeper", 2888, 2888, "zookeeper"),
        ("zookeeper", 3888, 3888, "zookeeper"),
    }
    # dc2 is a KRaft DC: its controllers take 9094 from each other and from the brokers, nothing else.
    controller = {
        ("controller", 9094, 9094, "controller"),
        ("controller", 9094, 9094, "kafka"),
    }
    kafka = {
        ("kafka", 9091, 9091, "kafka"),
        ("kafka", 9093, 9093, "kafka"),
        ("kafka", 9093, 9093, vpn),
    }
    mm2_ip = small.named("dc2-mm2-1", INSTANCE).state["privateIp"]
    mon1 = small.named("dc1-monitor-1", INSTANCE).state["privateIp"] + "/32"
    mon2 = small.named("dc2-monitor-1", INSTANCE).state["privateIp"] + "/32"

    def scrapes(
        source: str, with_mm2: bool, kraft: bool = False, with_connect: bool = False, with_spark: bool = False
    ) -> set[tuple[str, int, int, str]]:
        rows = (
            {
                ("controller", 7074, 7074, source),
                ("controller", 9100, 9100, source),
            }
            if kraft
            else {
                ("zookeeper", 7072, 7072, source),
                ("zookeeper", 9100, 9100, source),
            }
        )
        rows |= {
            ("kafka", 7071, 7071, source),
            ("kafka", 9100, 9100, source),
            ("kafka", 9093, 9093, source),
        }
        if with_mm2:
            rows |= {("mirrormaker", 7073, 7073, source), ("mirrormaker", 9100, 9100, source)}
        if with_connect:
            rows |= {("connect", 7075, 7075, source), ("connect", 9100, 9100, source)}
        if with_spark:
            rows |= {("spark", 9100, 9100, source)}  # the master's node exporter (the CDC jobs' lag)
        return rows

    # The small stack declares no admin networks: the UIs (9090, 8080, 8081) and Connect's REST
    # API open to no one but the hosts that need them.
    assert ingress_table(small, "dc1") == zookeeper | kafka | {
        ("kafka", 9093, 9093, "spark"),
        ("kafka", 9093, 9093, "connect"),
        ("connect", 8083, 8083, "connect"),  # followers forward writes to the leader
        ("connect", 8083, 8083, "monitoring"),
        ("connect", 8083, 8083, mon2),
        ("kafka", 9093, 9093, f"{mm2_ip}/32"),  # MM2 from the other region, by address
        ("spark", 1024, 65535, "spark"),
        ("spark", 22, 22, "spark"),
        ("spark", 7077, 7077, vpn),
    } | scrapes("monitoring", with_mm2=False, with_connect=True, with_spark=True) | scrapes(
        mon2, with_mm2=False, with_connect=True, with_spark=True
    )
    assert ingress_table(small, "dc2") == controller | kafka | {
        ("kafka", 9093, 9093, "mirrormaker"),
        ("mirrormaker", 8083, 8083, "mirrormaker"),
    } | scrapes("monitoring", with_mm2=True, kraft=True) | scrapes(mon1, with_mm2=True, kraft=True)


def test_nothing_is_open_to_the_world_on_the_way_in(example: StackRun) -> None:
    for r in example.of(INGRESS):
        assert r.inputs.get("cidrIpv4") not in (None, "0.0.0.0/0") or r.inputs.get("referencedSecurityGroupId"), r.name
        assert "cidrIpv6" not in r.inputs
    for g in example.of(SG):
        assert not g.inputs.get("ingress"), "rules are separate resources, never inline"


def test_hosts_sit_only_in_their_components_group(example: StackRun) -> None:
    roles = {g.id: g.inputs["tags"].get("Role") for g in example.of(SG)}
    expected = {
        "zookeeper": "zookeeper",
        "kafka_controller": "controller",
        "kafka_broker": "kafka",
        "mirrormaker": "mirrormaker",
        "kafka_connect": "connect",
        "spark_master": "spark",
        "spark_worker": "spark",
        "monitoring": "monitoring",
    }
    for i in example.of(INSTANCE):
        groups = [roles[g] for g in i.inputs["vpcSecurityGroupIds"]]
        assert groups == [expected[i.inputs["tags"]["Role"]]]


def test_egress_is_web_out_plus_own_and_peered_vpcs(small: StackRun) -> None:
    dc1_kafka = next(g.id for g in small.of(SG) if g.inputs["tags"].get("Role") == "kafka" and g.region == "eu-west-1")
    rules = {
        (r.inputs["ipProtocol"], r.inputs.get("fromPort"), r.inputs["cidrIpv4"])
        for r in small.of(EGRESS)
        if r.inputs["securityGroupId"] == dc1_kafka
    }
    assert rules == {
        ("tcp", 443.0, "0.0.0.0/0"),
        ("tcp", 80.0, "0.0.0.0/0"),
        ("-1", None, "10.10.0.0/16"),
        ("-1", None, "10.20.0.0/16"),
    }


def test_ssh_opens_only_when_declared_and_only_from_admin_networks() -> None:
    cfg = _one_dc(ssh=SshConfig(key_name="ops", cidrs=("172.16.5.0/24",)))
    run = run_stack(cfg)
    ssh = [r for r in run.of(INGRESS) if r.inputs["fromPort"] == 22 and "cidrIpv4" in r.inputs]
    assert {r.inputs["cidrIpv4"] for r in ssh} == {"172.16.5.0/24"}
    assert len(ssh) == len(run.of(SG))  # every component group, nothing else
    # Besides the admins, only the Spark workers' sshfs mount of the master, within the group.
    (sshfs,) = [r for r in run.of(INGRESS) if r.inputs["fromPort"] == 22 and "cidrIpv4" not in r.inputs]
    assert sshfs.inputs["referencedSecurityGroupId"] == sshfs.inputs["securityGroupId"]
    assert run.by_id(sshfs.inputs["securityGroupId"]).inputs["tags"]["Role"] == "spark"
    assert {i.inputs["keyName"] for i in run.of(INSTANCE)} == {"ops"}


# ------------------------------------------------------------------------ regions and peering


def test_each_dc_lives_in_its_own_region_through_its_own_provider(example: StackRun) -> None:
    providers = example.of("pulumi:providers:aws")
    assert sorted(p.inputs["region"] for p in providers) == ["eu-central-1", "eu-west-1"]
    for r in example.resources:
        if r.typ.startswith("aws:"):
            assert r.region is not None, f"{r.name} uses the default provider"
            dc = (r.inputs.get("tags") or {}).get("DataCentre")
            if dc and r.typ != ACCEPTER:
                assert r.region == region_of(example, dc), r.name
    assert all(c.provider for c in example.calls), "a lookup went to the default provider"


def test_the_two_vpcs_are_peered_with_routes_both_ways(example: StackRun) -> None:
    vpcs = {v.region: v for v in example.of(VPC)}
    (peering,) = example.of(PEERING)
    (accepter,) = example.of(ACCEPTER)
    assert peering.region == "eu-west-1"
    assert peering.inputs["vpcId"] == vpcs["eu-west-1"].id
    assert peering.inputs["peerVpcId"] == vpcs["eu-central-1"].id
    assert peering.inputs["peerRegion"] == "eu-central-1"
    assert accepter.region == "eu-central-1" and accepter.inputs["autoAccept"] is True
    assert accepter.inputs["vpcPeeringConnectionId"] == peering.id
    routes = {
        (r.region, r.inputs["destinationCidrBlock"])
        for r in example.of(ROUTE)
        if r.inputs.get("vpcPeeringConnectionId") == accepter.id
    }
    assert routes == {("eu-west-1", "10.20.0.0/16"), ("eu-central-1", "10.10.0.0/16")}
    assert example.outputs["peeringConnectionIds"] == [peering.id]


def test_vpcs_have_one_private_subnet_per_az_inside_their_cidr(example: StackRun) -> None:
    for info in example.outputs["dataCentres"].values():
        private = [s for s in example.of(SUBNET) if s.region == info["region"] and "Rack" in s.inputs["tags"]]
        assert sorted(s.inputs["availabilityZone"] for s in private) == info["availabilityZones"]
        vpc = ipaddress.IPv4Network(info["vpcCidr"])
        assert all(ipaddress.IPv4Network(s.inputs["cidrBlock"]).subnet_of(vpc) for s in private)


def test_ssm_endpoints_and_s3_gateway(small: StackRun, production: StackRun) -> None:
    def services(run: StackRun) -> Counter:
        return Counter(e.inputs["serviceName"].rsplit(".", 1)[-1] for e in run.of(ENDPOINT))

    assert services(small) == {"s3": 2}
    assert services(production) == {"s3": 2, "ssm": 2, "ssmmessages": 2, "ec2messages": 2}
    for e in production.of(ENDPOINT):
        if e.inputs["vpcEndpointType"] == "Interface":
            assert e.inputs["privateDnsEnabled"] is True and len(e.inputs["subnetIds"]) == 3


def test_endpoint_only_dc_has_no_route_to_the_internet() -> None:
    run = run_stack(_one_dc(nat_gateway=False, ssm_endpoints=True))
    assert not run.of("aws:ec2/natGateway:NatGateway")
    assert not run.of("aws:ec2/internetGateway:InternetGateway")
    assert not [r for r in run.of(ROUTE) if r.inputs["destinationCidrBlock"] == "0.0.0.0/0"]


# ------------------------------------------------------------------------ tags


def test_every_taggable_resource_carries_the_stack_tags(example: StackRun) -> None:
    stack = example.outputs["inventory"]["all"]["vars"]["kafkakit_stack"]
    for r in example.resources:
        if r.typ.startswith("aws:") and r.typ not in UNTAGGABLE:
            tags = r.inputs.get("tags") or {}
            assert set(BASE_TAG_KEYS) <= set(tags), f"{r.typ} {r.name}: {tags}"
            assert tags["Stack"] == stack and tags["Owner"] == "platform-team"
    for p in example.of("pulumi:providers:aws"):
        assert '"Stack": "' + stack in p.inputs["defaultTags"]


# ------------------------------------------------------------------------ smaller shapes and errors


def _one_dc(**overrides: object) -> StackConfig:
    base = dict(
        stack="unit",
        data_centres=(DataCentreConfig(name="dc1", region="eu-west-1", vpc_cidr="10.30.0.0/16"),),
        spark=SparkConfig(data_centre="dc1", workers=2),
        tags={"Owner": "platform-team"},
    )
    base.update(overrides)
    return StackConfig(**base)  # type: ignore[arg-type]


def test_a_single_dc_stack_has_no_peering_and_no_mirrormaker() -> None:
    run = run_stack(_one_dc())
    assert not run.of(PEERING) and not hosts(run, "mirrormaker")
    assert len(hosts(run, "spark_worker")) == 2
    assert run.outputs["inventory"]["all"]["children"]["mirrormaker"] == {"hosts": {}}


def test_a_region_with_too_few_azs_fails_before_any_cloud_resource() -> None:
    cfg = example_config("small")
    mocks = AwsMocks({"eu-west-1": ["eu-west-1a", "eu-west-1b"], "eu-central-1": ["x"] * 3})
    with pytest.raises(ConfigError) as e:
        run_stack(cfg, mocks=mocks)
    assert e.value.messages == [
        "dc1: zoneCount is 3 but eu-west-1 offers only 2 availability zone(s): ['eu-west-1a', 'eu-west-1b']"
    ]
    assert {r.typ for r in mocks.resources} == {"pulumi:providers:aws"}
