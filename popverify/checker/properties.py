"""The property catalogue: IDs, titles and the faults each property's assumptions exclude.

Definitions are in spec/properties.md. A violation observed after a fault the property
does not assume away is reported; one observed after a fault its assumptions exclude is not
a violation of that property (it is counted as ``excused`` instead).
"""

from __future__ import annotations

import attrs


@attrs.frozen
class Property:
    """One checked property."""

    pid: str
    title: str
    excluded_faults: frozenset[str] = frozenset()


# The faults that make the store refuse puts (popverify/sim/pop_driver.py): store_put_fail,
# revive_put_fail (the revive's next retry puts refused whenever they come) and
# processor_put_fail (the next puts of an ack's or changeInvisibleTime's site, whenever they come),
# buffer_put_fail (the buffer's CK or ACK puts, whenever they come: what store_put_fail refuses there).
PUT_FAILURES: frozenset[str] = frozenset({"store_put_fail", "revive_put_fail", "processor_put_fail",
                                          "buffer_put_fail"})

# A broker restart, plain or right after the persist tasks (popverify/sim/pop_driver.py).
RESTARTS: frozenset[str] = frozenset({"restart", "persist_restart", "graceful_restart"})

PROPERTIES: dict[str, Property] = {p.pid: p for p in (
    Property("ALO-1", "every stored, unexpired message of a live topic is eventually delivered"),
    Property("ALO-2", "every such message is eventually acked when consumers ack everything"),
    # PUT_FAILURES: a refused ACK put is answered SUCCESS and lost (spec/broker.md)
    Property("NSR-1", "a message acked before its invisibility deadline is not delivered again",
             RESTARTS | {"delete_recreate"} | PUT_FAILURES),
    Property("INV-1", "a popped message is not delivered again before its (possibly changed) invisible time",
             RESTARTS | {"delete_recreate"} | PUT_FAILURES),
    Property("OFF-1", "a committed offset never passes a message neither acked, revived nor under a live checkpoint",
             frozenset({"delete_recreate"})),
    Property("OFF-2", "committed offsets never move backwards",
             RESTARTS | {"delete_recreate"}),
    Property("CKM-1", "revive re-sends only messages not acked before their deadline",
             RESTARTS | {"delete_recreate"} | PUT_FAILURES),
    Property("ALO-3", "push: every stored, unexpired message is eventually consumed, across consumer crash, "
                      "restart and rebalance"),
    Property("OFF-3", "push: a committed offset (broker or client) never passes a message neither consumed nor "
                      "sent back to the retry topic"),
    Property("OFF-4", "a LocalFileOffsetStore reloads exactly its last completed write (or its .bak), never garbage"),
    Property("PQ-1", "ProcessQueue msgCount equals the number of messages it holds"),
    Property("PQ-2", "ProcessQueue msgSize equals the total body size of the messages it holds, as put"),
    Property("PRG-1", "after a drain in which every message was acked, each queue's committed offset reaches its "
                      "max offset", frozenset({"delete_recreate", "expire", "expire_commit_log", "clean_consume_queue"})),
    Property("PRG-2", "after a drain, each revive queue's offset reaches its last checkpoint"),
    Property("QUI-1", "after a drain, merge buffer, commit-offset queues, buffer counter, queue locks and timer are "
                      "empty"),
    Property("PSH-1", "push: the drain reaches quiescence; then every held queue has a PullRequest due within a "
                      "bound and an empty ProcessQueue"),
    Property("PRG-3", "push: after the drain, each queue held by a live consumer has its committed offset at its max "
                      "offset", frozenset({"expire", "expire_commit_log", "clean_consume_queue"})),
    Property("RED-1", "bounded redelivery: a message delivered n+1 times had n earlier deliveries abandoned (deadline "
                      "reached without a clean ack); consumers that ack in time see it once",
             # PUT_FAILURES: a refused ACK put is answered SUCCESS and lost, as for NSR-1
             RESTARTS | {"delete_recreate"} | PUT_FAILURES),
    Property("RED-2", "a redelivered copy carries reconsumeTimes one more than the copy it was made from (0 in the "
                      "consumed topic); push copies past maxReconsumeTimes go to the DLQ"),
    Property("PSH-2", "push: a pull is suspended only while its queue has no message at or after its offset, and "
                      "stays suspended at most 1 s of virtual time once one arrives"),
    Property("DUP-1", "push: no message is consumed successfully again at an offset below the committed offset, "
                      "unless a crash, restart, rebalance move, duplicated/lost response or retention explains it",
             frozenset({"consumer_crash", "restart", "dup_response", "lose_response", "expire",
                        "expire_commit_log", "clean_consume_queue"})),
    Property("ORD-1", "push, orderly: messages of a queue reach a consumer's listener only while that consumer holds "
                      "the broker's lock of the queue", RESTARTS),
    Property("POP-ORD-1", "orderly POP: a queue's messages are not delivered while an earlier orderly batch of "
                          "that queue is in flight (not acked, not yet visible again)",
             # restart: the order info is reloaded (5.0.0: empty) or lost since the last persist;
             # stall: a stalled request's response reaches its consumer after later batches;
             # expire_commit_log: a consume-queue entry at commit-log position 0 whose file is gone
             # reads the first kept file's first message (store.py#_read), another queue's, into
             # this queue's batch (order2: v5.5 seed 36 of `swarm_config` orderly, 400 steps)
             RESTARTS | {"delete_recreate", "stall", "expire_commit_log"}),
    Property("BAT-1", "a POP or pull response carries at most the request's maxMsgNums messages"),
    Property("MODEL-ERROR", "the reference model never raises an exception (popverify/findings/model_error.py)"),
    Property("ALLOC-1", "every queue is assigned to some client"),
    Property("ALLOC-2", "each queue has exactly the sharing degree allocate4Pop defines"),
    Property("ALLOC-3", "every client is assigned a queue in POP mode"),
    Property("ALLOC-4", "clients with the same view agree on the assignment"),
)}
