--------------------------- MODULE PopConsumption ---------------------------
(***************************************************************************)
(* POP consumption of one queue by one consumer group, as the reference     *)
(* model does it (reference/broker/pop_processor.py, ack_processor.py,      *)
(* revive.py, buffer_merge.py), buffer merge off or on (BufferMerge), with  *)
(* broker restarts (MaxRestart) and retention (MaxExpire). Checked, named   *)
(* after spec/properties.md: OFF_1 (ALO-1 as a state invariant), CKM_1      *)
(* (assumes no restart), OFF_2 (restart steps excused), ALO_2 (liveness,    *)
(* under Fairness), PRG_1 and PRG_2 (progress liveness: the committed       *)
(* offset reaches the queue's end, every CK is eventually done; weak        *)
(* fairness of the progress actions only); each MCPopConsumption*.cfg       *)
(* model picks the constants and the properties it checks                   *)
(* (tlaplus/README.md).                                                     *)
(*                                                                          *)
(*  - a POP takes popTime first and reads the queue later (PopMessage-      *)
(*    Processor#processRequest then popMsgFromQueue), storing one           *)
(*    checkpoint (CK) per read: startOffset, num, popTime, and committing   *)
(*    the consumer offset past the batch at once;                           *)
(*  - an ack marks its bit in the CK (the AckMsg in the revive topic is     *)
(*    merged by PopReviveService#consumeReviveMessage before the CK is      *)
(*    revived);                                                             *)
(*  - changeInvisibleTime acks the old CK and stores a new one;             *)
(*  - once now >= popTime + invisibleTime, revive copies every unacked      *)
(*    message into the retry topic (reviveMsgFromCk), except that v5.0      *)
(*    skips a message stored after the CK's popTime ("ck from last          *)
(*    epoch", finding F1); v5.5 removed that check;                         *)
(*  - the consumer pops and acks retry copies; it may crash, losing the     *)
(*    handles it holds.                                                     *)
(*                                                                          *)
(*  - with BufferMerge (enablePopBufferMerge), a read's CK may wait in the  *)
(*    merge buffer (PopBufferMergeService#addCk; addCkJustOffset stores it  *)
(*    at once when the buffer refuses), acks set its bits there, the scan   *)
(*    stores it to the revive topic (only stored CKs are revived), and the  *)
(*    consumer offset is not committed at pop: each read queues its         *)
(*    nextBeginOffset, and scanCommitOffset commits the head of the queue   *)
(*    once its CK is stored or fully acked; a POP reads from the larger of  *)
(*    the committed offset and the newest queued one (getPopOffset);        *)
(*  - a broker restart loses the buffer, the offset queue and the POP in    *)
(*    progress, and the committed offset falls back to its last flush       *)
(*    (ConsumerOffsetManager persists every flushConsumerOffsetInterval).   *)
(*  - with MaxExpire, retention deletes the oldest messages; a read below   *)
(*    the store's min offset gets OFFSET_TOO_SMALL and commits the min      *)
(*    offset at once (popMsgFromQueue), and revive skips a deleted message  *)
(*    (reviveMsgFromCk: "can not get biz msg"). With BufferMerge this lets  *)
(*    scanCommitOffset move the committed offset back (finding F6).         *)
(*                                                                          *)
(* Abstractions: one queue, one consumer process at a time, time as a       *)
(* bounded counter, batch = every visible message, the retry topic as a set *)
(* consumed in any order. Without BufferMerge the offset is committed at    *)
(* the read (the model queues it and the next scan commits it: only a       *)
(* restart between the two can tell, and it only re-delivers). Batch ack is *)
(* its acks one after another: every batch-ack behaviour is a behaviour of  *)
(* that sequence (nothing else moves between them), so safety carries over. *)
(* A restart's rollback of the revive progress only revives again           *)
(* (duplicates) and is left out.                                            *)
(***************************************************************************)
EXTENDS Integers, FiniteSets, Sequences

CONSTANTS
    Msgs,           \* how many messages are produced
    MaxTime,        \* the virtual clock stops here (state constraint by construction)
    Invisible,      \* invisibleTime of every POP
    MaxCrash,       \* how often the consumer may crash
    MaxCi,          \* how many changeInvisibleTime calls a behaviour may make
    Profile,        \* "v5.0" or "v5.5"
    BufferMerge,    \* enablePopBufferMerge
    MaxRestart,     \* how often the broker may restart
    MaxExpire       \* how many of the oldest messages retention may delete

ASSUME Profile \in {"v5.0", "v5.5"} /\ Invisible >= 1 /\ BufferMerge \in BOOLEAN /\ MaxRestart \in Nat
       /\ MaxExpire \in Nat

VARIABLES
    now,            \* virtual time
    stored,         \* stored[m] = store time of message m (m = queue offset), for m < Len
    len,            \* messages stored so far (next queue offset)
    offset,         \* committed consumer offset
    pending,        \* popTime of a POP begun but not yet read, or -1
    cks,            \* set of CK records
    held,           \* set of [m |-> message, ck |-> CK id or 0 for a retry copy, dl |-> deadline]
    acked,          \* messages acked with SUCCESS at least once
    cleanAcked,     \* messages acked before their deadline (for NSR)
    retry,          \* messages whose copy waits in the retry topic
    crashes,
    nextCk,
    cis,            \* changeInvisibleTime calls so far
    oq,             \* PopBufferMergeService#commitOffsets of the queue: <<[ck |-> id, nb |-> nextBeginOffset]>>
    flushed,        \* the committed offset as last persisted
    restarts,
    low             \* the store's min offset (messages below it were deleted by retention)

\* The variables by group; an action names the groups it leaves alone whole and, of a group
\* it touches, the members it leaves alone.
brokerVars == <<now, stored, len, low, restarts>>         \* the clock, the store, broker restarts
offsetVars == <<offset, oq, flushed>>                     \* committed, queued and persisted offsets
checkpointVars == <<cks, nextCk, retry>>                  \* CKs and what revive wrote to the retry topic
consumerVars == <<pending, held, acked, cleanAcked, crashes, cis>>   \* the consumer and its requests
vars == <<brokerVars, offsetVars, checkpointVars, consumerVars>>

Offsets == 0..(Msgs - 1)
CK == [id: Nat, start: Nat, num: Nat, popTime: Nat, bits: SUBSET Nat, revived: BOOLEAN, buf: BOOLEAN]

TypeOK ==
    /\ now \in 0..MaxTime
    /\ len \in 0..Msgs
    /\ offset \in 0..len
    /\ pending \in {-1} \cup (0..MaxTime)
    /\ acked \subseteq Offsets /\ cleanAcked \subseteq acked /\ retry \subseteq Offsets
    /\ flushed \in 0..Msgs /\ restarts \in 0..MaxRestart /\ low \in 0..len

Init ==
    /\ now = 0 /\ stored = [m \in Offsets |-> 0] /\ len = 0 /\ offset = 0 /\ pending = -1
    /\ cks = {} /\ held = {} /\ acked = {} /\ cleanAcked = {} /\ retry = {} /\ crashes = 0 /\ nextCk = 1 /\ cis = 0
    /\ oq = <<>> /\ flushed = 0 /\ restarts = 0 /\ low = 0

Produce ==
    /\ len < Msgs
    /\ stored' = [stored EXCEPT ![len] = now]
    /\ len' = len + 1
    /\ UNCHANGED <<now, low, restarts>> /\ UNCHANGED <<offsetVars, checkpointVars, consumerVars>>

\* PopMessageProcessor#processRequest: popTime = now, before any queue is read.
BeginPop ==
    /\ pending = -1
    /\ pending' = now
    /\ UNCHANGED <<brokerVars, offsetVars, checkpointVars>> /\ UNCHANGED <<held, acked, cleanAcked, crashes, cis>>

\* getPopOffset: the committed offset, or the newest nextBeginOffset still queued if larger.
ReadPos == IF oq = <<>> THEN offset ELSE IF oq[Len(oq)].nb > offset THEN oq[Len(oq)].nb ELSE offset

\* popMsgFromQueue: a pop offset below the store's min offset gets OFFSET_TOO_SMALL and the
\* min offset is committed at once ("store is no correct"), whatever the buffer holds.
From == IF ReadPos < low THEN low ELSE ReadPos
Corrected == IF ReadPos < low THEN low ELSE offset

\* popMsgFromQueue: everything from the pop offset, one CK. Without BufferMerge the offset is
\* committed at once; with it the CK is buffered (addCk) or stored at once (addCkJustOffset),
\* and its nextBeginOffset queued for scanCommitOffset.
ReadQueue ==
    /\ pending # -1
    /\ pending' = -1
    /\ IF From < len
       THEN /\ \E b \in IF BufferMerge THEN BOOLEAN ELSE {FALSE} :
                   cks' = cks \cup {[id |-> nextCk, start |-> From, num |-> len - From, popTime |-> pending,
                                     bits |-> {}, revived |-> FALSE, buf |-> b]}
            /\ held' = held \cup {[m |-> x, ck |-> nextCk, dl |-> pending + Invisible] : x \in From..(len - 1)}
            /\ IF BufferMerge
               THEN oq' = Append(oq, [ck |-> nextCk, nb |-> len]) /\ offset' = Corrected
               ELSE offset' = len /\ UNCHANGED oq
            /\ nextCk' = nextCk + 1
       ELSE /\ offset' = Corrected
            /\ UNCHANGED <<cks, held, nextCk, oq>>
    /\ UNCHANGED brokerVars /\ UNCHANGED flushed /\ UNCHANGED retry /\ UNCHANGED <<acked, cleanAcked, crashes, cis>>

MarkBit(c, i) == [c EXCEPT !.bits = c.bits \cup {i}]

\* The clock stops at MaxTime, which stands for "any later time": past every deadline.
Before(deadline) == now < deadline /\ now < MaxTime

\* AckMessageProcessor: the ack's bit reaches its CK (before revive, as consumeReviveMessage merges it).
Ack(h) ==
    /\ h \in held
    /\ held' = held \ {h}
    /\ acked' = acked \cup {h.m}
    /\ cleanAcked' = IF Before(h.dl) THEN cleanAcked \cup {h.m} ELSE cleanAcked
    /\ cks' = IF h.ck = 0 THEN cks
              ELSE {IF c.id = h.ck /\ ~c.revived THEN MarkBit(c, h.m - c.start) ELSE c : c \in cks}
    /\ UNCHANGED <<brokerVars, offsetVars>> /\ UNCHANGED <<nextCk, retry>> /\ UNCHANGED <<pending, crashes, cis>>

\* ChangeInvisibleTimeProcessor: a new CK for the message, then the old one acked.
ChangeInvisible(h) ==
    /\ h \in held /\ h.ck # 0 /\ Before(h.dl) /\ cis < MaxCi
    /\ cks' = {IF c.id = h.ck /\ ~c.revived THEN MarkBit(c, h.m - c.start) ELSE c : c \in cks}
              \cup {[id |-> nextCk, start |-> h.m, num |-> 1, popTime |-> now, bits |-> {}, revived |-> FALSE,
                     buf |-> FALSE]}
    /\ held' = (held \ {h}) \cup {[m |-> h.m, ck |-> nextCk, dl |-> now + Invisible]}
    /\ nextCk' = nextCk + 1 /\ cis' = cis + 1
    /\ UNCHANGED <<brokerVars, offsetVars>> /\ UNCHANGED retry /\ UNCHANGED <<pending, acked, cleanAcked, crashes>>

\* PopReviveService#reviveMsgFromCk once the CK's revive time has come.
SkippedByEpoch(c, x) == Profile = "v5.0" /\ c.popTime < stored[x]
\* reviveMsgFromCk finds no message at a deleted offset and goes on.
Skipped(c, x) == SkippedByEpoch(c, x) \/ x < low

\* At MaxTime every revive time has come (see Before).
Revive(c) ==
    /\ c \in cks /\ ~c.revived /\ ~c.buf /\ (now >= c.popTime + Invisible \/ now = MaxTime)
    /\ retry' = retry \cup {c.start + i : i \in {j \in 0..(c.num - 1) : j \notin c.bits /\ ~Skipped(c, c.start + j)}}
    /\ cks' = (cks \ {c}) \cup {[c EXCEPT !.revived = TRUE]}
    /\ UNCHANGED <<brokerVars, offsetVars, consumerVars>> /\ UNCHANGED nextCk

\* A POP of the retry topic: the consumer now holds the copy (no CK of its own in this abstraction).
PopRetry(x) ==
    /\ x \in retry
    /\ retry' = retry \ {x}
    /\ held' = held \cup {[m |-> x, ck |-> 0, dl |-> now + Invisible]}
    /\ UNCHANGED <<brokerVars, offsetVars>> /\ UNCHANGED <<cks, nextCk>>
    /\ UNCHANGED <<pending, acked, cleanAcked, crashes, cis>>

\* The consumer dies with what it holds. A retry copy it held comes back through the retry
\* topic (its own CK -- abstracted away -- revives it).
Crash ==
    /\ crashes < MaxCrash /\ held # {}
    /\ held' = {} /\ crashes' = crashes + 1
    /\ retry' = retry \cup {h.m : h \in {g \in held : g.ck = 0}}
    /\ UNCHANGED <<brokerVars, offsetVars>> /\ UNCHANGED <<cks, nextCk>> /\ UNCHANGED <<pending, acked, cleanAcked, cis>>

Tick ==
    /\ now < MaxTime
    /\ now' = now + 1
    /\ UNCHANGED <<stored, len, low, restarts>> /\ UNCHANGED <<offsetVars, checkpointVars, consumerVars>>

AllAcked(c) == \A i \in 0..(c.num - 1) : i \in c.bits

\* PopBufferMergeService#scan writes a buffered CK to the revive topic (one that is fully acked
\* is dropped instead; reviving it would re-send nothing, so both are this step).
StoreCk(c) ==
    /\ c \in cks /\ c.buf
    /\ cks' = (cks \ {c}) \cup {[c EXCEPT !.buf = FALSE]}
    /\ UNCHANGED <<brokerVars, offsetVars, consumerVars>> /\ UNCHANGED <<nextCk, retry>>

\* scanCommitOffset: the head of the offset queue is committed once its CK is stored or fully
\* acked (its nextBeginOffset, even below the committed offset, as commitOffset does).
CommitScan ==
    /\ oq # <<>>
    /\ \A c \in cks : c.id = Head(oq).ck => (~c.buf \/ AllAcked(c))
    /\ offset' = Head(oq).nb
    /\ oq' = Tail(oq)
    /\ UNCHANGED <<brokerVars, checkpointVars, consumerVars>> /\ UNCHANGED flushed

\* ConsumerOffsetManager#persist (only needed to roll back to; off once no restart is left).
Flush ==
    /\ restarts < MaxRestart /\ flushed # offset
    /\ flushed' = offset
    /\ UNCHANGED <<brokerVars, checkpointVars, consumerVars>> /\ UNCHANGED <<offset, oq>>

\* BrokerController restart: memory lost (buffer, offset queue, the POP in progress), the
\* committed offset back to its last flush; the store and the revive topic survive.
Restart ==
    /\ restarts < MaxRestart
    /\ restarts' = restarts + 1
    /\ cks' = {c \in cks : ~c.buf}
    /\ oq' = <<>> /\ pending' = -1 /\ offset' = flushed
    /\ UNCHANGED <<now, stored, len, low>> /\ UNCHANGED flushed /\ UNCHANGED <<nextCk, retry>>
    /\ UNCHANGED <<held, acked, cleanAcked, crashes, cis>>

\* Retention (DefaultMessageStore#deleteExpiredFiles) deletes the oldest stored message.
Expire ==
    /\ low < len /\ low < MaxExpire
    /\ low' = low + 1
    /\ UNCHANGED <<now, stored, len, restarts>> /\ UNCHANGED <<offsetVars, checkpointVars, consumerVars>>

Next ==
    \/ Produce \/ Expire \/ BeginPop \/ ReadQueue \/ Tick \/ Crash \/ CommitScan \/ Flush \/ Restart
    \/ \E c \in cks : StoreCk(c)
    \/ \E h \in held : Ack(h) \/ ChangeInvisible(h)
    \/ \E c \in cks : Revive(c)
    \/ \E x \in retry : PopRetry(x)

\* Consumers keep popping and acking, the broker keeps reviving and time keeps passing.
Fairness ==
    /\ WF_vars(BeginPop) /\ WF_vars(ReadQueue) /\ WF_vars(Tick)
    /\ \A x \in Offsets : WF_vars(PopRetry(x))
    /\ WF_vars(\E h \in held : Ack(h))
    /\ WF_vars(\E c \in cks : Revive(c))
    /\ WF_vars(\E c \in cks : StoreCk(c)) /\ WF_vars(CommitScan)

Spec == Init /\ [][Next]_vars /\ Fairness

-----------------------------------------------------------------------------
\* Properties, named after spec/properties.md.

LiveCovered(x) == \E c \in cks : ~c.revived /\ c.start <= x /\ x < c.start + c.num /\ (x - c.start) \notin c.bits
HeldNow(x) == \E h \in held : h.m = x

\* ALO-1 / OFF-1 as a state invariant: every stored message is acked, still deliverable
\* (at or after the committed offset), in the retry topic, held, or under a live CK
\* (a message retention deleted is excused, as in spec/properties.md).
OFF_1 == \A x \in low..(len - 1) :
            x \in acked \/ x >= offset \/ x \in retry \/ HeldNow(x) \/ LiveCovered(x)

\* CKM-1: revive never re-sends a message acked before its deadline -- assuming no restart
\* (spec/properties.md): after one, a message can be delivered again under a second CK, and
\* a clean ack through one handle does not stop the other CK's revive (MCPopConsumption_merge
\* finds that without this assumption).
CKM_1 == restarts = 0 => \A x \in retry : x \notin cleanAcked

\* OFF-2: the committed offset never moves back (an action property), restarts aside
\* (spec/properties.md: the offsets fall back to the last flush).
OFF_2 == [][offset' >= offset \/ restarts' > restarts]_vars

\* ALO-2 (liveness): once production stops, every stored message is eventually acked for good.
ALO_2 == <>[](\A x \in low..(len - 1) : x \in acked)

\* A checkpoint is done once revived, or once every message under it is acked (its revive
\* re-sends nothing and PopReviveService's offset may pass it).
Done(c) == c.revived \/ AllAcked(c)

\* PRG-2 (revive progress, liveness): under weak fairness of the progress actions only --
\* popping, acking, storing buffered CKs, reviving, the commit scan and time -- every
\* checkpoint is eventually done for good (faults, production and changeInvisibleTime have no
\* fairness: they may happen or not).
PRG_2 == <>[](\A c \in cks : ~c.buf /\ Done(c))

\* PRG-1 (consumer-offset progress, liveness): the committed offset eventually reaches the
\* queue's end for good (with BufferMerge through scanCommitOffset; after a restart's rollback
\* by reading again).
PRG_1 == <>[](offset = len)
=============================================================================
