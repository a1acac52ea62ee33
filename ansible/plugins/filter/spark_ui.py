"""Filters for the Spark role's web UI login (kafkakit.cluster.spark_ui)."""

from __future__ import annotations

from typing import Any


def kafkakit_spark_ui_key(auth_secret: str) -> str:
    """JWSFilter's secretKey for the cluster's RPC secret."""
    from kafkakit.cluster.spark_ui import ui_key

    return ui_key(str(auth_secret))


def kafkakit_spark_ui_token(key: str) -> str:
    """A bearer token (JWS) the UIs accept under this secretKey."""
    from kafkakit.cluster.spark_ui import bearer_token

    return bearer_token(str(key))


class FilterModule:
    def filters(self) -> dict[str, Any]:
        return {"kafkakit_spark_ui_key": kafkakit_spark_ui_key, "kafkakit_spark_ui_token": kafkakit_spark_ui_token}
