"""The Spark web UIs' login: Spark's own JWSFilter (spark.ui.filters) checks a bearer token, a JWS
signed with HS256 under a key the kit derives from the cluster's RPC secret. The kit's checks and
an operator's browser plugin present the same token."""

from __future__ import annotations

import base64
import hashlib
import hmac

# base64url of {"alg":"HS256","typ":"JWT"} and of {}: JWSFilter checks the signature, not the claims.
JWS_HEADER = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
JWS_PAYLOAD = "e30"


def ui_key(auth_secret: str) -> str:
    """The filter's secretKey (base64url text) for a cluster's RPC secret: 64 hex digits, which
    base64url-decode to 48 key bytes (HS256 wants at least 32)."""
    return hashlib.sha256(f"{auth_secret}:spark-ui".encode()).hexdigest()


def _b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def bearer_token(key: str) -> str:
    """A JWS JWSFilter accepts for this secretKey."""
    signing_input = f"{JWS_HEADER}.{JWS_PAYLOAD}".encode()
    signature = hmac.new(_b64url_decode(key), signing_input, hashlib.sha256).digest()
    return f"{JWS_HEADER}.{JWS_PAYLOAD}." + base64.urlsafe_b64encode(signature).decode().rstrip("=")
