"""Tags on everything: the same base set on every taggable resource, plus its own labels."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from infra.model import PROJECT

# The keys every taggable resource carries; the tests check them on each one.
BASE_TAG_KEYS = ("Name", "Project", "Stack", "ManagedBy")


@dataclass(frozen=True)
class Tagger:
    stack: str
    extra: Mapping[str, str] = field(default_factory=dict)

    def base(self) -> dict[str, str]:
        """Tags for the providers' default_tags (no Name: that is per resource)."""
        return {**self.extra, "Project": PROJECT, "Stack": self.stack, "ManagedBy": "pulumi"}

    def __call__(self, name: str, **labels: str) -> dict[str, str]:
        return {**self.base(), "Name": f"{PROJECT}-{self.stack}-{name}", **labels}
