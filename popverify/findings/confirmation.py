"""Findings are confirmed on Java, or they are not findings (issue 15 item 3, issue 18 item 4).

Every minimal POP counterexample a campaign keeps (one per root-cause signature) is replayed
by the lockstep harness of its profile's release (popverify/conformance/confirm.py,
``run_lockstep``), and its signature gets one of these verdicts (spec/findings/README.md
"Confirmation on Java"):

- ``reproduced``: the replay agrees step by step and Java's own history violates the
  property too: "reproduced on rocketmq-broker X.Y.Z (P)";
- ``holds``: the replay agrees and neither side violates P (a finding's trace replayed on a
  release the model says has fixed it): "agrees with rocketmq-broker X.Y.Z; P holds there";
- ``agrees``: the replay agrees, but Java's history is not checked for P (e.g. QUI-1 reads
  the merge buffer, which the harness does not report);
- ``not reproduced``: the replay agrees, the model violates P and Java's history does not: a
  model question;
- ``diverges``: the first step whose observations differ: a model question unless its
  divergence class is listed in ``EXPLAINED_DIVERGENCES`` (with its Java line);
- ``out of scope``: the harness cannot run a step of the trace (store retention, topic
  delete, a parked long poll, ...);
- ``not run``: the trace is not a POP trace of the unmutated model (push; a mutant; a model
  exception);
- ``unavailable``: no JDK / Maven / harness: the confirmation could not run;
- ``skipped``: the user asked for none (``--no-confirm``).

Verdicts are cached by trace digest (profile, mode, seed, config, schedule, mutant) +
release + a digest of the code both sides run (reference/, the checkers, the driver, the
lockstep replay and the Java harness), so a re-run of a campaign replays nothing that did
not change, and a changed model never reads a stale verdict.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from popverify.tools import PROJECT_ROOT, ToolError

if TYPE_CHECKING:
    from popverify.conformance.confirm import Verdict
    from popverify.conformance.lockstep import LockstepClient

# The properties Java's history is checked for (Lockstep feeds Java's observations to a
# PopChecker: deliveries, acks, changeInvisibleTime, revives, offsets; popverify/checker/pop.py).
JAVA_CHECKED: frozenset[str] = frozenset({"ALO-1", "ALO-2", "NSR-1", "INV-1", "OFF-1", "OFF-2", "CKM-1"})

# Divergence classes (popverify.conformance.confirm.divergence_class) that are explained, each
# with the Java line that explains it (spec/conformance.md "Divergence classes found"). A
# counterexample whose replay diverges in another class is a model question: verify fails.
EXPLAINED_DIVERGENCES: dict[str, str] = {}

# Statuses whose verdict says the model may be wrong: loud in every summary, a verify failure.
MODEL_QUESTION = ("diverges", "not reproduced")
# Statuses that mean a confirmation did run and compared the trace on Java.
RAN = ("reproduced", "holds", "agrees", "not reproduced", "diverges", "out of scope")
CACHE_VERSION = 1
# What a diverging value may take in a one-line verdict before it is cut.
_VALUE_CHARS = 120


@attrs.frozen
class Confirmation:
    """The verdict on one counterexample (or finding trace) for one property on one release."""

    status: str                 # see the module docstring
    text: str                   # the one line every summary shows
    property_id: str
    release: str | None = None
    steps: int | None = None    # steps compared on both sides
    step: int | None = None     # the diverging / out-of-scope step
    key: str | None = None      # the diverging observable
    divergence_class: str | None = None
    explained: str | None = None  # why an explained divergence class is not a model question
    java_violations: tuple[str, ...] = ()
    cached: bool = False

    @property
    def model_question(self) -> bool:
        """A diverging replay (class not explained) or a violation Java's history does not have."""
        return self.status in MODEL_QUESTION and self.explained is None

    def to_json(self) -> dict[str, Any]:
        """JSON form (``model_question`` included for readers of summary.json)."""
        out = attrs.asdict(self)
        out["java_violations"] = list(self.java_violations)
        out["model_question"] = self.model_question
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Confirmation":
        """Inverse of ``to_json``."""
        fields = {f.name for f in attrs.fields(cls)}
        kept = {k: v for k, v in data.items() if k in fields}
        kept["java_violations"] = tuple(kept.get("java_violations") or ())
        return cls(**kept)


def skipped(property_id: str, why: str = "--no-confirm") -> Confirmation:
    """The confirmation of a run whose user asked for none."""
    return Confirmation("skipped", f"skipped ({why})", property_id)


def not_run(property_id: str, why: str) -> Confirmation:
    """A counterexample the harness has no counterpart for, before any JVM starts."""
    return Confirmation("not run", f"not run: {why}", property_id)


