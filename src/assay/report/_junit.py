"""JUnit XML: the report every CI system (GitHub, GitLab, Jenkins, Azure) reads.

Layout, valid against Jenkins' ``junit-10.xsd`` (the schema the common readers accept)::

    <testsuites name="assay" tests= failures= errors="0">
      <testsuite name="<test id>" tests="1" failures= errors="0" skipped=>
        <properties> every statistic of the test, flattened: pass_rate, ci.low, ... </properties>
        <testcase classname="assay" name="<test id>">
          <failure message="FAIL: ...">figures, reasons</failure> | <skipped message=.../>
          <system-out> (when not failed) the figures and reasons in words </system-out>
          <system-err> the data-quality warnings that concern the test, if any </system-err>
        </testcase>
      </testsuite>
    </testsuites>

One ``<testsuite>`` per test because the schema allows ``<properties>`` on a testsuite but not
on a testcase; that keeps each test's statistics next to it and the file valid.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from typing import Any

from assay.judge import CASE_KINDS, AnalysisResult, TestResult, Verdict
from assay.report import _text as tx
from assay.report._json import SCHEMA, test_to_dict
from assay.report._suites import comparison_lines, figure_lines, shown_suites, suite_name

_SKIP_KEYS = {"test_id", "notes"}
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _flatten(value: Any, prefix: str, out: dict[str, str]) -> None:
    """Nested dicts as dotted names; lists as JSON; nulls left out."""
    if value is None:
        return
    if isinstance(value, Mapping):
        for key, inner in value.items():
            _flatten(inner, f"{prefix}.{key}" if prefix else str(key), out)
    elif isinstance(value, list | tuple):
        if value:
            out[prefix] = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    elif isinstance(value, bool):
        out[prefix] = "true" if value else "false"
    elif isinstance(value, float):
        out[prefix] = repr(value)
    else:
        out[prefix] = str(value)


def test_properties(test: TestResult) -> dict[str, str]:
    """A test's figures as JUnit property name → value (``ci.low``, ``flakiness.score``, ...).

    The names are those of the test's ``assay.analysis/v1`` object, flattened with dots.
    """
    out: dict[str, str] = {}
    for key, value in test_to_dict(test).items():
        if key not in _SKIP_KEYS:
            _flatten(value, key, out)
    return out


test_properties.__test__ = False  # type: ignore[attr-defined]


def _details(test: TestResult) -> str:
    return "\n".join(tx.explanation_lines(test)) + "\n"


def _warnings(result: AnalysisResult, test_id: str) -> str | None:
    """The data-quality warnings about this test or the whole set, one a line (None if none)."""
    lines = [
        f"warning: {finding.message}"
        for finding in result.data_quality.warnings
        if not finding.tests or test_id in finding.tests
    ]
    return "\n".join(lines) + "\n" if lines else None


def _suite_cases(
    parent: ET.Element, result: AnalysisResult, inconclusive_ok: bool
) -> tuple[int, int]:
    """One ``testsuite`` per suite shown, first in the document: (test cases, failures).

    The suite verdicts that count in the exit code (docs/cli.md) are test cases: the comparison
    with a baseline, and the threshold verdict when a suite threshold was asked for.
    """
    cases = failures = 0
    at = 0
    for suite in shown_suites(result):
        judged = [("pass rate over cases", suite.verdict, suite.reason)] if suite.counts else []
        if suite.comparison is not None:
            judged.append(
                ("against the baseline", suite.comparison.verdict, suite.comparison.reason)
            )
        if not judged:
            continue  # reported elsewhere, but no test case: it decides nothing
        element = ET.Element("testsuite", name=f"suite {suite_name(suite)}")
        parent.insert(at, element)
        at += 1
        failed_here = 0
        for what, verdict, reason in judged:
            case = ET.SubElement(element, "testcase", classname="assay.suite", name=what)
            inconclusive = verdict is Verdict.INCONCLUSIVE
            failed = verdict is Verdict.FAIL or (inconclusive and not inconclusive_ok)
            message = f"{verdict.value}: {reason}"
            if failed:
                ET.SubElement(
                    case, "failure", message=message, type=f"assay.{verdict.value}"
                ).text = "\n".join([*figure_lines(suite), *comparison_lines(suite)]) + "\n"
            else:
                ET.SubElement(case, "system-out").text = message + "\n"
            failed_here += failed
        element.set("tests", str(len(judged)))
        element.set("failures", str(failed_here))
        element.set("errors", "0")
        element.set("skipped", "0")
        cases += len(judged)
        failures += failed_here
    return cases, failures


def render_junit(result: AnalysisResult, *, inconclusive_ok: bool = False) -> str:
    """The analysis as JUnit XML text.

    Args:
        result: The analysis result.
        inconclusive_ok: Report INCONCLUSIVE tests as ``<skipped>`` (the build stays green, as
            with ``--inconclusive-ok``) instead of ``<failure>``.

    Returns:
        The XML document, UTF-8, with declaration and a trailing newline.
    """
    root = ET.Element("testsuites", name="assay")
    total_failures = 0
    # A case fails the report only when its verdict counts in the exit code (docs/cli.md):
    # with a suite comparison deciding, the others are skipped with the verdict said.
    counted = {c.what for c in result.decision.counted if c.kind in CASE_KINDS}
    for test in result.tests:
        verdict = test.verdict
        inconclusive = verdict is Verdict.INCONCLUSIVE
        counts = test.test_id in counted
        failed = counts and (verdict is Verdict.FAIL or (inconclusive and not inconclusive_ok))
        skipped = (inconclusive and inconclusive_ok) or (not counts and verdict is not Verdict.PASS)
        total_failures += failed
        suite = ET.SubElement(
            root,
            "testsuite",
            name=test.test_id,
            tests="1",
            failures=str(int(failed)),
            errors="0",
            skipped=str(int(skipped)),
        )
        properties = ET.SubElement(suite, "properties")
        ET.SubElement(properties, "property", name="schema", value=SCHEMA)
        for name, value in test_properties(test).items():
            ET.SubElement(properties, "property", name=name, value=value)
        case = ET.SubElement(suite, "testcase", classname="assay", name=test.test_id)
        message = tx.headline(test)
        if not counts and verdict is not Verdict.PASS:
            message = f"{message} (reported, not counted: the suite comparison decides)"
        if failed:
            ET.SubElement(
                case, "failure", message=message, type=f"assay.{verdict.value}"
            ).text = _details(test)
        else:
            if skipped:
                ET.SubElement(case, "skipped", message=message)
            ET.SubElement(case, "system-out").text = _details(test)
        warned = _warnings(result, test.test_id)
        if warned:
            ET.SubElement(case, "system-err").text = warned
    suites = _suite_cases(root, result, inconclusive_ok)
    total_failures += suites[1]
    root.set("tests", str(len(result.tests) + suites[0]))
    root.set("failures", str(total_failures))
    root.set("errors", "0")
    ET.indent(root)
    # Characters XML 1.0 cannot carry at all (e.g. a stray \x07 in a status message).
    body = _NOT_XML.sub("", ET.tostring(root, encoding="unicode"))
    return '<?xml version="1.0" encoding="utf-8"?>\n' + body + "\n"
