from reference.broker.message import MessageExt
from reference.broker.offset_manager import ConsumerOffsetManager
from reference.broker.store import MessageStore
from reference.broker.timer import TimerService
from reference.common.clock import VirtualClock


def test_timer_delivers_at_slot_in_order():
    clock = VirtualClock(0)
    store = MessageStore(clock.now)
    timer = TimerService(store, 1000)
    timer.put(MessageExt("R", 0, body=b"late", deliver_time_ms=2500))
    timer.put(MessageExt("R", 0, body=b"early", deliver_time_ms=1999))
    timer.put(MessageExt("R", 0, body=b"early2", deliver_time_ms=1000))
    assert timer.timer_step(999) == 0
    assert timer.timer_step(1000) == 2
    assert [m.body for m in store.snapshot_queue("R", 0)] == [b"early", b"early2"]
    assert timer.timer_step(2000) == 1
    assert store.look_message_by_offset("R", 0, 2).body == b"late"
    assert timer.pending() == []


def test_offsets_survive_restart_only_when_flushed():
    om = ConsumerOffsetManager(5000, now=0)
    assert om.query_offset("G", "T", 0) == -1
    om.commit_offset("c", "G", "T", 0, 3)
    assert not om.flush_step(4999)
    assert om.flush_step(5000)
    om.commit_offset("c", "G", "T", 0, 8)
    om.restart()
    assert om.query_offset("G", "T", 0) == 3
    assert om.offsets() == {("G", "T", 0): 3}