def _short(value: Any) -> str:
    text = json.dumps(value, sort_keys=True) if not isinstance(value, str) else value
    return text if len(text) <= _VALUE_CHARS else text[:_VALUE_CHARS - 3] + "..."


def from_verdict(verdict: "Verdict", property_id: str, cached: bool = False) -> Confirmation:
    """The confirmation of ``property_id`` from a lockstep verdict."""
    from popverify.conformance.confirm import divergence_class

    release = verdict.release
    common = {"property_id": property_id, "release": release, "steps": verdict.steps,
              "java_violations": tuple(verdict.java_violations), "cached": cached}
    if verdict.status == "diverges":
        cls = divergence_class(verdict)
        explained = EXPLAINED_DIVERGENCES.get(cls)
        text = (f"diverges at step {verdict.step} ({verdict.key}, model {_short(verdict.model)} vs java "
                f"{_short(verdict.java)}) on rocketmq-broker {release}")
        text += f" [explained: {explained}]" if explained else " [MODEL QUESTION]"
        return Confirmation("diverges", text, step=verdict.step, key=verdict.key, divergence_class=cls,
                            explained=explained, **common)
    if verdict.status == "out of scope":
        action = verdict.action[0] if verdict.action else "?"
        return Confirmation("out of scope", f"out of scope: {verdict.why} (step {verdict.step}, {action}) on "
                                            f"rocketmq-broker {release}", step=verdict.step, **common)
    if verdict.status != "agrees":
        raise ValueError(f"unknown lockstep verdict status {verdict.status!r}")
    if property_id in verdict.java_violations:
        return Confirmation("reproduced", f"reproduced on rocketmq-broker {release} ({property_id})", **common)
    if property_id not in JAVA_CHECKED:
        return Confirmation("agrees", f"agrees with rocketmq-broker {release} ({verdict.steps} steps); "
                                      f"{property_id} is not checked on Java's history", **common)
    if property_id in verdict.model_violations:
        return Confirmation("not reproduced", f"agrees with rocketmq-broker {release} ({verdict.steps} steps) but "
                                              f"{property_id} holds on Java's history [MODEL QUESTION]", **common)
    return Confirmation("holds", f"agrees with rocketmq-broker {release} ({verdict.steps} steps); {property_id} "
                                 f"holds there", **common)


# -- cache -------------------------------------------------------------------------------------

# What both sides of a lockstep replay run: a change to any of these may change a verdict.
_CODE_GLOBS = ("reference/**/*.py", "popverify/checker/**/*.py", "popverify/sim/**/*.py",
               "popverify/conformance/confirm.py", "popverify/conformance/lockstep.py",
               "popverify/conformance/push_lockstep.py",
               "popverify/conformance/lockstep_build.py", "popverify/mutants.py",
               "conformance/lockstep/pom.xml", "conformance/lockstep/src/**/*")


