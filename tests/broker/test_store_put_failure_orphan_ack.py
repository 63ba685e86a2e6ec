"""PopReviveService#consumeReviveMessage and an ACK whose CK the round has not read (an orphan:
its CK was lost in the buffer at a restart, or refused by the store and not put yet): Java
`continue`s before the endTime update (5.0.0:333-335; 5.5.0:413-416 and 440-443 for a
BatchAckMsg, with enableSkipLongAwaitingAck false, the default), so the orphan's deliver time
does not widen the round's window. Found by the lockstep differential with --late-faults (a
5.5.0 schedule with a restart revived 2 s earlier on Java than on the model)."""

from __future__ import annotations

import pytest

from reference.broker.checkpoint import AckMsg
from reference.broker.keys import ACK_TAG
from reference.common.message import MessageExt

from tests.broker.conftest import make_broker
from tests.broker.test_broker_ack_revive import popped

INV = 10_000


def _orphan_ack(b, deliver_time: int, queue_id: int = 0) -> None:
    ack = AckMsg(ack_offset=0, start_offset=0, consumer_group="G", topic="T", queue_id=queue_id, pop_time=12_345,
                 broker_name=b.config.broker_name)
    b.store.put_message(MessageExt(topic=b.revive_topic, queue_id=0, body=b.ack_json(ack).encode(), tags=ACK_TAG,
                                   deliver_time_ms=deliver_time))


@pytest.mark.parametrize("profile", ["v5.0", "v5.5"])
def test_an_orphan_ack_does_not_move_the_revive_window(profile: str) -> None:
    b = make_broker(profile)
    b.clock.advance(5000)
    _orphan_ack(b, deliver_time=b.clock.now() - 1000)
    svc = b.revive_services[0]
    b.revive_step(0)
    assert svc.last_round is not None and svc.last_round.end_time == 0  # the model counted it before


@pytest.mark.parametrize("profile", ["v5.0", "v5.5"])
def test_a_ck_s_own_ack_still_moves_it(profile: str) -> None:
    # the same round with the CK read first: the ACK matches and its deliver time counts
    b = make_broker(profile, queues=1)
    msgs = popped(b)
    b.buffer_merge_scan()
    assert b.ack("G", msgs[0].ack_topic, msgs[0].queue_id, msgs[0].queue_offset, msgs[0].extra_info) == 0
    b.clock.advance(INV + 500)  # CK (popTime + INV - 1 s) and ACK (popTime + INV) delivered; < 3 s ago
    b.timer_step()
    ends = []
    for q in range(b.config.revive_queue_num):
        b.revive_step(q)
        lr = b.revive_services[q].last_round
        if lr is not None and lr.end_time:
            ends.append(lr.end_time)
    pop_time = int(msgs[0].extra_info.split(" ")[1])
    assert ends == [pop_time + INV]  # the ACK's deliver time (popTime + invisibleTime), not the CK's
