"""Read JaCoCo's XML report (``jacococli report --xml``): the LINE and BRANCH counters of
every class, and of every method for the targets measured per method, and the per-line
counters of each source file (``<sourcefile>``'s ``<line nr mi ci mb cb>``) that the
in-scope figures subtract excluded lines with."""

from __future__ import annotations

import bisect
import re
import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from pathlib import Path

import attrs

from popverify.tools import ToolError, java_executable, run_child


@attrs.frozen
class Counter:
    """A JaCoCo counter: items covered and missed (lines or branch outcomes)."""

    covered: int = 0
    missed: int = 0

    @property
    def total(self) -> int:
        return self.covered + self.missed

    def percent(self) -> float | None:
        """Covered share in percent, one decimal; None when there is nothing to cover (a class
        without branches)."""
        return None if self.total == 0 else round(100.0 * self.covered / self.total, 1)

    def __add__(self, other: "Counter") -> "Counter":
        return Counter(self.covered + other.covered, self.missed + other.missed)

    def to_json(self) -> dict[str, int | float | None]:
        return {"covered": self.covered, "total": self.total, "percent": self.percent()}


@attrs.frozen
class Measured:
    """Line and branch counters of one class or method."""

    line: Counter
    branch: Counter

    def __add__(self, other: "Measured") -> "Measured":
        return Measured(self.line + other.line, self.branch + other.branch)


def _counters(element: ET.Element) -> Measured:
    found = {c.get("type"): Counter(int(c.get("covered", "0")), int(c.get("missed", "0")))
             for c in element.findall("counter")}
    return Measured(found.get("LINE", Counter()), found.get("BRANCH", Counter()))


def line_measured(element: ET.Element) -> Measured:
    """One ``<line>``'s counters: the line is covered when one of its instructions ran."""
    instructions = int(element.get("mi", "0")) + int(element.get("ci", "0"))
    covered = int(element.get("ci", "0")) > 0
    line = Counter(int(covered), int(not covered)) if instructions else Counter()
    return Measured(line, Counter(int(element.get("cb", "0")), int(element.get("mb", "0"))))


@attrs.frozen
class Report:
    """Per-class counters, and per-(class, method name) counters summed over overloads."""

    classes: dict[str, Measured]
    methods: dict[tuple[str, str], Measured]
    # per class, the methods with code none of which ran, as "name:firstLine" (source order)
    unreached: dict[str, tuple[str, ...]] = attrs.Factory(dict)
    # per class, its source file ("package/File.java"); per source file, each line's counters
    # (all classes of the file: an inner class's lines are in its outer class's file)
    source_of: dict[str, str] = attrs.Factory(dict)
    lines: dict[str, dict[int, Measured]] = attrs.Factory(dict)
    # per class, (first line, name) of each method with code, in source order: which class and
    # method a line range of the source file belongs to
    method_lines: dict[str, tuple[tuple[int, str], ...]] = attrs.Factory(dict)


def method_at(report: Report, source: str) -> Callable[[int], tuple[str, str] | None]:
    """For a source file of ``report``, the (class, method) a line number belongs to: the
    method of any class of the file whose first line is the last one at or above it (None
    above the file's first method). An inner class's lines are its own class's."""
    starts = sorted((first, cls, name) for cls, methods in report.method_lines.items()
                    if report.source_of.get(cls) == source for first, name in methods)
    firsts = [s[0] for s in starts]

    def owner(nr: int) -> tuple[str, str] | None:
        at = bisect.bisect_right(firsts, nr) - 1
        return (starts[at][1], starts[at][2]) if at >= 0 else None
    return owner


