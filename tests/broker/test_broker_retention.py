"""Retention through the broker: what a POP answers after the store's two stages."""

from __future__ import annotations

from reference.common.pop import PopRequest
from tests.broker.conftest import make_broker

INV = 60_000


def _broker_with_retention(profile: str):  # type: ignore[no-untyped-def]
    """T/0 with offsets 0..4 (one commit-log file each), the group committed at 1, the files
    of offsets 0..2 deleted and the consume queues corrected: min offset 3."""
    b = make_broker(profile)
    for i in range(5):
        b.roll_commit_log()
        b.put_message("T", 0, b"m%d" % i)
    b.offsets.commit_offset("c", "G", "T", 0, 1)
    assert b.expire("T", 0, 3) == 3
    assert b.min_offset("T", 0) == 3
    return b


def test_pop_after_retention_corrects_the_offset_on_both_releases() -> None:
    for profile in ("v5.0", "v5.5"):
        got = _broker_with_retention(profile).pop(PopRequest("T", "G", queue_id=0, invisible_time=INV)).result
        assert [m.queue_offset for m in got.messages] == [3, 4]


def test_5_5_keeps_the_uncorrected_offset_for_the_ck_and_handles() -> None:
    """PopMessageProcessor#popMsgFromQueue 5.5.0: appendCheckPoint / buildStartOffsetInfo take
    `finalOffset` (1, before the OFFSET_TOO_SMALL correction); 5.0.0 takes the corrected 3."""
    starts = {}
    for profile in ("v5.0", "v5.5"):
        got = _broker_with_retention(profile).pop(PopRequest("T", "G", queue_id=0, invisible_time=INV)).result
        starts[profile] = {m.extra_info.split(" ")[0] for m in got.messages}
    assert starts == {"v5.0": {"3"}, "v5.5": {"1"}}
