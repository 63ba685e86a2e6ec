"""One coverage measurement: the harness JVMs of a profile's release run under JaCoCo, then
``jacococli report --xml`` against that release's jars, then one row per target class."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs

from popverify.coverage import jacoco, nonlive, scope
from popverify.coverage.targets import RELEASES, TARGETS, Target
from popverify.coverage.xmlreport import Counter, Measured, Report, line_methods, method_at, parse
from popverify.tools import ToolError


@attrs.frozen
class MissedLine:
    """One source line of a target with branches JaCoCo saw not taken, and its method."""

    line: int
    method: str
    missed: int  # branch outcomes never taken
    total: int  # branch outcomes of the line


def missed_lines(report: Report, java_class: str, method: str | None, excluded: Sequence[scope.Excluded],
                 owners: dict[int, str] | None = None) -> tuple[MissedLine, ...]:
    """The lines of ``java_class`` (of its ``method`` only, for a per-method row) outside the
    ``excluded`` ranges where a branch outcome was never taken, by line number. ``owners``
    (xmlreport.line_methods: each line's method from the class file) names the method; without
    it a line goes to the method whose first line is the last at or above it."""
    source = report.source_of.get(java_class)
    if source is None:
        return ()
    owner_of = method_at(report, source)
    out = []
    for nr, measured in sorted(report.lines.get(source, {}).items()):
        if not measured.branch.missed or any(e.first <= nr <= e.last for e in excluded):
            continue
        if owners is not None:
            owner = (java_class, owners[nr]) if nr in owners else None
        else:
            owner = owner_of(nr)
        if owner is None or owner[0] != java_class or (method is not None and owner[1] != method):
            continue  # another class of the file (an inner class is a row of its own), another method
        out.append(MissedLine(nr, owner[1], measured.branch.missed, measured.branch.total))
    return tuple(out)


@attrs.frozen
class Row:
    """Coverage of one target in one release; ``java_class`` None: absent from the release."""

    label: str
    side: str
    java_class: str | None
    method: str | None
    measured: Measured | None
    unreached: tuple[str, ...] = ()  # methods of a whole-class target none of whose lines ran
    # ``measured`` without the lines declared out of scope (popverify/coverage/scope.py)
    in_scope: Measured | None = None
    excluded_ranges: int = 0
    # in-scope lines with a missed branch, in line order: what is left to reach
    missed: tuple[MissedLine, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"label": self.label, "side": self.side, "class": self.java_class, "method": self.method,
                "present": self.measured is not None, "unreached_methods": list(self.unreached),
                "missed_branches": [attrs.asdict(m) for m in self.missed],
                "line": None if self.measured is None else self.measured.line.to_json(),
                "branch": None if self.measured is None else self.measured.branch.to_json(),
                "in_scope": None if self.in_scope is None else {
                    "line": self.in_scope.line.to_json(), "branch": self.in_scope.branch.to_json(),
                    "excluded_ranges": self.excluded_ranges}}


def rows(report: Report, targets: Sequence[Target] = TARGETS, release: str | None = None,
         out_of_scope: Sequence[scope.Excluded] = scope.OUT_OF_SCOPE,
         owners: dict[str, dict[int, str]] | None = None) -> list[Row]:
    """One row per target: the first of its classes the report knows (the release's jars had
    it), measured whole or for the target's method only, and in scope: without the lines
    ``out_of_scope`` declares for ``release`` (none when ``release`` is None); with its in-scope
    lines of missed branches, named by ``owners`` (per class, each line's method) if given."""
    out = []
    for target in targets:
        present = next((c for c in target.classes if c in report.classes), None)
        measured: Measured | None = None
        if present is not None:
            if target.method is None:
                measured = report.classes[present]
            else:
                # a method the class lacks reads 0 of 0, never silently the whole class
                measured = report.methods.get((present, target.method), Measured(Counter(), Counter()))
        unreached = report.unreached.get(present, ()) if present is not None and target.method is None else ()
        excluded = scope.for_target(target.label, release, out_of_scope) if release else ()
        kept = None if present is None or measured is None else \
            scope.in_scope(report, present, target.method, measured, excluded)
        missed = () if present is None else \
            missed_lines(report, present, target.method, excluded, None if owners is None else owners.get(present, {}))
        out.append(Row(target.label, target.side, present, target.method, measured, unreached, kept, len(excluded),
                       missed))
    return out


def target_line_methods(report: Report, jars: Sequence[Path]) -> dict[str, dict[int, str]]:
    """Each source line's method, per target class the report has (xmlreport.line_methods)."""
    present = sorted({c for t in TARGETS for c in t.classes if c in report.classes})
    return line_methods(jars, present)


def measure_profile(profile: str, out: Path, cases: int, seed: int,
                    lockstep: Callable[[str, str, Sequence[str]], dict[str, Any]] | None = None,
                    conformance: bool = True, use_agent: bool = True,
                    progress: Callable[[str], None] = lambda _: None,
                    push: Callable[[str, str, Sequence[str]], dict[str, Any]] | None = None) -> dict[str, Any]:
    """Coverage of ``profile``'s release: the non-live harness (``cases`` per check) unless
    ``conformance`` is False and, when ``lockstep`` (POP schedules) or ``push`` (push schedules)
    is given, the lockstep replay it runs (called with release, profile and the JVM options to
    launch with; each on a JVM of its own, with its own execution data). A lockstep harness
    that cannot run is recorded as that source's ``error`` (the caller fails the run), and the
    coverage of what did run is still reported. ``use_agent`` False runs the same work
    without JaCoCo (the benchmark's baseline) and measures nothing."""
    release = RELEASES[profile]
    out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    exec_files: list[Path] = []
    sources: dict[str, Any] = {}

    def options(name: str) -> list[str]:
        if not use_agent:
            return []
        destfile = out / f"{release}-{name}.exec"
        destfile.unlink(missing_ok=True)  # stale data from an earlier run would be counted
        exec_files.append(destfile)
        return [jacoco.agent_argument(destfile)]

    if conformance:
        progress(f"{profile} (rocketmq {release}): conformance checks under JaCoCo, {cases} cases each")
        sources["conformance"] = nonlive.run(release, profile, cases, seed, options("conformance"), progress)
    for name, replay in (("lockstep", lockstep), ("push", push)):
        if replay is None:
            continue
        progress(f"{profile} (rocketmq {release}): {name} replay under JaCoCo")
        from popverify.conformance.lockstep import LockstepError

        jvm_args = options(name)
        try:
            sources[name] = replay(release, profile, jvm_args)
        except LockstepError as err:
            sources[name] = {"harness": name, "error": str(err)}
            if use_agent and not exec_files[-1].is_file():
                exec_files.pop()  # the JVM never ran (or was killed): nothing to read
    result: dict[str, Any] = {"profile": profile, "release": release, "sources": sources}
    if use_agent:
        if not exec_files:
            errors = "; ".join(f"{name}: {s['error']}" for name, s in sources.items() if "error" in s)
            raise ToolError(f"no harness ran for {profile}, nothing to measure ({errors or 'no source'})")
        jars = nonlive.classpath_jars(release)
        report = parse(jacoco.report_xml(exec_files, jars, out / f"{release}.xml"))
        result["classes"] = [r.to_json() for r in rows(report, release=release, owners=target_line_methods(report, jars))]
    result["seconds"] = round(time.perf_counter() - start, 2)
    return result