@functools.cache
def code_digest() -> str:
    """sha256 over the files a lockstep verdict depends on (paths and contents, in order)."""
    digest = hashlib.sha256()
    files = sorted({p for pattern in _CODE_GLOBS for p in PROJECT_ROOT.glob(pattern) if p.is_file()})
    for path in files:
        digest.update(str(path.relative_to(PROJECT_ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def trace_digest(spec: dict[str, Any]) -> str:
    """sha256 of what a replay runs: profile, mode, seed, config, schedule, mutant (not the
    recorded states, which the run derives)."""
    canonical = {"profile": spec["profile"], "mode": spec["mode"], "seed": spec["seed"],
                 "config": spec["config"].to_json(), "schedule": [a.to_json() for a in spec["schedule"]],
                 "mutant": spec.get("mutant")}
    return hashlib.sha256(json.dumps(canonical, sort_keys=True).encode()).hexdigest()


@attrs.define
class VerdictCache:
    """Lockstep verdicts on disk, one JSON file per (trace digest, release, model profile)."""

    folder: Path

    def _path(self, digest: str, release: str, profile: str) -> Path:
        return self.folder / f"{digest[:40]}-{profile}-{release}.json"

    def get(self, digest: str, release: str, profile: str) -> "Verdict | None":
        """The cached verdict, or None (absent, unreadable, or made by other code)."""
        from popverify.conformance.confirm import Verdict

        try:
            data = json.loads(self._path(digest, release, profile).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or data.get("version") != CACHE_VERSION or data.get("digest") != digest \
                or data.get("code") != code_digest():
            return None
        v = data["verdict"]
        return Verdict(v["profile"], v["release"], v["status"], v["steps"], step=v["step"], action=tuple(v["action"]),
                       key=v["key"], model=v["model"], java=v["java"], why=v["why"],
                       model_violations=tuple(v["model_violations"]), java_violations=tuple(v["java_violations"]))

    def put(self, digest: str, release: str, profile: str, verdict: "Verdict") -> None:
        """Store a verdict (atomically: a half-written file is never read as a verdict)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self._path(digest, release, profile)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"version": CACHE_VERSION, "digest": digest, "code": code_digest(),
                                   "verdict": verdict.to_json()}, sort_keys=True, indent=1) + "\n", encoding="utf-8")
        tmp.replace(path)


# -- the confirmer -----------------------------------------------------------------------------

class Confirmer:
    """Replays counterexamples on the lockstep harness, one JVM per release (started on first
    use, closed by ``close``), verdicts cached under ``cache`` (None: no cache).

    A harness that cannot start or dies (no JDK, no Maven, a failed build) makes this and every
    later confirmation ``unavailable`` with the reason; it is never reported as agreement."""

    def __init__(self, cache: Path | None, client_factory: Callable[[str], "LockstepClient"] | None = None,
                 progress: Callable[[str], None] = lambda _: None) -> None:
        self.cache = VerdictCache(cache) if cache is not None else None
        self._factory = client_factory
        self._clients: dict[str, LockstepClient] = {}
        self._unavailable: dict[str, str] = {}
        self.progress = progress
        self.replays = 0      # lockstep replays run (cache misses)
        self.cache_hits = 0

    def __enter__(self) -> "Confirmer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """End every harness JVM this confirmer started."""
        clients, self._clients = self._clients, {}
        for client in clients.values():
            client.close()

    @property
    def unavailable(self) -> dict[str, str]:
        """Release -> why its harness could not run (empty when every harness ran)."""
        return dict(self._unavailable)

    def _client(self, release: str) -> "LockstepClient":
        if release not in self._clients:
            if self._factory is not None:
                self._clients[release] = self._factory(release)
            else:
                from popverify.conformance.lockstep import LockstepClient

                self._clients[release] = LockstepClient(release)
        return self._clients[release]

    def verdict(self, spec: dict[str, Any], release: str | None = None,
                profile: str | None = None) -> tuple["Verdict | None", bool, str | None]:
        """(verdict, from cache, why unavailable) of replaying ``spec`` (a trace's run_spec)
        with the model of ``profile`` (default the trace's) against ``release`` (default the
        profile's release)."""
        from popverify.conformance.confirm import run_lockstep
        from popverify.conformance.lockstep import RELEASES

        profile = profile or spec["profile"]
        release = release or RELEASES[profile]
        digest = trace_digest(spec)
        if self.cache is not None:
            hit = self.cache.get(digest, release, profile)
            if hit is not None:
                self.cache_hits += 1
                return hit, True, None
        if release in self._unavailable:
            return None, False, self._unavailable[release]
        try:
            client = self._client(release)
            self.progress(f"confirm: replaying {len(spec['schedule'])} steps ({profile}) on rocketmq-broker {release}")
            if spec["mode"] == "push":  # popverify/conformance/push_lockstep.py (the broker's pull path)
                from popverify.conformance.push_lockstep import run_push_lockstep

                verdict = run_push_lockstep(profile, spec["seed"], spec["config"], spec["schedule"], client, release)
            else:
                verdict = run_lockstep(profile, spec["seed"], spec["config"], spec["schedule"], client,
                                       spec.get("mutant"), release=release)
        except ToolError as err:  # LockstepError is one: no JDK, no Maven, a build failure, a dead JVM
            why = str(err).strip().splitlines()[0][:300] if str(err).strip() else type(err).__name__
            self._unavailable[release] = why
            dead = self._clients.pop(release, None)
            if dead is not None:
                dead.kill()
            return None, False, why
        self.replays += 1
        if self.cache is not None:
            self.cache.put(digest, release, profile, verdict)
        return verdict, False, None

    def confirm(self, spec: dict[str, Any], property_id: str, release: str | None = None,
                profile: str | None = None) -> Confirmation:
        """The confirmation of ``property_id`` for one trace's run (see ``verdict``)."""
        why = scope_of(spec, property_id)
        if why is not None:
            return not_run(property_id, why)
        verdict, cached, unavailable = self.verdict(spec, release, profile)
        if verdict is None:
            return Confirmation("unavailable", f"unavailable: {unavailable}", property_id, release=release)
        return from_verdict(verdict, property_id, cached)

    def confirm_file(self, path: Path, property_id: str) -> Confirmation:
        """``confirm`` for an ITF trace file; a trace that cannot be read is ``not run``."""
        from popverify.sim.scenario import run_spec
        from popverify.trace.itf import TraceError, read_trace

        try:
            spec = run_spec(read_trace(path))
        except TraceError as err:
            return not_run(property_id, f"unreadable trace {path.name}: {err}")
        return self.confirm(spec, property_id)


def scope_of(spec: dict[str, Any], property_id: str) -> str | None:
    """Why a trace cannot be replayed on the harness at all (None when it can)."""
    if spec["mode"] not in ("pop", "push"):
        return f"a {spec['mode']} trace (no lockstep harness for that mode)"
    if spec.get("mutant"):
        return f"the counterexample of mutant {spec['mutant']} (the mutation exists only in the model)"
    if property_id == "MODEL-ERROR":
        return "a model exception (nothing on Java to compare it with)"
    return None  # every configuration is replayable (the last exclusion, start_offset, is replayed)


# Why a TLC counterexample is not replayed (spec/findings/README.md "TLC counterexamples").
TLC_NOT_RUN = ("a TLC counterexample is a behaviour of the abstract spec (abstract clock ticks, one queue, "
               "Revive acting on CK records without timer, revive topic or revive rounds): it has no concrete "
               "schedule to replay")


def tlc_confirmation(model: str, cfg_text: str, violated: str | None) -> Confirmation:
    """What a TLC counterexample's confirmation says: never replayed (``TLC_NOT_RUN``); for a
    negative check that names its finding (``Finding F6``, ``(finding F1)`` in the config's
    comment), the checked-in verdict of that finding's concrete minimal trace on the release
    of the config's ``Profile``."""
    import re

    from popverify.findings.finding_traces import checked_in_verdict, trace_path
    from reference.common.profile import RELEASES

    pid = (violated or "?").replace("_", "-")
    if not model.startswith("MCPopConsumption"):
        return not_run(pid, f"a counterexample of {model}, not of the POP broker (the lockstep harness replays POP "
                            f"broker schedules only)")
    comments = "\n".join(line for line in cfg_text.splitlines() if line.lstrip().startswith("\\*"))
    fids = sorted(set(re.findall(r"\b[Ff]inding (F\d+)\b", comments)))
    profile = re.search(r'Profile\s*=\s*"([^"]+)"', cfg_text)
    release = RELEASES.get(profile.group(1)) if profile else None
    if not fids or release is None:
        return not_run(pid, TLC_NOT_RUN + "; no finding named in the config, so nothing concrete confirms it")
    found = []
    for fid in fids:
        verdict = checked_in_verdict(fid, release)
        path = trace_path(fid, release)
        found.append(f"{fid}'s concrete minimal trace {path.relative_to(PROJECT_ROOT)} on rocketmq-broker {release}: "
                     f"{verdict or 'no checked-in verdict (popverify confirm --findings --update-spec)'}")
    return Confirmation("not run", f"not run: {TLC_NOT_RUN}; " + "; ".join(found), pid, release=release)


def confirm_entries(entries: Iterable[dict[str, Any]], confirmer: Confirmer | None,
                    skip_reason: str = "--no-confirm") -> dict[str, Any]:
    """Add ``confirmation`` to every campaign entry (popverify/findings/campaign.py) and return
    the campaign's confirmation summary: counts by status, model questions, unavailable
    releases, replays, cache hits and the seconds it took. ``confirmer`` None: every entry ``skipped``."""
    counts: dict[str, int] = {}
    questions: list[str] = []
    import time

    replays0, hits0 = (confirmer.replays, confirmer.cache_hits) if confirmer is not None else (0, 0)
    start = time.perf_counter()  # a figure for the summary; nothing in the model reads it
    for entry in entries:
        if confirmer is None:
            c = skipped(entry["property"], skip_reason)
        else:
            c = confirmer.confirm_file(Path(entry["trace"]), entry["property"])
        entry["confirmation"] = c.to_json()
        counts[c.status] = counts.get(c.status, 0) + 1
        if c.model_question:
            questions.append(f"{entry.get('signature', entry['property'])}: {c.text}")
    out: dict[str, Any] = {"statuses": counts, "model_questions": questions}
    if confirmer is None:
        out["skipped"] = skip_reason
    else:
        out.update(unavailable=confirmer.unavailable, replays=confirmer.replays - replays0,
                   cache_hits=confirmer.cache_hits - hits0, seconds=round(time.perf_counter() - start, 2))
    return out


def confirmation_text(entry: dict[str, Any]) -> str:
    """The confirmation line of a campaign entry (older summaries have none)."""
    c = entry.get("confirmation")
    if not isinstance(c, dict) or "text" not in c:
        return "not confirmed (the campaign predates confirmation on Java)"
    return str(c["text"])
