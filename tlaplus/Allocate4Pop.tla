---------------------------- MODULE Allocate4Pop ----------------------------
(***************************************************************************)
(* Broker-side rebalance of RocketMQ POP consumption:                      *)
(* QueryAssignmentProcessor#allocate4Pop with AllocateMessageQueueAveragely *)
(* (rocketmq-all-5.0.0 and v5.5 are identical here).                    *)
(*                                                                         *)
(* Queues and clients are their indexes in the sorted lists doLoadBalance  *)
(* builds (0..Q-1, 0..C-1). Every (Q, C, S) within the bounds is an initial *)
(* state; the allocation is a pure function of it, so the invariants are   *)
(* checked for all small sizes at once.                                     *)
(***************************************************************************)
EXTENDS Naturals, FiniteSets

CONSTANTS MaxQ, MaxC, MaxS

VARIABLES q, c, s
vars == <<q, c, s>>

Min(a, b) == IF a < b THEN a ELSE b

\* AllocateMessageQueueAveragely#allocate: the queue indexes client i gets.
Avg(i, nq, nc) ==
    LET mod == nq % nc
        big == mod > 0 /\ i < mod
        avg == IF nq <= nc THEN 1 ELSE IF big THEN nq \div nc + 1 ELSE nq \div nc
        start == IF big THEN i * avg ELSE i * avg + mod
        range == Min(avg, nq - start)
    IN IF range <= 0 THEN {} ELSE {(start + k) % nq : k \in 0..(range - 1)}

\* allocate4Pop: the queue indexes client i gets (-1 = every queue is expanded).
Alloc4Pop(i, nq, nc, ns) ==
    IF ns <= 0 \/ ns >= nc - 1 THEN 0..(nq - 1)
    ELSE IF nc <= nq THEN UNION {Avg((i + t) % nc, nq, nc) : t \in 0..ns}
    ELSE {i % nq}

Holders(k) == {i \in 0..(c - 1) : k \in Alloc4Pop(i, q, c, s)}

\* The exact sharing degree (spec/allocation.md, ALLOC-2).
Degree(k) == IF s <= 0 \/ s >= c - 1 THEN c
             ELSE IF c <= q THEN s + 1
             ELSE (c - 1 - k) \div q + 1

Init == q \in 1..MaxQ /\ c \in 1..MaxC /\ s \in 0..MaxS
Next == UNCHANGED vars
Spec == Init /\ [][Next]_vars

TypeOK == q \in 1..MaxQ /\ c \in 1..MaxC /\ s \in 0..MaxS

ALLOC_1 == \A k \in 0..(q - 1) : Holders(k) # {}                       \* coverage
ALLOC_2 == \A k \in 0..(q - 1) : Cardinality(Holders(k)) = Degree(k)   \* exact degree
ALLOC_3 == \A i \in 0..(c - 1) : Alloc4Pop(i, q, c, s) # {}             \* every client assigned

\* Documented NEGATIVE check: the naive bound "at most 1 + popShareQueueNum clients per
\* queue". TLC must report it violated (smallest: q = 1, c = 2, s = 0).
NaiveSharingBound == \A k \in 0..(q - 1) : Cardinality(Holders(k)) <= 1 + s
=============================================================================
