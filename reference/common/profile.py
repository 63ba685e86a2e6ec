"""Profiles: which RocketMQ release the model follows, as data (config values and switches).

A profile is named after the release it follows: ``v5.0`` is the release tag
rocketmq-all-5.0.0 (commit f3e113cb1f) that the seeds quote, defects included; ``v5.5`` is
rocketmq 5.5.0, the newest release complete on Maven Central, read from its ``-sources.jar``
artifacts. The code paths are shared: every difference between releases is a field of
BrokerConfig or ClientConfig (their ``RELEASE_SWITCHES`` tables), documented in
spec/profiles.md together with what one edits to add a later release.

The broker and client configurations of a profile are built by ``reference/profile.py``
(``get_profile``), above both halves of the model; this module is the ground floor's part:
the names, the releases and ``config_for_profile``, the one lookup both
``BrokerConfig.for_profile`` and ``ClientConfig.for_profile`` use.

``develop`` was the name of the 5.5.0 profile before profiles were named after releases; it is
kept only as an alias, resolved here (``canonical_profile``), so that old traces, campaign
folders and command lines keep working. Everything the model records (traces, reports,
campaign manifests) carries the canonical name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, TypeVar

# The profiles, oldest release first (tables and reports keep this order).
PROFILE_NAMES: tuple[str, ...] = ("v5.0", "v5.5")

# The RocketMQ release whose Maven Central jars each profile is confirmed against
# (conformance, lockstep, coverage, live); one table for every technique.
RELEASES: dict[str, str] = {"v5.0": "5.0.0", "v5.5": "5.5.0"}

# The code each profile follows, for reports and traces.
PROFILE_COMMITS: dict[str, str] = {
    "v5.0": "f3e113cb1f98ced8327e7c97bfb5a623950339ef (rocketmq-all-5.0.0)",
    "v5.5": "rocketmq 5.5.0 (Maven Central -sources.jar, April 2026)",
}

# Old profile names -> canonical names. Resolved only by canonical_profile.
PROFILE_ALIASES: dict[str, str] = {"develop": "v5.5"}

# The newest profile: the default of commands that take one profile.
LATEST_PROFILE: str = PROFILE_NAMES[-1]


def canonical_profile(name: str) -> str:
    """The canonical profile name for ``name`` (a profile name or an alias such as
    ``develop``); ValueError naming the known profiles otherwise."""
    if name in PROFILE_NAMES:
        return name
    if isinstance(name, str) and name in PROFILE_ALIASES:
        return PROFILE_ALIASES[name]
    known = ", ".join(PROFILE_NAMES)
    aliases = ", ".join(f"{a} = {c}" for a, c in PROFILE_ALIASES.items())
    raise ValueError(f"unknown profile {name!r}; known profiles: {known} (aliases: {aliases})")


class _ProfileConfig(Protocol):
    """A configuration record built from a profile: BrokerConfig or ClientConfig."""

    profile: str


C = TypeVar("C", bound=_ProfileConfig)


def config_for_profile(cls: type[C], name: str, release_switches: Mapping[str, Mapping[str, object]]) -> C:
    """``cls`` (BrokerConfig or ClientConfig) for profile ``name``: its defaults (the 5.0.0
    values) with ``release_switches[name]`` applied. ``name`` must be a canonical name of
    PROFILE_NAMES (aliases are resolved by get_profile and the CLI, not here); ValueError
    otherwise. A switch table that does not list exactly PROFILE_NAMES is a ValueError too,
    so a profile added to PROFILE_NAMES cannot silently fall back to the 5.0.0 defaults."""
    if set(release_switches) != set(PROFILE_NAMES):
        raise ValueError(f"{cls.__name__} RELEASE_SWITCHES lists {', '.join(release_switches)}; "
                         f"the profiles are {', '.join(PROFILE_NAMES)}")
    if name not in PROFILE_NAMES:
        raise ValueError(f"unknown profile {name!r} for {cls.__name__}; known: {', '.join(PROFILE_NAMES)}")
    return cls(profile=name, **release_switches[name])  # type: ignore[call-arg]
