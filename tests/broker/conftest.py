"""Shared helpers for the broker model tests."""

from __future__ import annotations

import pytest

from reference.broker.broker import Broker
from reference.broker.config import BrokerConfig
from reference.common.clock import VirtualClock
from reference.common.javalang import JavaRandom


def make_broker(profile: str = "v5.0", seed: int = 7, queues: int = 2, **overrides: object) -> Broker:
    """A broker with topic T (``queues`` queues) and group G."""
    import attrs

    cfg = attrs.evolve(BrokerConfig.for_profile(profile), **overrides)
    b = Broker(cfg, VirtualClock(), JavaRandom(seed))
    b.create_topic("T", queues)
    b.create_group("G")
    return b


@pytest.fixture
def broker() -> Broker:
    return make_broker()
