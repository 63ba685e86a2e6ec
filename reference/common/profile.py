"""Profiles: which RocketMQ code the model follows, as data (config values and switches).

``v5.0`` is the release tag rocketmq-all-5.0.0 (commit f3e113cb1f) that the seeds quote,
defects included; ``develop`` follows rocketmq-broker 5.5.0 (the newest release complete on
Maven Central; the name is kept until the profiles are renamed after releases). The code
paths are shared: every difference between the two is a field of BrokerConfig or
ClientConfig, documented in spec/profiles.md.
"""

from __future__ import annotations

import attrs

from reference.broker.config import BrokerConfig
from reference.client.config import ClientConfig

PROFILE_NAMES: tuple[str, ...] = ("v5.0", "develop")

# The RocketMQ release whose Maven Central jars each profile is confirmed against
# (conformance, lockstep, coverage, live); one table for every technique.
RELEASES: dict[str, str] = {"v5.0": "5.0.0", "develop": "5.5.0"}

# The commits each profile follows, for reports and traces.
PROFILE_COMMITS: dict[str, str] = {
    "v5.0": "f3e113cb1f98ced8327e7c97bfb5a623950339ef (rocketmq-all-5.0.0)",
    "develop": "rocketmq-broker 5.5.0 (Maven Central; profile name kept as develop)",
}


@attrs.frozen
class Profile:
    """A named, immutable bundle of broker and client configuration."""

    name: str
    broker: BrokerConfig
    client: ClientConfig


def get_profile(name: str) -> Profile:
    """The profile called ``name``; ValueError naming the known ones otherwise."""
    if name not in PROFILE_NAMES:
        raise ValueError(f"unknown profile {name!r}; known profiles: {', '.join(PROFILE_NAMES)}")
    return Profile(name=name, broker=BrokerConfig.for_profile(name), client=ClientConfig.for_profile(name))
