"""In-scope coverage: the out-of-scope declaration (popverify/coverage/scope.py) subtracted line
by line from JaCoCo's per-line counters, checked against the releases' own classes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from popverify.coverage import jacoco, nonlive, scope, tables
from popverify.coverage.measure import rows
from popverify.coverage.targets import RELEASES, TARGETS, Target
from popverify.coverage.xmlreport import parse
from popverify.tools import PROJECT_ROOT, ToolError

# X (lines 3-12) holds an inner class X$In (lines 6-8); X#get is lines 10-12
XML = """<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<report name="r"><package name="a">
<class name="a/X" sourcefilename="X.java">
<method name="run" desc="()V" line="3"><counter type="LINE" missed="1" covered="2"/>
<counter type="BRANCH" missed="3" covered="1"/></method>
<method name="get" desc="()V" line="10"><counter type="LINE" missed="1" covered="1"/>
<counter type="BRANCH" missed="1" covered="1"/></method>
<counter type="LINE" missed="2" covered="3"/><counter type="BRANCH" missed="4" covered="2"/></class>
<class name="a/X$In" sourcefilename="X.java">
<method name="go" desc="()V" line="6"><counter type="LINE" missed="1" covered="0"/>
<counter type="BRANCH" missed="2" covered="0"/></method>
<counter type="LINE" missed="1" covered="0"/><counter type="BRANCH" missed="2" covered="0"/></class>
<sourcefile name="X.java">
<line nr="3" mi="0" ci="2" mb="1" cb="1"/><line nr="4" mi="3" ci="0" mb="2" cb="0"/><line nr="5" mi="0" ci="1" mb="0" cb="0"/>
<line nr="6" mi="2" ci="0" mb="2" cb="0"/>
<line nr="10" mi="0" ci="1" mb="1" cb="1"/><line nr="11" mi="4" ci="0" mb="0" cb="0"/>
</sourcefile></package></report>"""


def _report(tmp_path: Path):
    path = tmp_path / "r.xml"
    path.write_text(XML)
    return parse(path)


def test_in_scope_subtracts_the_excluded_lines_of_the_class_only(tmp_path: Path) -> None:
    report = _report(tmp_path)
    assert report.lines["a/X.java"][4].branch.missed == 2 and report.source_of["a/X$In"] == "a/X.java"
    declared = (scope.Excluded("X", "9.9.9", 4, 5, "logging", "a log block"),
                scope.Excluded("X#get", "9.9.9", 11, 12, "metrics", "a stats call"))
    found = {r.label: r for r in rows(report, (Target("X", "broker", ("a/X",)),
                                               Target("X#get", "broker", ("a/X",), method="get")),
                                      "9.9.9", declared)}
    x = found["X"]
    assert (x.measured.branch.covered, x.measured.branch.total) == (2, 6)
    assert (x.in_scope.branch.covered, x.in_scope.branch.total) == (2, 4)  # line 4's two missed outcomes
    assert (x.in_scope.line.covered, x.in_scope.line.total) == (2, 3)  # lines 4 (missed) and 5 (covered)
    assert x.excluded_ranges == 1 and x.to_json()["in_scope"]["branch"]["percent"] == 50.0
    get = found["X#get"]
    assert (get.in_scope.line.covered, get.in_scope.line.total) == (1, 1) and get.in_scope.branch == get.measured.branch
    # another release, or no release, excludes nothing
    other = rows(report, (Target("X", "broker", ("a/X",)),), "1.0.0", declared)[0]
    assert other.in_scope == other.measured and other.excluded_ranges == 0


@pytest.mark.parametrize("declared, where", [
    (scope.Excluded("X", "9.9.9", 5, 6, "slave", "reaches the inner class"), r"line 6 is code of a/X\$In#go"),
    (scope.Excluded("X#get", "9.9.9", 3, 3, "slave", "outside the method"), r"line 3 is code of a/X#run"),
])
def test_a_range_reaching_into_other_code_is_refused(tmp_path: Path, declared: scope.Excluded, where: str) -> None:
    targets = (Target("X", "broker", ("a/X",)), Target("X#get", "broker", ("a/X",), method="get"))
    with pytest.raises(ToolError, match=where):
        rows(_report(tmp_path), targets, "9.9.9", (declared,))


def test_declaration_names_targets_releases_and_the_spec_rows_of_its_reasons() -> None:
    with pytest.raises(ValueError, match="unknown reason"):
        scope.Excluded("X", "5.0.0", 1, 2, "too hard", "not a reason the issue allows")
    labels = {t.label for t in TARGETS}
    assert {e.label for e in scope.OUT_OF_SCOPE} <= labels
    assert {e.release for e in scope.OUT_OF_SCOPE} == set(RELEASES.values())
    text = (PROJECT_ROOT / "spec" / "coverage.md").read_text(encoding="utf-8")
    table = text.split("## Out of scope", 1)[1]
    rows_md = {m.group(1).strip() for m in re.finditer(r"^\| ([^|]+) \|", table, re.M)}
    assert set(scope.REASONS.values()) <= rows_md


@pytest.mark.parametrize("release", sorted(set(RELEASES.values())))
def test_every_declared_range_is_code_of_its_row_in_the_release(tmp_path: Path, release: str) -> None:
    """Against the release's own jars (a report without execution data: every line missed): no
    range reaches into other code, and every range holds code (a stale one would exclude nothing)."""
    xml = jacoco.report_xml([], nonlive.classpath_jars(release), tmp_path / "r.xml")
    report = parse(xml)
    found = {r.label: r for r in rows(report, release=release)}
    for e in (e for e in scope.OUT_OF_SCOPE if e.release == release):
        row = found[e.label]
        assert row.java_class is not None, e
        lines = report.lines[report.source_of[row.java_class]]
        assert any(nr in lines for nr in range(e.first, e.last + 1)), f"no code in {e}"
        assert row.in_scope.line.total < row.measured.line.total
    assert "branches in scope" in tables.markdown({"v": {"release": release, "classes": [
        r.to_json() for r in found.values()]}})


def test_missed_branches_are_the_in_scope_lines_of_the_row_with_their_method(tmp_path: Path) -> None:
    from popverify.coverage.measure import MissedLine

    report = _report(tmp_path)
    declared = (scope.Excluded("X", "9.9.9", 4, 5, "logging", "a log block"),)
    targets = (Target("X", "broker", ("a/X",)), Target("X#get", "broker", ("a/X",), method="get"),
               Target("X$In", "broker", ("a/X$In",)))
    found = {r.label: r for r in rows(report, targets, "9.9.9", declared)}
    # line 4 is declared out of scope; line 6 is the inner class's, a row of its own
    assert found["X"].missed == (MissedLine(3, "run", 1, 2), MissedLine(10, "get", 1, 2))
    assert found["X#get"].missed == (MissedLine(10, "get", 1, 2),)
    assert found["X$In"].missed == (MissedLine(6, "go", 2, 2),)
    assert [m.line for m in rows(report, targets[:1], "1.0.0", declared)[0].missed] == [3, 4, 10]
    # the readable list: by method, line (missed/total), with the in-scope figure
    profile = {"profile": "v9", "release": "9.9.9", "classes": [r.to_json() for r in found.values()]}
    text = tables.uncovered_markdown(profile, "popverify coverage --profile v9")
    assert "## X (broker): in scope 50.0 % (2/4), 2 outcomes missed on 2 lines" in text
    assert "- run: 3 (1/2)\n- get: 10 (1/2)\n" in text
    assert "## X$In (broker): in scope 0.0 % (0/2), 2 outcomes missed on 1 lines\n\nNever run." in text
    # the spec keeps the table, not the per-line lists
    assert all("missed_branches" not in c for c in tables._stable(profile)["classes"])


def test_line_methods_come_from_the_class_files_line_tables() -> None:
    """5.5.0 PopMessageProcessor#processRequest hands its answer to a one-line lambda at 493 and
    goes on at 496: the lines after the lambda are processRequest's, not the lambda's (which
    the methods' first lines alone would say)."""
    from popverify.coverage.xmlreport import line_methods

    cls = "org/apache/rocketmq/broker/processor/PopMessageProcessor"
    owners = line_methods(nonlive.classpath_jars("5.5.0"), [cls, cls + "$QueueLockManager"])
    assert owners[cls][493] == "lambda$processRequest$3" and owners[cls][516] == "processRequest"
    assert owners[cls][116] == "<init>" and owners[cls][715] == "popMsgFromQueue"
    assert 1106 not in owners[cls] and owners[cls + "$QueueLockManager"][1106] == "unLock"