def parse(xml_path: Path) -> Report:
    """Parse a JaCoCo XML report; a ToolError when it is not one."""
    try:
        root = ET.parse(xml_path).getroot()
    except ET.ParseError as err:
        raise ToolError(f"{xml_path} is not a JaCoCo XML report: {err}") from err
    if root.tag != "report":
        raise ToolError(f"{xml_path} is not a JaCoCo XML report (root <{root.tag}>)")
    classes: dict[str, Measured] = {}
    methods: dict[tuple[str, str], Measured] = {}
    unreached: dict[str, tuple[str, ...]] = {}
    source_of: dict[str, str] = {}
    lines: dict[str, dict[int, Measured]] = {}
    method_lines: dict[str, tuple[tuple[int, str], ...]] = {}
    for package in root.iter("package"):
        folder = package.get("name", "")
        for source in package.findall("sourcefile"):
            lines[f"{folder}/{source.get('name', '')}"] = {int(e.get("nr", "0")): line_measured(e)
                                                           for e in source.findall("line")}
        for cls in package.findall("class"):
            name = cls.get("name", "")
            classes[name] = _counters(cls)
            source_of[name] = f"{folder}/{cls.get('sourcefilename', '')}"
            method_lines[name] = tuple(sorted((int(m.get("line", "0")), m.get("name", ""))
                                              for m in cls.findall("method") if m.get("line")))
            never: list[tuple[int, str]] = []
            for method in cls.findall("method"):
                key = (name, method.get("name", ""))
                measured = _counters(method)
                methods[key] = methods[key] + measured if key in methods else measured
                if measured.line.total > 0 and measured.line.covered == 0:
                    line = int(method.get("line", "0") or 0)
                    never.append((line, f"{key[1]}:{line}"))
            unreached[name] = tuple(label for _, label in sorted(never))
    return Report(classes, methods, unreached, source_of, lines, method_lines)


# javap -l -p: a class header at column 0, a member at two spaces, its line table entries below it
_JAVAP_CLASS = re.compile(r"^\S.*\b(?:class|interface|enum)\s+([\w.$]+)")
_JAVAP_MEMBER = re.compile(r"^  \S.*?([\w.$]+)\((?:[^)]*)\)[^;]*;$|^  static \{\};$")
_JAVAP_LINE = re.compile(r"^\s+line (\d+): \d+$")


def line_methods(class_files: Sequence[Path], classes: Sequence[str]) -> dict[str, dict[int, str]]:
    """For each of ``classes`` (JVM names) in the jars ``class_files``, the method each source
    line is code of, from the class file's LineNumberTable (``javap -l -p``): exact where the
    report's method first lines are not (an inline lambda's lines are its own method's, the
    lines after it its enclosing method's). A line two methods share (a one-line lambda in its
    caller's line) goes to the method with the fewest lines. A ToolError when javap fails."""
    if not classes:
        return {}
    javap = str(Path(java_executable()).resolve().parent / "javap")
    cmd = [javap, "-l", "-p", "-cp", ":".join(map(str, class_files)), *(c.replace("/", ".") for c in classes)]
    try:
        proc = run_child(cmd, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as err:
        raise ToolError(f"javap failed on RocketMQ's classes: {err}") from err
    if proc.returncode != 0:
        raise ToolError(f"javap failed (exit {proc.returncode}): {(proc.stdout + proc.stderr)[-600:]}")
    spans: dict[str, dict[str, set[int]]] = {}
    cls = method = None
    for text in proc.stdout.splitlines():
        if (header := _JAVAP_CLASS.match(text)) is not None:
            cls, method = header.group(1).replace(".", "/"), None
            spans.setdefault(cls, {})
        elif cls is not None and (member := _JAVAP_MEMBER.match(text)) is not None:
            name = member.group(1) or "<clinit>"
            method = "<init>" if name.replace(".", "/") == cls else name
        elif cls is not None and method is not None and (entry := _JAVAP_LINE.match(text)) is not None:
            spans[cls].setdefault(method, set()).add(int(entry.group(1)))
    out: dict[str, dict[int, str]] = {}
    for name, methods in spans.items():
        owner: dict[int, str] = {}
        # fewest lines last, so the innermost method of a shared line wins
        for method, lines in sorted(methods.items(), key=lambda m: (-(max(m[1]) - min(m[1])), m[0])):
            owner.update(dict.fromkeys(lines, method))
        out[name] = owner
    return out
