"""config_for_profile: the one lookup behind BrokerConfig.for_profile and ClientConfig.for_profile."""

from __future__ import annotations

import attrs
import pytest

from reference.broker.config import RELEASE_SWITCHES as BROKER_SWITCHES
from reference.broker.config import BrokerConfig
from reference.client.config import RELEASE_SWITCHES as CLIENT_SWITCHES
from reference.client.config import ClientConfig
from reference.common.profile import PROFILE_NAMES, config_for_profile


@attrs.frozen
class _Config:
    profile: str
    flag: bool = False


def test_both_configs_list_exactly_the_profile_names() -> None:
    assert list(BROKER_SWITCHES) == list(PROFILE_NAMES) == list(CLIENT_SWITCHES)
    for cls in (BrokerConfig, ClientConfig):
        for name in PROFILE_NAMES:
            assert cls.for_profile(name) == config_for_profile(cls, name, BROKER_SWITCHES if cls is BrokerConfig
                                                               else CLIENT_SWITCHES)


def test_the_switches_of_the_profile_are_applied() -> None:
    table = {name: {} for name in PROFILE_NAMES} | {PROFILE_NAMES[-1]: {"flag": True}}
    assert config_for_profile(_Config, PROFILE_NAMES[0], table) == _Config(PROFILE_NAMES[0], False)
    assert config_for_profile(_Config, PROFILE_NAMES[-1], table) == _Config(PROFILE_NAMES[-1], True)


def test_a_table_missing_a_profile_is_refused() -> None:
    """A profile added to PROFILE_NAMES but not to a RELEASE_SWITCHES table must not fall back
    to the 5.0.0 defaults silently."""
    table = {name: {} for name in PROFILE_NAMES[:-1]}
    with pytest.raises(ValueError, match="RELEASE_SWITCHES lists"):
        config_for_profile(_Config, PROFILE_NAMES[0], table)
    with pytest.raises(ValueError, match="RELEASE_SWITCHES lists"):
        config_for_profile(_Config, PROFILE_NAMES[0], table | {"v9.9": {}, PROFILE_NAMES[-1]: {}})


def test_an_unknown_or_alias_name_is_refused() -> None:
    table = {name: {} for name in PROFILE_NAMES}
    for bad in ("develop", "v4.9", ""):
        with pytest.raises(ValueError, match="unknown profile"):
            config_for_profile(_Config, bad, table)
