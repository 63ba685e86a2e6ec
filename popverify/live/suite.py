"""The live technique of ``popverify verify --live``: one short live run per profile's release.

Each profile's release (reference/common/profile.py RELEASES: v5.0 -> 5.0.0, v5.5 -> 5.5.0)
gets one POP session of ``duration_s`` with the broker faults ``kill,pause``; the entry says per
run the totals, the property statuses and every violation, and whether it counts as a failure:
a run that errored, acknowledged no send, has inconsistent totals or shows a violation of a
property spec/expectations.json does not list as ``violated`` for the profile fails the technique.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable

from popverify.checker.expectations import expected

VERIFY_FAULTS = ("kill", "pause")
VERIFY_DURATION_S = 60
VERIFY_DRAIN_S = 120


def profile_releases() -> dict[str, str]:
    """Profile -> the RocketMQ release its live run uses."""
    from reference.common.profile import RELEASES
    return dict(RELEASES)


def live_entry(out: Path, duration_s: int = VERIFY_DURATION_S, seed: int = 1,
               progress: Callable[[str], None] = lambda m: None) -> dict[str, Any]:
    """Run one live session per profile's release and summarise them for the verify report.

    A missing JDK/Maven/client raises ToolError (the technique is then unavailable: a failure
    of verify), as every other technique does."""
    import rocketmq  # noqa: F401 - ModuleNotFoundError (an ImportError) makes the technique unavailable

    from popverify.live.cluster import _require
    from popverify.live.run import LiveConfig, run_live

    _require("java")
    _require("mvn")
    start = time.perf_counter()
    runs = []
    for profile, release in sorted(profile_releases().items()):
        progress(f"live: RocketMQ {release} ({profile}), {duration_s} s, faults {','.join(VERIFY_FAULTS)}")
        config = LiveConfig(release=release, duration_s=duration_s, faults=VERIFY_FAULTS, clients=2, seed=seed,
                            drain_s=VERIFY_DRAIN_S, out=out / "live" / release)
        result = run_live(config, progress=lambda m: progress(f"live {release}: {m}"))
        v = result.verdict
        violations = [{"property": x.property_id, "message": x.message, "op": x.step,
                       "expected": expected(profile, x.property_id) == "violated"} for x in v.violations]
        problems = []
        if not v.totals.acknowledged_sends:
            problems.append("no send was acknowledged")
        if not v.totals.consistent():
            problems.append("inconsistent totals")
        if result.outcome:
            problems.append(result.outcome)
        if result.leftover_pids:
            problems.append(f"processes left running: {list(result.leftover_pids)}")
        problems += [f"{x['property']} violated (op {x['op']})" for x in violations if not x["expected"]]
        runs.append({"profile": profile, "release": release, "mode": config.mode, "faults": list(VERIFY_FAULTS),
                     "duration_s": duration_s, "totals": v.totals.to_json(), "properties": v.checked,
                     "violations": violations, "drained": result.drained, "seconds": result.seconds,
                     "report": str(result.report_path), "history": str(result.history_path),
                     "problems": problems})
    failed = [f"{r['release']}: {'; '.join(r['problems'])}" for r in runs if r["problems"]]
    return {"result": "failed" if failed else "passed", "seconds": round(time.perf_counter() - start, 2),
            "runs": runs, **({"error": " | ".join(failed)[:500]} if failed else {})}
