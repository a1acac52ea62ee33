"""The Spark UIs' bearer token: an HS256 JWS as Spark's JWSFilter checks it (three base64url fields,
the signature an HMAC-SHA256 of the first two under the base64url-decoded key)."""

from __future__ import annotations

import base64
import hashlib
import hmac

from kafkakit.cluster.spark_ui import JWS_HEADER, JWS_PAYLOAD, bearer_token, ui_key


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def test_the_header_and_payload_are_hs256_and_empty_claims() -> None:
    assert JWS_HEADER == b64url(b'{"alg":"HS256","typ":"JWT"}')
    assert JWS_PAYLOAD == b64url(b"{}")


def test_the_key_is_long_enough_for_hs256_and_depends_on_the_secret() -> None:
    key = ui_key("rpc-secret")
    assert len(base64.urlsafe_b64decode(key)) >= 32
    assert ui_key("rpc-secret") == key != ui_key("other-secret")


def test_the_token_is_signed_with_the_decoded_key() -> None:
    key = ui_key("rpc-secret")
    header, payload, signature = bearer_token(key).split(".")
    expected = hmac.new(base64.urlsafe_b64decode(key), f"{header}.{payload}".encode(), hashlib.sha256).digest()
    assert signature == b64url(expected)
    assert bearer_token(ui_key("other")) != bearer_token(key)
