"""Reading inventory values that a person typed: numbers may arrive as strings, booleans as
"true", and anything may be missing or of the wrong type. Nothing here raises."""

from __future__ import annotations

import re

_INT = re.compile(r"^\s*[+-]?\d+\s*$")


def whole_number(value: object) -> int | None:
    """`value` as an int when it is one (or a string of one); None otherwise. A bool is not a
    number here, though Python counts it as one: `partitions: yes` is a mistake."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and _INT.match(value):
        return int(value)
    return None


def is_true(value: object) -> bool:
    """Whether a config value means true the way Kafka reads it (true/"true"/"TRUE")."""
    return value is True or (isinstance(value, str) and value.strip().lower() == "true")


def is_blank(value: object) -> bool:
    """Missing or empty: None, or a string of nothing but spaces."""
    return value is None or (isinstance(value, str) and not value.strip())
