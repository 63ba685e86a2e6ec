------------------------- MODULE PushConsumerOffsets -------------------------
(***************************************************************************)
(* Push consumers of one group on one queue (reference/client/push_consumer *)
(* .py, rebalance_impl.py, consume_concurrently.py, process_queue.py):      *)
(*                                                                          *)
(*  - a consumer that gains the queue in a rebalance drops its stale offset *)
(*    (removeDirtyOffset) and starts pulling at the broker's committed      *)
(*    offset (computePullFromWhere, CONSUME_FROM_LAST_OFFSET with an offset *)
(*    present; a queue without one starts at 0 here -- F5 is the Python     *)
(*    model's, with retention); reading the offset from the broker also     *)
(*    puts it in the client's offset table (RemoteBrokerOffsetStore#        *)
(*    readOffset), and a queue without one is answered 0 (always on v5.0,  *)
(*    only once message 0 exists on v5.5: ConsumerManageProcessor#       *)
(*    queryConsumerOffset);                                                 *)
(*  - a pull puts the next message into its ProcessQueue; a pull finding    *)
(*    nothing new while the ProcessQueue is empty moves the client offset   *)
(*    up to the pull offset (correctTagsOffset);                            *)
(*  - consuming a message removes it and updates the client offset with     *)
(*    increaseOnly to what removeMessage returns: the first offset still    *)
(*    held, or the pull offset when nothing is held;                        *)
(*  - cleanExpiredMsg sends the head message back after consumeTimeout and  *)
(*    removes it without touching the client offset;                        *)
(*  - persistConsumerOffset sends the client offset, and so does a pull     *)
(*    (its commitOffset); the broker overwrites (ConsumerOffsetManager#     *)
(*    commitOffset is not increase-only);                                   *)
(*  - a consumer losing the queue persists, then forgets it (the dropped    *)
(*    ProcessQueue's in-flight consumption commits nothing);                *)
(*  - a consumer may crash (nothing persisted) and start again.             *)
(* Rebalances are not coordinated: two consumers may hold the queue at once *)
(* (each acts on its own view of the group), as in RocketMQ.               *)
(*                                                                          *)
(* Abstractions: one queue, messages produced up front, a consume either    *)
(* succeeds or sends the message back to %RETRY% (both "consumed" here),    *)
(* the offset store is RemoteBrokerOffsetStore, no retention, no broker     *)
(* restart. The profiles differ only in the answer for a queue without an   *)
(* offset. PushConsumerOffsetsTrace checks runs of the Python model against *)
(* this spec (spec/trace-validation.md).                                    *)
(***************************************************************************)
EXTENDS Integers, FiniteSets, TLC

CONSTANTS Consumers, Msgs, MaxCrash, MaxRebalance, Profile

ASSUME Profile \in {"v5.0", "v5.5"}

VARIABLES
    alive,        \* alive[c]
    owns,         \* owns[c]: c's ProcessQueue for the queue exists (not dropped)
    pq,           \* pq[c]: offsets pulled and not yet consumed
    next,         \* next[c]: the pull request's next offset
    local,        \* local[c]: the client offset table entry, -1 when none
    committed,    \* the broker's committed offset, -1 when none
    consumed,     \* offsets consumed successfully at least once
    crashes, rebalances

\* The variables by group; an action names the groups it leaves alone whole and, of a group
\* it touches, the members it leaves alone.
consumerVars == <<alive, owns, pq, next>>          \* the consumers and their ProcessQueues
offsetVars == <<local, committed>>                 \* the client's offset table and the broker's
historyVars == <<consumed, crashes, rebalances>>   \* what happened so far (consumption, faults)
vars == <<consumerVars, offsetVars, historyVars>>
Offsets == 0..(Msgs - 1)
\* Consumers are interchangeable; only the safety-only deep config uses the symmetry (it is
\* unsound for liveness checking).
Perms == Permutations(Consumers)
Min(S) == CHOOSE x \in S : \A y \in S : x <= y
Max2(a, b) == IF a >= b THEN a ELSE b

TypeOK ==
    /\ alive \in [Consumers -> BOOLEAN] /\ owns \in [Consumers -> BOOLEAN]
    /\ pq \in [Consumers -> SUBSET Offsets] /\ next \in [Consumers -> 0..Msgs]
    /\ local \in [Consumers -> -1..Msgs] /\ committed \in -1..Msgs /\ consumed \subseteq Offsets

Init ==
    /\ alive = [c \in Consumers |-> TRUE] /\ owns = [c \in Consumers |-> FALSE]
    /\ pq = [c \in Consumers |-> {}] /\ next = [c \in Consumers |-> 0] /\ local = [c \in Consumers |-> -1]
    /\ committed = -1 /\ consumed = {} /\ crashes = 0 /\ rebalances = 0

\* What RemoteBrokerOffsetStore#readOffset(READ_FROM_STORE) leaves in the client's table: the
\* broker's answer (QUERY_NOT_FOUND leaves the entry removed by removeDirtyOffset absent).
StoreAnswers == IF committed >= 0 THEN {committed}
                ELSE IF Profile = "v5.0" THEN {0} ELSE {-1, 0}

\* updateProcessQueueTableInRebalance: a new ProcessQueue, pulling from the broker's offset.
Gain(c) ==
    /\ alive[c] /\ ~owns[c] /\ (rebalances < MaxRebalance \/ \A d \in Consumers : ~owns[d])
    /\ owns' = [owns EXCEPT ![c] = TRUE]
    /\ pq' = [pq EXCEPT ![c] = {}]
    /\ \E v \in StoreAnswers : local' = [local EXCEPT ![c] = v]
    /\ next' = [next EXCEPT ![c] = IF committed >= 0 THEN committed ELSE 0]
    /\ rebalances' = IF rebalances < MaxRebalance THEN rebalances + 1 ELSE rebalances
    /\ UNCHANGED alive /\ UNCHANGED committed /\ UNCHANGED <<consumed, crashes>>

\* removeUnnecessaryMessageQueue: persist, forget the offset, drop the ProcessQueue.
Lose(c) ==
    /\ alive[c] /\ owns[c] /\ rebalances < MaxRebalance
    /\ committed' = IF local[c] >= 0 THEN local[c] ELSE committed
    /\ owns' = [owns EXCEPT ![c] = FALSE]
    /\ pq' = [pq EXCEPT ![c] = {}]
    /\ local' = [local EXCEPT ![c] = -1]
    /\ rebalances' = rebalances + 1
    /\ UNCHANGED <<alive, next>> /\ UNCHANGED <<consumed, crashes>>

Pull(c) ==
    /\ alive[c] /\ owns[c] /\ next[c] < Msgs
    /\ pq' = [pq EXCEPT ![c] = @ \cup {next[c]}]
    /\ next' = [next EXCEPT ![c] = @ + 1]
    /\ UNCHANGED <<alive, owns>> /\ UNCHANGED <<offsetVars, historyVars>>

\* ConsumeMessageConcurrentlyService#processConsumeResult: removeMessage, then
\* updateOffset(increaseOnly = true) unless the ProcessQueue was dropped.
Consume(c, x) ==
    /\ alive[c] /\ owns[c] /\ x \in pq[c]
    /\ consumed' = consumed \cup {x}
    /\ pq' = [pq EXCEPT ![c] = @ \ {x}]
    /\ LET rest == pq[c] \ {x}
           off == IF rest = {} THEN next[c] ELSE Min(rest)
       IN local' = [local EXCEPT ![c] = IF @ < 0 THEN off ELSE Max2(@, off)]
    /\ UNCHANGED <<alive, owns, next>> /\ UNCHANGED committed /\ UNCHANGED <<crashes, rebalances>>

\* DefaultMQPushConsumerImpl#correctTagsOffset: NO_NEW_MSG / NO_MATCHED_MSG with nothing held.
CorrectTagsOffset(c) ==
    /\ alive[c] /\ owns[c] /\ pq[c] = {}
    /\ local' = [local EXCEPT ![c] = IF @ < 0 THEN next[c] ELSE Max2(@, next[c])]
    /\ UNCHANGED <<consumerVars, historyVars>> /\ UNCHANGED committed

\* ProcessQueue#cleanExpiredMsg: the head, consumed for longer than consumeTimeout, is sent
\* back and removed; the offset removeMessage returns is discarded.
CleanExpired(c) ==
    /\ alive[c] /\ owns[c] /\ pq[c] # {}
    /\ consumed' = consumed \cup {Min(pq[c])}
    /\ pq' = [pq EXCEPT ![c] = @ \ {Min(pq[c])}]
    /\ UNCHANGED <<alive, owns, next>> /\ UNCHANGED offsetVars /\ UNCHANGED <<crashes, rebalances>>

\* persistConsumerOffset (every 5 s), or the commitOffset a pull carries (PullMessageProcessor).
Persist(c) ==
    /\ alive[c] /\ owns[c] /\ local[c] >= 0
    /\ committed' = local[c]
    /\ UNCHANGED <<consumerVars, historyVars>> /\ UNCHANGED local

Crash(c) ==
    /\ alive[c] /\ crashes < MaxCrash
    /\ alive' = [alive EXCEPT ![c] = FALSE] /\ owns' = [owns EXCEPT ![c] = FALSE]
    /\ pq' = [pq EXCEPT ![c] = {}] /\ local' = [local EXCEPT ![c] = -1]
    /\ crashes' = crashes + 1
    /\ UNCHANGED next /\ UNCHANGED committed /\ UNCHANGED <<consumed, rebalances>>

Start(c) ==
    /\ ~alive[c]
    /\ alive' = [alive EXCEPT ![c] = TRUE]
    /\ UNCHANGED <<owns, pq, next>> /\ UNCHANGED <<offsetVars, historyVars>>

Next ==
    \E c \in Consumers :
        \/ Gain(c) \/ Lose(c) \/ Pull(c) \/ Persist(c) \/ Crash(c) \/ Start(c)
        \/ CorrectTagsOffset(c) \/ CleanExpired(c)
        \/ \E x \in Offsets : Consume(c, x)

\* Live consumers keep pulling and consuming; a crashed one restarts; a queue nobody holds is
\* eventually taken (after MaxRebalance changes only that rebalance is left).
Fairness ==
    \A c \in Consumers :
        /\ WF_vars(Pull(c)) /\ WF_vars(\E x \in Offsets : Consume(c, x)) /\ WF_vars(Start(c))
        /\ WF_vars(Gain(c))

Spec == Init /\ [][Next]_vars /\ Fairness

-----------------------------------------------------------------------------
\* OFF-3: no committed offset (broker or client) passes a message not consumed.
OFF_3 ==
    /\ \A x \in Offsets : x < committed => x \in consumed
    /\ \A c \in Consumers : \A x \in Offsets : x < local[c] => x \in consumed

\* ALO-3 (liveness): every message is eventually consumed.
ALO_3 == <>(consumed = Offsets)
=============================================================================
