"""BrokerConfig / MessageStoreConfig values the model reads, per profile."""

from __future__ import annotations

import attrs


@attrs.frozen
class BrokerConfig:
    """Broker-side configuration and profile switches (see spec/profiles.md)."""

    profile: str

    @classmethod
    def for_profile(cls, name: str) -> "BrokerConfig":
        """The configuration of profile ``name`` ("v5.0" or "develop")."""
        return cls(profile=name)
