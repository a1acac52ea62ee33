"""The kit's own tooling: the lab's summary, generated docs, the test tiers, the version table."""
