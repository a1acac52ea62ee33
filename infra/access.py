"""How Ansible reaches the hosts: AWS Systems Manager, not SSH.

Every host gets an instance profile with AmazonSSMManagedInstanceCore. The
`community.aws.aws_ssm` connection moves module files through an S3 bucket, one per data
centre so transfers stay in the region (reached through the VPC's S3 gateway endpoint).
"""

from __future__ import annotations

import json

import pulumi
import pulumi_aws as aws

from infra.tagging import Tagger

SSM_CORE_POLICY = "policy/AmazonSSMManagedInstanceCore"


class InstanceAccess(pulumi.ComponentResource):
    """The IAM role and instance profile every host runs with (IAM is global: made once)."""

    profile: aws.iam.InstanceProfile

    def __init__(self, *, partition: str, tagger: Tagger, provider: aws.Provider) -> None:
        super().__init__(
            "kafkakit:access:InstanceAccess",
            "instance-access",
            None,
            pulumi.ResourceOptions(providers=[provider]),
        )
        opts = pulumi.ResourceOptions(parent=self, provider=provider)
        role = aws.iam.Role(
            "host-role",
            description=f"kafkakit {tagger.stack}: hosts, reachable through Systems Manager",
            assume_role_policy=json.dumps(
                {
                    "Version": "2012-10-17",
                    "Statement": [
                        {
                            "Effect": "Allow",
                            "Principal": {"Service": "ec2.amazonaws.com"},
                            "Action": "sts:AssumeRole",
                        }
                    ],
                }
            ),
            tags=tagger("host-role"),
            opts=opts,
        )
        aws.iam.RolePolicyAttachment(
            "host-role-ssm",
            role=role.name,
            policy_arn=f"arn:{partition}:iam::aws:{SSM_CORE_POLICY}",
            opts=opts,
        )
        self.profile = aws.iam.InstanceProfile("host-profile", role=role.name, tags=tagger("host-profile"), opts=opts)
        self.register_outputs({"profile": self.profile.name})


class SsmTransferBucket(pulumi.ComponentResource):
    """The aws_ssm connection's file-transfer bucket for one data centre."""

    bucket: aws.s3.Bucket

    def __init__(self, dc_name: str, *, tagger: Tagger, provider: aws.Provider) -> None:
        super().__init__(
            "kafkakit:access:SsmTransferBucket",
            f"{dc_name}-ssm-transfer",
            None,
            pulumi.ResourceOptions(providers=[provider]),
        )
        opts = pulumi.ResourceOptions(parent=self, provider=provider)
        n = f"{dc_name}-ssm-transfer"
        # Unversioned on purpose: transferred module files may hold secrets and must not linger.
        self.bucket = aws.s3.Bucket(
            n,
            bucket_prefix=f"kafkakit-ssm-{dc_name}-",
            force_destroy=True,
            tags=tagger(n, DataCentre=dc_name),
            opts=opts,
        )
        aws.s3.BucketPublicAccessBlock(
            f"{n}-no-public",
            bucket=self.bucket.id,
            block_public_acls=True,
            block_public_policy=True,
            ignore_public_acls=True,
            restrict_public_buckets=True,
            opts=opts,
        )
        aws.s3.BucketServerSideEncryptionConfiguration(
            f"{n}-sse",
            bucket=self.bucket.id,
            rules=[{"apply_server_side_encryption_by_default": {"sse_algorithm": "AES256"}}],
            opts=opts,
        )
        aws.s3.BucketLifecycleConfiguration(
            f"{n}-expiry",
            bucket=self.bucket.id,
            rules=[
                {
                    "id": "expire-leftovers",
                    "status": "Enabled",
                    "filter": {},
                    "expiration": {"days": 1},
                }
            ],
            opts=opts,
        )
        aws.s3.BucketPolicy(
            f"{n}-tls-only",
            bucket=self.bucket.id,
            policy=self.bucket.arn.apply(_tls_only_policy),
            opts=opts,
        )
        self.register_outputs({"bucket": self.bucket.bucket})


def _tls_only_policy(arn: str) -> str:
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Sid": "DenyPlainHttp",
                    "Effect": "Deny",
                    "Principal": "*",
                    "Action": "s3:*",
                    "Resource": [arn, f"{arn}/*"],
                    "Condition": {"Bool": {"aws:SecureTransport": "false"}},
                }
            ],
        }
    )
