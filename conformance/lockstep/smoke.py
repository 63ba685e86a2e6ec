"""Hand-run smoke check of the lockstep harness (spec/conformance.md "Smoke check by hand").

Per release, twice: put 3 messages, pop, ack one, changeInvisibleTime one, pass time with the
services, revive, timer, revive; the un-acked and the re-hidden message must be in the retry
topic (reconsumeTimes 1), the acked one not, and both runs must answer byte for byte the same.
Then F1: a message stored after popTime and read by the same POP (pop.interleave) is revived on
5.5.0 and not on 5.0.0. Prints the cost; exit 0 when everything holds, 1 otherwise.

    .venv/bin/python conformance/lockstep/smoke.py [5.0.0] [5.5.0]
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from popverify.conformance.lockstep_build import POP_TIME_METHOD, java_command  # noqa: E402


class Jvm:
    """One harness JVM; ``call`` returns the ``ok`` value and records every answer line."""

    def __init__(self, version: str) -> None:
        self.lines: list[str] = []
        self.proc = subprocess.Popen(java_command(version), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True, bufsize=1)

    def call(self, **req: Any) -> Any:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"harness exited during {req}")
        self.lines.append(line)
        answer = json.loads(line)
        if "error" in answer:
            raise RuntimeError(f"{req} -> {answer['error']}")
        return answer["ok"]

    def close(self) -> int:
        self.call(op="close")
        return self.proc.wait(timeout=60)


def smoke(version: str) -> tuple[list[str], list[str], dict[str, float]]:
    """One smoke run: (answer lines, failed expectations, timings)."""
    failures: list[str] = []
    t0 = time.perf_counter()
    jvm = Jvm(version)
    jvm.call(op="init", version=version, queues=2, seed=7, reviveQueueNum=2)
    t1 = time.perf_counter()
    for i, q in enumerate([0, 0, 1]):
        jvm.call(op="put", queueId=q, uniqKey=f"m{i}")
    jvm.call(op="advance", ms=10)
    popped = jvm.call(op="pop", queueId=-1, maxMsgNums=32, invisibleTime=10000)
    msgs = sorted(popped["messages"], key=lambda m: m["uniqKey"])
    if [m["uniqKey"] for m in msgs] != ["m0", "m1", "m2"]:
        failures.append(f"pop delivered {[m['uniqKey'] for m in msgs]}, not m0 m1 m2")
        jvm.close()
        return jvm.lines, failures, {}
    acked, hidden = msgs[0], msgs[1]
    jvm.call(op="advance", ms=10)
    code = jvm.call(op="ack", topic=acked["realTopic"], queueId=acked["queueId"], offset=acked["queueOffset"],
                    extraInfo=acked["extraInfo"])["code"]
    if code != 0:
        failures.append(f"ack answered {code}")
    jvm.call(op="advance", ms=10)
    changed = jvm.call(op="changeInvisibleTime", topic=hidden["realTopic"], queueId=hidden["queueId"],
                       offset=hidden["queueOffset"], extraInfo=hidden["extraInfo"], invisibleTime=20000)
    if changed["code"] != 0 or not changed["extraInfo"]:
        failures.append(f"changeInvisibleTime answered {changed}")
    jvm.call(op="scan")
    jvm.call(op="advance", ms=12000, servicesOnPeriod=True)
    for q in range(2):
        jvm.call(op="revive", qid=q)
    jvm.call(op="advance", ms=12000)
    jvm.call(op="timer")
    for q in range(2):
        jvm.call(op="revive", qid=q)
    state = jvm.call(op="state")
    t2 = time.perf_counter()
    retry = sorted((m["uniqKey"], m["reconsumeTimes"]) for m in state["retry"])
    if retry != [("m1", 1), ("m2", 1)]:
        failures.append(f"retry topic holds {retry}, expected m1 and m2 once each")
    rc = jvm.close()
    if rc != 0:
        failures.append(f"JVM exit {rc}")
    return jvm.lines, failures, {"start+init s": t1 - t0, "schedule s": t2 - t1, "requests": len(jvm.lines)}


def f1(version: str) -> list[str]:
    """Revived uniq keys after a POP that reads a message stored after its popTime."""
    jvm = Jvm(version)
    jvm.call(op="init", version=version, queues=1, seed=1, reviveQueueNum=1)
    jvm.call(op="put", queueId=0, uniqKey="m0")
    jvm.call(op="advance", ms=10)
    popped = jvm.call(op="pop", queueId=0, maxMsgNums=32, invisibleTime=5000,
                      interleave=[{"at": 0, "advance": 50, "ops": [{"op": "put", "queueId": 0, "uniqKey": "m1"}]}])
    if popped.get("interleaveMissed") or [m["uniqKey"] for m in popped["messages"]] != ["m0", "m1"]:
        jvm.close()
        raise RuntimeError(f"F1 set-up failed on {version}: {popped}")
    jvm.call(op="scan")
    jvm.call(op="advance", ms=10000, servicesOnPeriod=True)
    revived = [r["uniqKey"] for r in jvm.call(op="revive", qid=0)["revived"]]
    jvm.close()
    return revived


def main(argv: list[str]) -> int:
    versions = argv or sorted(POP_TIME_METHOD)
    ok = True
    for version in versions:
        lines1, fail1, cost = smoke(version)
        lines2, fail2, _ = smoke(version)
        for f in fail1 + fail2:
            print(f"{version}: FAIL {f}")
        same = lines1 == lines2
        print(f"{version}: smoke {'ok' if not fail1 + fail2 else 'FAILED'}; two runs "
              f"{'identical' if same else 'DIFFER'} ({len(lines1)} answers); "
              + ", ".join(f"{k} {v:.2f}" if isinstance(v, float) else f"{k} {v}" for k, v in cost.items()))
        revived = f1(version)
        want = ["m0"] if version == "5.0.0" else ["m0", "m1"]
        print(f"{version}: F1 revived {revived} (expected {want}: "
              f"{'m1 lost, reproduced' if version == '5.0.0' else 'm1 redelivered'})")
        ok = ok and not fail1 and not fail2 and same and revived == want
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
