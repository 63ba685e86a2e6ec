"""Model errors are findings (issue 17 item 2): a model that raises gives a MODEL-ERROR
violation that is shrunk and replayed like any other; a foreign schedule entry is rejected."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from popverify.commands.replay import replay
from popverify.sim import pop_driver
from popverify.sim.scenario import Action, ScenarioConfig, run_scenario
from popverify.sim.shrink import shrink_to_trace
from reference.broker import revive

CONFIG = ScenarioConfig(queues=1, consumers=1, invisible_time=2000)


@pytest.fixture
def raising_revive(monkeypatch: pytest.MonkeyPatch) -> None:
    def revive_msg_from_ck(self: revive.PopReviveService, point: object) -> None:
        raise IndexError("index 3 out of bounds for length 3")

    monkeypatch.setattr(revive.PopReviveService, "revive_msg_from_ck", revive_msg_from_ck)


def test_a_model_exception_ends_the_run_as_a_model_error(raising_revive: None) -> None:
    result = run_scenario("v5.0", 1, 300, config=CONFIG)
    assert [v.property_id for v in result.violations] == ["MODEL-ERROR"]
    message = result.violations[0].message
    assert message.startswith("IndexError: index 3 out of bounds")
    assert "reference/broker/revive.py" in message and "merge_and_revive" in message
    assert result.model_traceback is not None and "revive_msg_from_ck" in result.model_traceback
    assert "/work/" not in result.model_traceback  # relative paths: replayable byte for byte
    assert result.summary()["model_traceback"] == result.model_traceback


def test_the_model_error_is_shrunk_and_replayed(raising_revive: None, tmp_path: Path) -> None:
    result = run_scenario("v5.0", 1, 120, config=CONFIG)
    assert result.violations and result.violations[0].property_id == "MODEL-ERROR"
    path = tmp_path / "model-error.itf.json"
    minimal, replayed = shrink_to_trace("v5.0", "pop", 1, CONFIG, result.schedule, "MODEL-ERROR", path)
    assert len(minimal) < len(result.schedule)
    assert [v.property_id for v in replayed.violations] == ["MODEL-ERROR"]
    same, recorded, again = replay(str(path))
    assert same and again["violations"][0]["property"] == "MODEL-ERROR"


def test_without_the_fault_the_same_run_has_no_model_error() -> None:
    result = run_scenario("v5.0", 1, 120, config=CONFIG)
    assert all(v.property_id != "MODEL-ERROR" for v in result.violations)


@pytest.mark.parametrize("entry, reason", [
    (Action("pop", (0,)), "takes 3 argument(s), got 1"),
    (Action("ack", ("c0", 0)), "argument c must be an int"),
    (Action("pop", (0, 0, 1)), "argument long_poll must be a bool"),
    (Action("produce", (True,)), "argument queue_id must be an int"),
])
def test_a_foreign_schedule_entry_is_rejected_with_a_clear_error(entry: Action, reason: str) -> None:
    with pytest.raises(ValueError, match=re.escape(reason)):
        run_scenario("v5.5", 0, 0, config=CONFIG, schedule=[Action("produce", (0,)), entry])


def test_an_exception_outside_the_model_is_not_a_finding(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken_driver(self: pop_driver.PopWorld) -> bool:
        raise RuntimeError("driver bug")

    monkeypatch.setattr(pop_driver.PopWorld, "scan", broken_driver)
    with pytest.raises(RuntimeError, match="driver bug"):
        run_scenario("v5.5", 0, 0, config=CONFIG, schedule=[Action("scan")])


def test_push_mode_reports_model_errors_too(monkeypatch: pytest.MonkeyPatch) -> None:
    from reference.client import process_queue

    def put_message(self: object, msgs: object) -> bool:
        raise ValueError("negative size")

    monkeypatch.setattr(process_queue.ProcessQueue, "put_message", put_message)
    result = run_scenario("v5.5", 3, 200, mode="push")
    assert [v.property_id for v in result.violations] == ["MODEL-ERROR"]
    assert "ValueError: negative size" in result.violations[0].message
