"""JUnit XML: golden files, a real consumer (junitparser), and the junit-10.xsd structure."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from junitparser import Failure, JUnitXml, Skipped
from sample_result import ESCAPED_ID, check_golden

from assay.judge import AnalysisResult
from assay.report import render_junit

# The element and attribute rules of Jenkins' junit-10.xsd (jenkinsci/xunit-plugin), the
# schema GitHub, GitLab and Jenkins readers accept: allowed attributes (required ones first).
_ATTRIBUTES = {
    "testsuites": (set(), {"name", "time", "tests", "failures", "errors"}),
    "testsuite": (
        {"name", "tests", "failures", "errors"},
        {"group", "time", "skipped", "timestamp", "hostname", "id", "package", "file", "log"}
        | {"url"},
    ),
    "properties": (set(), set()),
    "property": ({"name", "value"}, set()),
    "testcase": ({"name"}, {"time", "classname", "group"}),
    "failure": (set(), {"type", "message"}),
    "error": (set(), {"type", "message"}),
    "skipped": (set(), {"type", "message"}),
    "system-out": (set(), set()),
    "system-err": (set(), set()),
}
_CHILDREN = {
    "testsuites": {"testsuite"},
    "testsuite": {"testsuite", "properties", "testcase", "system-out", "system-err"},
    "properties": {"property"},
    "property": set(),
    "testcase": {"skipped", "error", "failure", "system-out", "system-err"},
    "failure": set(),
    "error": set(),
    "skipped": set(),
    "system-out": set(),
    "system-err": set(),
}


def assert_junit_schema(element: ET.Element) -> None:
    required, optional = _ATTRIBUTES[element.tag]
    assert required <= set(element.attrib), (element.tag, element.attrib)
    assert set(element.attrib) <= required | optional, (element.tag, element.attrib)
    for child in element:
        assert child.tag in _CHILDREN[element.tag], f"<{child.tag}> inside <{element.tag}>"
        assert_junit_schema(child)
    if element.tag == "testsuite":
        cases = element.findall("testcase")
        assert int(element.get("tests", "-1")) == len(cases)
        assert int(element.get("failures", "-1")) == sum(len(c.findall("failure")) for c in cases)
        assert int(element.get("skipped", "0")) == sum(len(c.findall("skipped")) for c in cases)


@pytest.mark.parametrize("inconclusive_ok", [False, True])
def test_golden(result: AnalysisResult, inconclusive_ok: bool) -> None:
    name = "junit_inconclusive_ok.xml" if inconclusive_ok else "junit.xml"
    check_golden(name, render_junit(result, inconclusive_ok=inconclusive_ok))


def test_golden_without_statistics(empty_result: AnalysisResult) -> None:
    check_golden("junit_bare.xml", render_junit(empty_result))


@pytest.mark.parametrize("inconclusive_ok", [False, True])
@pytest.mark.parametrize("fixture", ["result", "empty_result"])
def test_valid_against_junit_schema(
    fixture: str, inconclusive_ok: bool, request: pytest.FixtureRequest
) -> None:
    text = render_junit(request.getfixturevalue(fixture), inconclusive_ok=inconclusive_ok)
    root = ET.fromstring(text.encode("utf-8"))
    assert root.tag == "testsuites"
    assert_junit_schema(root)


def test_read_by_junitparser(result: AnalysisResult) -> None:
    xml = JUnitXml.fromstring(render_junit(result))
    suites = {suite.name: suite for suite in xml}
    assert set(suites) == {t.test_id for t in result.tests}
    assert xml.tests == 4
    # FAIL, and both INCONCLUSIVE tests, fail the build without --inconclusive-ok.
    assert xml.failures == 3

    fail_case = next(iter(suites["checkout-flow"]))
    (failure,) = fail_case.result
    assert isinstance(failure, Failure)
    assert failure.type == "assay.FAIL"
    assert failure.message.startswith("FAIL: pass rate dropped, 90.0% (27/30) → 40.0% (12/30)")
    assert "regression FAIL: baseline 90.0% (27/30) → now 40.0%" in (failure.text or "")
    assert "threshold 80.0%" in failure.message
    assert "2 error trials" in failure.message
    assert "one-sided boschloo p = 2.2e-05 < 0.05" in failure.message
    assert "tool path varies: 2 distinct sequences in 30 trials" in (failure.text or "")

    properties = {p.name: p.value for p in suites["checkout-flow"].properties()}
    assert properties["verdict"] == "FAIL"
    assert properties["errors"] == "2"
    checkout = result.tests[0]
    assert checkout.interval and checkout.flakiness and checkout.regression
    assert float(properties["ci.low"]) == checkout.interval.low
    assert properties["threshold"] == "0.8"
    assert properties["pass_at_k.3"] == "0.81"
    assert float(properties["flakiness.score"]) == checkout.flakiness.score
    assert properties["flakiness.category"] == checkout.flakiness.category
    assert float(properties["regression.p_value"]) == checkout.regression.p_value
    assert "pass_hat_k.5" not in properties  # nulls are left out

    passing = next(iter(suites["greeting"]))
    assert passing.is_passed
    assert "PASS" in (passing.system_out or "")

    escaped = next(iter(suites[ESCAPED_ID]))
    assert escaped.name == ESCAPED_ID
    assert isinstance(escaped.result[0], Failure)


def test_inconclusive_ok_skips(result: AnalysisResult) -> None:
    xml = JUnitXml.fromstring(render_junit(result, inconclusive_ok=True))
    outcomes = {}
    for suite in xml:
        (case,) = list(suite)
        outcomes[case.name] = [type(r) for r in case.result]
    assert outcomes == {
        "checkout-flow": [Failure],
        "flaky-backend": [Skipped],
        "greeting": [],
        ESCAPED_ID: [Skipped],
    }
    assert xml.failures == 1


def test_control_characters_do_not_break_the_xml(result: AnalysisResult) -> None:
    import dataclasses

    odd = dataclasses.replace(result.tests[2], test_id="bell\x07test", notes=("nul\x00 here",))
    text = render_junit(dataclasses.replace(result, tests=(odd,)))
    root = ET.fromstring(text.encode("utf-8"))
    assert root.find("testsuite").get("name") == "belltest"  # type: ignore[union-attr]
