"""Profiles are named after releases; ``develop`` survives only as an alias resolved in one place."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

import attrs
import pytest

from popverify.args import profile_name
from popverify.conformance.lockstep_build import POP_TIME_METHOD
from popverify.sim.scenario import run_scenario
from reference.broker import config as broker_config
from reference.client import config as client_config
from reference.common.profile import (LATEST_PROFILE, PROFILE_ALIASES, PROFILE_COMMITS, PROFILE_NAMES, RELEASES,
                                      canonical_profile)
from reference.profile import get_profile


def test_profiles_are_the_releases_in_order() -> None:
    assert PROFILE_NAMES == ("v5.0", "v5.5")
    assert RELEASES == {"v5.0": "5.0.0", "v5.5": "5.5.0"}
    assert LATEST_PROFILE == "v5.5"


def test_every_table_keyed_by_profile_has_exactly_the_profiles() -> None:
    # adding a release = one entry in each of these (spec/profiles.md "Adding a release")
    for table in (RELEASES, PROFILE_COMMITS, broker_config.RELEASE_SWITCHES, client_config.RELEASE_SWITCHES):
        assert tuple(table) == PROFILE_NAMES
    assert set(RELEASES.values()) == set(POP_TIME_METHOD)


def test_switch_tables_name_real_fields_that_differ_from_the_defaults() -> None:
    for cls, table in ((broker_config.BrokerConfig, broker_config.RELEASE_SWITCHES),
                       (client_config.ClientConfig, client_config.RELEASE_SWITCHES)):
        fields = {f.name: f for f in attrs.fields(cls)}
        for profile, switches in table.items():
            for name, value in switches.items():
                assert name in fields, f"{profile}: {cls.__name__} has no field {name}"
                assert fields[name].default != value, f"{profile}: {name} repeats the default"


def test_develop_is_an_alias_of_v55() -> None:
    assert PROFILE_ALIASES == {"develop": "v5.5"}
    assert canonical_profile("develop") == "v5.5"
    prof = get_profile("develop")
    assert prof.name == "v5.5" and prof.broker.profile == "v5.5"
    assert prof == get_profile("v5.5")
    assert get_profile("v5.0").broker != prof.broker


@pytest.mark.parametrize("bad", ["v5.1", "5.5.0", "Develop", "", "v5.5 "])
def test_unknown_profiles_are_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="unknown profile"):
        get_profile(bad)
    with pytest.raises(argparse.ArgumentTypeError, match="known profiles: v5.0, v5.5"):
        profile_name(bad)


def test_config_constructors_take_only_canonical_names() -> None:
    # the alias is resolved by get_profile / the CLI, not by every constructor; a silent
    # fallback to the 5.0.0 defaults (the old behaviour for any other name) is an error now
    for cls in (broker_config.BrokerConfig, client_config.ClientConfig):
        with pytest.raises(ValueError, match="unknown profile"):
            cls.for_profile("develop")
        assert cls.for_profile("v5.5").profile == "v5.5"


def test_a_run_under_the_alias_records_the_canonical_name() -> None:
    old = run_scenario("develop", 5, 40, record_trace=True)
    new = run_scenario("v5.5", 5, 40, record_trace=True)
    assert old.profile == "v5.5"
    assert old.trace == new.trace
    assert old.trace["#meta"]["popverify"]["profile"] == "v5.5"


def test_cli_accepts_the_alias_and_writes_the_canonical_name() -> None:
    def simulate(profile: str) -> dict:
        proc = subprocess.run([sys.executable, "-m", "popverify", "simulate", "--profile", profile, "--seed", "3",
                               "--steps", "30", "--json"], capture_output=True, text=True, timeout=120)
        assert proc.returncode in (0, 1), proc.stderr
        return json.loads(proc.stdout)
    assert simulate("develop") == simulate("v5.5")
    assert simulate("develop")["profile"] == "v5.5"
    proc = subprocess.run([sys.executable, "-m", "popverify", "simulate", "--profile", "v5.1", "--seed", "3"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "unknown profile 'v5.1'" in proc.stderr and "Traceback" not in proc.stderr


def test_spec_profiles_lists_every_release_switch() -> None:
    # a switch the table does not list has no Java lines on record (spec/profiles.md "Switches")
    doc = (Path(__file__).resolve().parents[2] / "spec" / "profiles.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^\| (\w+) \|", doc, re.M))
    switches = {name for table in (broker_config.RELEASE_SWITCHES, client_config.RELEASE_SWITCHES)
                for entry in table.values() for name in entry}
    assert switches - listed == set()
