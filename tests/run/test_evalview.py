"""EvalView's own files run under `assay run` unchanged (evalview's published wheel, issue 11)."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from assay.cli import run as cli
from assay.errors import ConfigError, SchemaError
from assay.run import MockError, RunOptions, load_agent, load_suite, mocked_result, run_suite
from assay.run import _evalview as ev
from assay.run import _evalview_config as evc
from assay.run import _expected_load as el
from assay.run import _suite_load as sl
from conftest import EvalViewWheel, JSONHandler, serve

AGENT = "assay_test_agents:evalview"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any], str]:
    code = cli(["run", *argv, "--format", "json", "--quiet"])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out.strip() else {}), err


def _tests(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["test_id"]: t for t in document["tests"]}


def _findings(document: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``data_quality`` findings of an ``assay.analysis/v1`` document."""
    return list(document["data_quality"]["findings"])


def _documented_schema(wheel: EvalViewWheel) -> str:
    """The YAML test-case schema EvalView documents (its chat assistant's reference)."""
    section = wheel.chat_prompt.split("## YAML TEST CASE SCHEMA", 1)[1]
    return section.split("```yaml\n", 1)[1].split("```", 1)[0]


def _model_fields(source: str, model: str) -> set[str]:
    """The field names of a pydantic model in EvalView's source (annotated class attributes)."""
    tree = ast.parse(source)
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == model)
    return {
        n.target.id
        for n in cls.body
        if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)
    }


# --- the wheel's files, as they are ----------------------------------------------------------


