"""A profile's broker and client configuration together: the model as a whole, above both halves.

The names, releases and the per-config lookup are the ground floor's
(reference/common/profile.py); this bundle needs BrokerConfig and ClientConfig, so it sits
above reference/broker and reference/client, where Common may not reach.
"""

from __future__ import annotations

import attrs

from reference.broker.config import BrokerConfig
from reference.client.config import ClientConfig
from reference.common.profile import canonical_profile


@attrs.frozen
class Profile:
    """A named, immutable bundle of broker and client configuration."""

    name: str
    broker: BrokerConfig
    client: ClientConfig


def get_profile(name: str) -> Profile:
    """The profile called ``name`` (or an alias of it), under its canonical name; ValueError
    naming the known ones otherwise."""
    canonical = canonical_profile(name)
    return Profile(name=canonical, broker=BrokerConfig.for_profile(canonical),
                   client=ClientConfig.for_profile(canonical))
