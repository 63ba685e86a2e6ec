---------------------- MODULE PushConsumerOffsetsTrace ----------------------
(***************************************************************************)
(* Trace validation: is a run of the Python reference model a behaviour of  *)
(* PushConsumerOffsets?                                                     *)
(*                                                                          *)
(* popverify tlc --validate projects a push-mode ITF trace onto one queue   *)
(* and writes Log: one entry per spec step, [a |-> action name, c |->       *)
(* consumer, x |-> offset (Consume only), obs |-> observed state]. Each     *)
(* step of the Python run becomes the spec steps its events name (a pull    *)
(* response with three messages is three Pull steps); the observed state    *)
(* after the Python step is attached to the last of them (obs is empty on   *)
(* the others). TLC then looks for a behaviour of the spec that takes the   *)
(* named steps and passes through every observed state; the invariant       *)
(* LogNotReplayed fails exactly when the whole log was replayed, so a       *)
(* violation of it is the verdict "valid", and TLC ending without one means *)
(* entry l + 1 of the log is not a step of the spec from any state that     *)
(* matched the first l.                                                     *)
(***************************************************************************)
EXTENDS PushConsumerOffsets, Sequences

CONSTANT Log

VARIABLE l   \* log entries replayed so far

\* The spec action a log entry names (Stutter: a Python step with no effect on the spec's
\* variables, e.g. a pull request sent, time passing, a lost response).
Step(e) ==
    CASE e.a = "Gain"              -> Gain(e.c)
      [] e.a = "Lose"              -> Lose(e.c)
      [] e.a = "Pull"              -> Pull(e.c)
      [] e.a = "Consume"           -> Consume(e.c, e.x)
      [] e.a = "CorrectTagsOffset" -> CorrectTagsOffset(e.c)
      [] e.a = "CleanExpired"      -> CleanExpired(e.c)
      [] e.a = "Persist"           -> Persist(e.c)
      [] e.a = "Crash"             -> Crash(e.c)
      [] e.a = "Start"             -> Start(e.c)
      [] e.a = "Stutter"           -> UNCHANGED vars

\* The observed state, where there is one. ``next`` is observed only for consumers holding a
\* live ProcessQueue (the spec keeps a stale cursor for the others; the model has none).
Matches(o) ==
    "alive" \in DOMAIN o =>
        /\ alive' = o.alive /\ owns' = o.owns /\ local' = o.local
        /\ \A c \in Consumers : pq'[c] = o.pq[c]
        /\ \A c \in DOMAIN o.next : next'[c] = o.next[c]
        /\ committed' = o.committed /\ consumed' = o.consumed

TraceInit == Init /\ l = 0

TraceNext ==
    /\ l < Len(Log)
    /\ l' = l + 1
    /\ Step(Log[l + 1])
    /\ Matches(Log[l + 1].obs)

TraceSpec == TraceInit /\ [][TraceNext]_<<vars, l>>

LogNotReplayed == l < Len(Log)
=============================================================================