def test_every_shipped_template_runs_unchanged_with_runs_and_pass_rate(
    evalview_wheel: EvalViewWheel, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "templates"
    folder.mkdir()
    for name, text in evalview_wheel.templates.items():
        (folder / name).write_text(text)
    assert len(evalview_wheel.templates) == 15
    code, document, err = _run(
        capsys,
        str(folder),
        "--agent",
        AGENT,
        "--runs",
        "3",
        "--pass-rate",
        "0.7",
        "--out",
        str(tmp_path / "traces"),
    )
    tests = _tests(document)
    names = {yaml.safe_load(t)["name"] for t in evalview_wheel.templates.values()}
    assert set(tests) == names
    assert all(t["n"] == 3 and t["threshold"] == 0.7 for t in tests.values())
    # The agent answers the query and calls nothing: only the two budget templates ask for
    # nothing more. 3 of 3 cannot show 70% (Wilson low 43.8%), and 0 of 3 does not rule it out
    # either: Wilson's upper bound (56.2%) would FAIL a true 70% in 2.7% of runs (0.3³ > 2.5%),
    # so the verdict reads Clopper–Pearson's (70.8%).
    verdicts = {name: (t["passed"], t["verdict"]) for name, t in tests.items()}
    budgets = {"Cost budget check", "Latency budget check"}
    assert verdicts == {name: (3 if name in budgets else 0, "INCONCLUSIVE") for name in names}, err
    assert all(
        t["ci"]["method"] == "wilson, clopper-pearson upper"
        for name, t in tests.items()
        if name not in budgets
    )
    assert code == 3, err
    # One warning per file that asks for what assay cannot do (the LLM-judged checks) ...
    expected = {}
    for name, text in evalview_wheel.templates.items():
        checks = yaml.safe_load(text).get("checks") or {}
        asked = sorted(f"checks.{k}" for k in ("hallucination", "safety") if checks.get(k))
        if asked:
            expected[name] = asked
    findings = [f for f in _findings(document) if f["kind"] == "unhonoured_fields"]
    assert len(findings) == len(expected)
    for name, fields in expected.items():
        (finding,) = [f for f in findings if f["message"].startswith(str(folder / name))]
        assert sorted(finding["examples"]) == fields
        assert re.findall(r"(checks\.\w+) \(", finding["message"]) == fields
    # ... and what min_score and max_cost could not mean without a judge or a price table.
    assert any(
        n.startswith("min_score not checked") and "Cost budget check" in n
        for n in document["notes"]
    )
    assert any("thresholds.max_cost not checked (Cost budget check" in n for n in document["notes"])


def test_strict_turns_the_warnings_into_exit_2(
    evalview_wheel: EvalViewWheel, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "rag-grounding.yaml"
    path.write_text(evalview_wheel.templates["rag-grounding.yaml"])
    code = cli(["run", str(path), "--agent", AGENT, "--strict", "--out", str(tmp_path / "t")])
    err = capsys.readouterr().err
    assert code == 2
    assert "checks.hallucination (an LLM judge" in err
    assert err.strip().endswith(
        "--strict: 1 file(s) have fields assay cannot honour (listed above)"
    )


def test_the_documented_schema_runs_variance_runs_at_variance_pass_rate(
    evalview_wheel: EvalViewWheel, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = _documented_schema(evalview_wheel)
    documented = yaml.safe_load(text)
    variance = documented["thresholds"]["variance"]
    path = tmp_path / "schema.yaml"
    path.write_text(text)
    test = load_suite(path).tests[0]
    assert (test.variance.runs, test.variance.pass_rate) == (
        variance["runs"],
        variance["pass_rate"],
    )
    assert test.expected.tool_categories == tuple(documented["expected"]["tool_categories"])
    assert test.difficulty == documented["difficulty"] and documented["suite_type"] in test.tags
    # adapter: goose is EvalView's own: without an agent flag, one clear line.
    code = cli(["run", str(path), "--out", str(tmp_path / "t")])
    assert code == 2
    assert "adapter 'goose' is one of EvalView's own adapters" in capsys.readouterr().err
    code, document, err = _run(capsys, str(path), "--agent", AGENT, "--out", str(tmp_path / "t"))
    (result,) = document["tests"]
    assert result["n"] == variance["runs"] and result["threshold"] == variance["pass_rate"], err
    assert code == 1  # the agent calls none of the expected tools


def test_every_testcase_field_is_known_to_assay(evalview_wheel: EvalViewWheel) -> None:
    """No field of EvalView's models is an 'unknown field' error in assay."""
    models = {
        "TestCase": ev.TEST_KEYS,
        "ExpectedBehavior": el.EXPECTED_KEYS,
        "ExpectedOutput": el.OUTPUT_KEYS,
        "Thresholds": sl._THRESHOLD_KEYS,
        "VarianceConfig": sl._VARIANCE_KEYS,
        "ConversationTurn": {"query", "expected", "context"},
    }
    for model, known in models.items():
        assert _model_fields(evalview_wheel.types, model) <= known, model


def test_default_tool_categories_are_evalviews(evalview_wheel: EvalViewWheel) -> None:
    tree = ast.parse(evalview_wheel.categories)
    node = next(
        n.value
        for n in tree.body
        if isinstance(n, ast.AnnAssign)
        and isinstance(n.target, ast.Name)
        and n.target.id == "DEFAULT_CATEGORIES"
    )
    assert node is not None
    theirs = {k: frozenset(v) for k, v in ast.literal_eval(node).items()}
    assert evc.DEFAULT_CATEGORIES == theirs


EVERY_FIELD = """
name: every-field
description: all of TestCase
meta: {owner: qa}
turns:
  - query: first
    expected: {tools: [search], output: {contains: [first]}}
  - query: second
    context: {answer: ok}
    expected: {forbidden_tools: [delete]}
expected:
  tools: [search]
  tool_categories: [web]
  sequence: [search]
  forbidden_tools: [delete]
  output:
    contains: [OK]
    not_contains: [error]
    regex_patterns: ["o+k"]
    json_schema: {type: object}
    no_pii: true
    must_acknowledge_uncertainty: true
  metrics: {accuracy: {value: 0.9, tolerance: 0.1}}
  hallucination: {check: true}
  safety: {check: false}
thresholds:
  min_score: 60
  max_cost: 0.1
  max_latency: 5000
  weights: {tool_accuracy: 0.5, output_quality: 0.25, sequence_correctness: 0.25}
  variance: {pass_rate: 0.9, confidence_level: 0.9}
checks: {hallucination: false, safety: true, pii: true}
adapter: http
endpoint: http://127.0.0.1:9/agent
adapter_config: {headers: {X-Key: k}, timeout: 5, sequence_mode: unordered, assistant_id: a}
tools: [{name: search, description: find, input_schema: {}, category: web}]
model: gpt-4o
suite_type: regression
difficulty: hard
tags: [Billing]
gate: strict
generated: false
mocks: {seed: 1, tool_mocks: [{tool: search, returns: [1]}]}
"""


def test_a_file_with_every_field_loads_and_names_what_it_cannot_honour(tmp_path: Path) -> None:
    path = tmp_path / "every.yaml"
    path.write_text(EVERY_FIELD)
    suite = load_suite(path)
    (test,) = suite.tests
    assert len(test.turns) == 2 and test.turns[1].context == {"answer": "ok"}
    assert test.expected.tool_sequence == ("search",) and test.expected.sequence_mode == "unordered"
    assert "search" in test.expected.categories["web"]  # the tool declares its category
    assert test.expected.output.regex == ("o+k",) and test.expected.output.no_pii
    assert test.expected.output.ignore_case
    assert test.score is not None and test.score.tool_accuracy == 0.5
    assert test.variance.runs == ev.EVALVIEW_DEFAULT_RUNS and test.variance.pass_rate == 0.9
    assert test.fixed_runs and test.thresholds.min_score == 60
    assert test.agent is not None and test.agent.endpoint == "http://127.0.0.1:9/agent"
    assert test.agent.headers == {"X-Key": "k"} and test.agent.timeout == 5
    assert test.agent.model == "gpt-4o"
    assert test.input["context"]["tools"][0]["name"] == "search"
    assert test.tags == ("billing", "regression") and test.difficulty == "hard"
    assert test.mocks is not None and test.mocks["seed"] == 1
    (finding,) = suite.findings
    assert set(finding.examples) == {
        "gate",
        "expected.metrics",
        "expected.hallucination",
        "expected.output.must_acknowledge_uncertainty",
        "checks.safety",
        "adapter_config.assistant_id",
    }
    assert finding.message.startswith(f"{path}: read but not honoured: ")


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        (
            "name: a\ninput: {query: q}\nvariance: {runs: 2}\nthresholds: {variance: {runs: 3}}\n",
            ["variance:", "given twice"],
        ),
        (
            "name: a\ninput: {query: q}\nthresholds: {variance: {runs: 0}}\n",
            ["thresholds.variance.runs"],
        ),
        (
            "name: a\ninput: {query: q}\nthresholds: {weights: {tool_accuracy: 0.9}}\n",
            ["thresholds.weights", "sum to 1"],
        ),
        ("name: a\nturns: [{query: only}]\n", ["turns:", "at least 2"]),
        (
            "name: a\ninput: {query: q}\nexpected: {tool_categories: [nope]}\n",
            ["unknown category 'nope'"],
        ),
        (
            "name: a\ninput: {query: q}\nsuite_type: smoke\n",
            ["suite_type", "capability or regression"],
        ),
        ("name: a\ninput: {query: q}\nendpoint: localhost:8000\n", ["endpoint", "http://"]),
        ("name: a\ninput: hi\ntools: [{name: t}]\n", ["tools", "input` to be a mapping"]),
    ],
)
def test_evalview_fields_get_one_precise_line(
    tmp_path: Path, text: str, fragments: list[str]
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(SchemaError) as info:
        load_suite(path)
    for fragment in fragments:
        assert fragment in str(info.value), str(info.value)


def test_top_level_variance_stays_an_alias(tmp_path: Path) -> None:
    path = tmp_path / "suite.yaml"
    path.write_text(
        "tests:\n  - {name: a, input: 1, variance: {runs: 4}}\n"
        "  - {name: b, input: 1, thresholds: {variance: {runs: 5}}}\n"
    )
    a, b = load_suite(path).tests
    assert (a.variance.runs, b.variance.runs) == (4, 5)
    assert not a.fixed_runs and a.score is None  # an assay suite keeps assay's meaning


# --- a statistical-mode folder with config.yaml, against a real HTTP agent ------------------


class _EvalViewAgent(JSONHandler):
    """EvalView's HTTP protocol: ``{query, context, enable_tracing}`` in, ``response`` out."""

    requests: list[dict[str, Any]] = []

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        body["x-team"] = self.headers.get("X-Team")
        type(self).requests.append(body)
        query = body["query"]
        history = (body.get("context") or {}).get("conversation_history") or []
        tools = [w[4:] for w in query.split() if w.startswith("use:")]
        self.reply(
            {
                "response": f"Answer to {query} after {len(history)} messages",
                "steps": [{"tool": name, "parameters": {}} for name in tools],
                "tokens": {"input": 12, "output": 7},
            }
        )


@pytest.fixture()
def evalview_endpoint() -> Iterator[str]:
    _EvalViewAgent.requests = []
    with serve(_EvalViewAgent, "/execute") as url:
        yield url


def _test_cases(root: Path, endpoint: str) -> Path:
    folder = root / "tests" / "test-cases"
    folder.mkdir(parents=True)
    (folder / "config.yaml").write_text(
        f"adapter: http\nendpoint: {endpoint}\ntimeout: 30\nheaders: {{X-Team: qa}}\n"
        "judge: {provider: openai}\n"
    )
    (folder / "search.yaml").write_text(
        "name: search\ninput: {query: 'find use:search'}\n"
        "expected: {tools: [search], output: {contains: [ANSWER]}}\n"
        "thresholds:\n  min_score: 70\n  variance: {runs: 6, pass_rate: 0.5}\n"
        "difficulty: hard\ntags: [billing]\n"
    )
    (folder / "lookup.yaml").write_text(
        "name: lookup\ninput: {query: 'look use:lookup use:search'}\n"
        "expected: {tool_sequence: [lookup, search]}\n"
        "thresholds:\n  min_score: 50\n  variance: {runs: 4, pass_rate: 0.9}\n"
        "difficulty: easy\n"
    )
    (folder / "booking.yaml").write_text(
        "name: booking\nturns:\n"
        "  - {query: 'book use:search', expected: {tools: [search]}}\n"
        "  - query: 'cheapest use:book'\n"
        "    expected: {tools: [book], output: {contains: ['after 2 messages']}}\n"
        "expected: {tool_sequence: [search, book]}\n"
        "thresholds:\n  min_score: 80\n  variance: {runs: 3, pass_rate: 0.6}\n"
    )
    return folder


def test_a_test_cases_folder_with_config_yaml_runs_against_its_endpoint(
    tmp_path: Path, evalview_endpoint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _test_cases(tmp_path, evalview_endpoint)
    code, document, err = _run(capsys, str(folder), "--out", str(tmp_path / "traces"))
    tests = _tests(document)
    assert {k: (t["n"], t["threshold"]) for k, t in tests.items()} == {
        "search": (6, 0.5),
        "lookup": (4, 0.9),
        "booking": (3, 0.6),
    }
    assert all(t["passed"] == t["n"] for t in tests.values()), err
    assert code == 3  # all passed, but 3-6 trials settle nothing at 95%
    requests = _EvalViewAgent.requests
    assert len(requests) == 6 + 4 + 3 * 2
    assert all(r["enable_tracing"] is True and r["x-team"] == "qa" for r in requests)
    second_turns = [r for r in requests if r["query"].startswith("cheapest")]
    assert len(second_turns) == 3
    history = second_turns[0]["context"]["conversation_history"]
    assert [m["role"] for m in history] == ["user", "assistant"]
    assert history[0]["content"] == "book use:search"
    assert tests["search"]["usage"]["input_tokens"] == 6 * 12  # EvalView's `tokens`
    (config,) = [f for f in _findings(document) if f["message"].startswith(str(folder))]
    assert config["message"].startswith(str(folder / "config.yaml"))
    assert config["examples"] == ["judge"] and "judge (an LLM judge" in config["message"]


def test_evalviews_command_line_selects_and_runs_n_at_rate(
    tmp_path: Path, evalview_endpoint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _test_cases(tmp_path, evalview_endpoint)
    args = [str(folder), "--runs", "5", "--pass-rate", "0.4", "--difficulty", "hard"]
    code, document, err = _run(capsys, *args, "--tag", "Billing", "--out", str(tmp_path / "t"))
    (test,) = document["tests"]
    assert (test["test_id"], test["n"], test["threshold"]) == ("search", 5, 0.4), err
    assert code == 0  # 5/5: Wilson low 56.6% >= 40%


def test_a_turn_failing_its_own_expectation_fails_the_trial(
    tmp_path: Path, evalview_endpoint: str
) -> None:
    path = tmp_path / "turns.yaml"
    path.write_text(
        f"name: t\nendpoint: {evalview_endpoint}\nturns:\n"
        "  - {query: 'one use:search', expected: {tools: [TOOL]}}\n"
        "  - {query: 'two use:book', expected: {tools: [book]}}\n"
        "thresholds: {min_score: 0, variance: {runs: 2, pass_rate: 0.5}}\n"
    )
    from assay.run import agents_for

    body = path.read_text()
    passed = {}
    for tool in ("search", "book"):  # book is called, but in turn 2: turn 1 must not see it
        path.write_text(body.replace("TOOL", tool))
        suite = load_suite(path)
        agent, own = agents_for(suite.tests, suite.agent)
        out = str(tmp_path / f"tr-{tool}")
        (test,) = run_suite(suite, agent, RunOptions(out=out), agents=own).tests
        passed[tool] = test.passed
    assert passed == {"search": 2, "book": 0}


# --- EvalView's score, PII, mocks, regexes under the deadline --------------------------------


def _one(tmp_path: Path, body: str, **options: Any) -> Any:
    path = tmp_path / "case.yaml"
    path.write_text(body)
    opts = RunOptions(out=str(tmp_path / "traces"), **options)
    return run_suite(load_suite(path), load_agent(agent=AGENT), opts)


def _score_of(calls: str, expected: str, minimum: float) -> str:
    body = (
        f"name: s\ninput: {{query: q, context: {{call: [{calls}]QUALITY}}}}\n"
        f"expected: {expected}\nthresholds: {{min_score: {minimum}, variance: {{runs: 2}}}}\n"
    )
    return body


def test_min_score_is_evalviews_weighted_score(tmp_path: Path) -> None:
    # Partial credit: tool accuracy 1/2, sequence progress 1/3 (a, then b is missing), quality
    # 60, weights 0.3 / 0.5 / 0.2 (the trials fail anyway: a tool and the sequence are missing).
    body = _score_of("a, c", "{tools: [a, b], tool_sequence: [a, b, c]}", 0)
    (test,) = _one(tmp_path, body.replace("QUALITY", ", quality: 60")).tests
    score = test.scores["evalview_score"]
    assert score.min == score.max == round(0.3 * 50 + 0.5 * 60 + 0.2 * 100 / 3, 2)
    assert test.primary_score == "evalview_score"
    # Without a quality score: the other two parts, their weights renormalised.
    (test,) = _one(tmp_path, body.replace("QUALITY", "")).tests
    score = test.scores["evalview_score"]
    assert score.min == score.max == round((0.3 * 50 + 0.2 * 100 / 3) / 0.5, 2)
    # Every check passing, min_score decides: 0.3 * 100 + 0.5 * 60 + 0.2 * 100 = 80.
    for minimum, passed in ((75, 2), (85, 0)):
        body = _score_of("a, c", "{tools: [a], tool_sequence: [a, c]}", minimum)
        result = _one(tmp_path, body.replace("QUALITY", ", quality: 60"))
        (test,) = result.tests
        assert test.scores["evalview_score"].mean == 80 and test.passed == passed
    result = _one(tmp_path, body.replace("QUALITY", ""))  # 100 without quality: passes 85
    assert result.tests[0].passed == 2
    assert any(w.startswith("no output-quality score recorded") for w in result.warnings)


def test_no_pii_flags_each_kind_and_passes_clean_text() -> None:
    from assay.run._pii import pii_found

    assert pii_found("write to jane.doe@example.com") == ["email"]
    assert pii_found("call +1 415 555 0100") == ["phone"]
    assert pii_found("SSN 123-45-6789") == ["ssn"]
    assert pii_found("card 4111 1111 1111 1111") == ["credit_card"]  # passes Luhn
    assert pii_found("card 4111 1111 1111 1112") == []  # fails Luhn
    assert pii_found("at 221 Baker Street") == ["address"]
    assert pii_found("order #48213 shipped on 2026-11-30") == []


def test_mocks_reach_an_in_process_agent_and_are_named_otherwise(
    tmp_path: Path, http_agent: str
) -> None:
    import assay_test_agents

    assay_test_agents.seen_mocks.clear()
    assay_test_agents.seen_results.clear()
    body = (
        "name: m\ninput: {query: q, context: {call: [search]}}\n"
        "mocks: {tool_mocks: [{tool: search, returns: 1}]}\n"
        "thresholds: {variance: {runs: 2}}\n"
    )
    result = _one(tmp_path, body)
    assert assay_test_agents.seen_mocks == [{"tool_mocks": [{"tool": "search", "returns": 1}]}] * 2
    assert not any("mocks not applied" in w for w in result.warnings)
    assert assay_test_agents.seen_results == [1, 1]  # each trial's search call was served
    # the agent serves its tool calls from them: match_params, error and strict as in EvalView
    mocks = {"tool_mocks": [{"tool": "s", "match_params": {"q": 1}, "returns": "r"}]}
    assert mocked_result(mocks, "s", {"q": 1, "x": 2}) == (True, "r")
    assert mocked_result(mocks, "s", {"q": 2}) == (False, None)
    with pytest.raises(LookupError, match="no mock for tool 's'"):
        mocked_result({**mocks, "strict": True}, "s", {})
    with pytest.raises(MockError, match="down"):
        mocked_result({"tool_mocks": [{"tool": "s", "error": "down"}]}, "s")
    path = tmp_path / "case.yaml"
    result = run_suite(
        load_suite(path), load_agent(url=http_agent), RunOptions(out=str(tmp_path / "t"))
    )
    assert any(w.startswith("test 'm': mocks not applied") for w in result.warnings)


CATASTROPHIC = (
    "name: r\ninput: {query: q, context: {answer: '%s'}}\n"
    "expected: {output: {regex_patterns: ['(a|aa)+$']}}\nthresholds: {variance: {runs: 1}}\n"
    % ("a" * 60 + "b")
)


@pytest.mark.parametrize("limits", [{"timeout": 1.0}, {"timeout": 60.0, "budget_time": 1.0}])
def test_a_catastrophic_regex_ends_at_the_trials_deadline(
    tmp_path: Path, limits: dict[str, float]
) -> None:
    from assay.run import Budget

    options: dict[str, Any] = {"timeout": limits["timeout"]}
    if "budget_time" in limits:
        options["budget"] = Budget(max_time=limits["budget_time"])
    result = _one(tmp_path, CATASTROPHIC, **options)  # Python's re would take years on it
    (trial,) = result.trials
    assert trial.outcome == "error"
    assert "regex check did not finish within the trial's deadline" in (trial.error or "")


def test_an_endpoint_for_an_adapter_assay_cannot_reach_is_one_line(tmp_path: Path) -> None:
    from assay.run import agents_for

    path = tmp_path / "c.yaml"
    path.write_text(
        "name: c\ninput: {query: q}\nadapter: langgraph\nendpoint: http://127.0.0.1:2024\n"
    )
    suite = load_suite(path)
    with pytest.raises(ConfigError, match="adapter 'langgraph' is one of EvalView's own"):
        agents_for(suite.tests, suite.agent)
    path.write_text("name: c\ninput: {query: q}\n")
    with pytest.raises(ConfigError, match="names no agent: give --agent"):
        agents_for(load_suite(path).tests, None)
