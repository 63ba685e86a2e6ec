from reference.broker.offset_manager import ConsumerOffsetManager
from reference.broker.store import MessageStore
from reference.broker.timer import TimerService
from reference.common.clock import VirtualClock
from reference.common.message import MessageExt


def test_timer_delivers_at_the_first_second_at_or_after_the_deliver_time():
    """HookUtils#transformTimerMessage rounds D down (D - 1 s on a whole second) and
    TimerMessageStore#dequeue reads a slot once formatTimeMs(now) is past it: D is delivered
    at the first whole second >= D (checked in lockstep on 5.0.0 and 5.5.0)."""
    clock = VirtualClock(0)
    store = MessageStore(clock.now)
    timer = TimerService(store, 1000)
    timer.put(MessageExt("R", 0, body=b"late", deliver_time_ms=2500))
    timer.put(MessageExt("R", 0, body=b"early", deliver_time_ms=1999))
    timer.put(MessageExt("R", 0, body=b"exact", deliver_time_ms=1000))
    assert timer.timer_step(999) == 0
    assert timer.timer_step(1000) == 1  # exactly on the second: on time
    assert timer.timer_step(1999) == 0  # 1999 is not delivered before 2000 (the old model: at 1000)
    assert timer.timer_step(2000) == 1
    assert [m.body for m in store.snapshot_queue("R", 0)] == [b"exact", b"early"]
    assert timer.timer_step(2999) == 0
    assert timer.timer_step(3000) == 1
    assert store.look_message_by_offset("R", 0, 2).body == b"late"
    assert timer.pending() == []


def test_timer_stores_a_message_whose_deliver_time_has_come_at_once():
    """HookUtils#transformTimerMessage only parks when deliverMs > now."""
    clock = VirtualClock(5000)
    store = MessageStore(clock.now)
    timer = TimerService(store, 1000)
    timer.put(MessageExt("R", 0, body=b"past", deliver_time_ms=4200))
    timer.put(MessageExt("R", 0, body=b"now", deliver_time_ms=5000))
    timer.put(MessageExt("R", 0, body=b"soon", deliver_time_ms=5001))
    assert [m.body for m in store.snapshot_queue("R", 0)] == [b"past", b"now"]
    assert [m.body for m in timer.pending()] == [b"soon"] and timer.next_delivery() == 6000


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
