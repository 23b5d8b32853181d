"""assay plan --paired: from assumed variances and from a pilot set, equal to the library."""

from __future__ import annotations

import json

import numpy as np
import pytest

import assay.instrument as ai
from assay.cli import run
from assay.stats import pilot_variances, plan_adaptive_paired, plan_paired


def test_assumed_variances_match_the_library(capsys) -> None:
    args = ["plan", "--paired", "--delta", "0.05", "--between-sd", "0.1", "--within-var", "0.3"]
    assert run([*args, "--trials-per-case", "1,3", "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    expected = plan_paired(0.05, between_case_sd=0.1, within_case_var=0.3, trials_per_case=[1, 3])
    assert document["kind"] == "paired" and document["design"] == "fixed"
    assert [o["cases"] for o in document["options"]] == [o.cases for o in expected.options]
    assert document["pilot"] is None
    assert run(args) == 0
    out = capsys.readouterr().out
    assert "design: fixed" in out and f"{expected.options[0].cases:>8,}" in out


@pytest.mark.slow
def test_the_adaptive_design_is_the_library_simulation(capsys) -> None:
    args = ["plan", "--paired", "--delta", "0.2", "--between-sd", "0.1", "--within-var", "0.3"]
    assert run([*args, "--trials-per-case", "3", "--design", "adaptive", "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    expected = plan_adaptive_paired(
        0.2, between_case_sd=0.1, within_case_var=0.3, trials_per_case=[3]
    )
    assert document["design"] == "adaptive"
    assert document["options"][0]["cases"] == expected.options[0].cases
    assert document["options"][0]["mean_cases_at_delta"] == expected.options[0].mean_cases_at_delta
    assert run([*args, "--trials-per-case", "3", "--design", "adaptive"]) == 0
    out = capsys.readouterr().out
    assert "design: adaptive" in out and "mean cases at delta" in out


@pytest.mark.parametrize(
    "args, message",
    [
        (["--delta", "0.05"], "--pilot SET or --between-sd and --within-var"),
        (["--between-sd", "0.1"], "needs both --between-sd and --within-var"),
        (["--between-sd", "0.1", "--within-var", "0.3", "--trials-per-case", "0,2"], "at least 1"),
    ],
)
def test_bad_options_are_one_line_and_exit_2(args: list[str], message: str, capsys) -> None:
    assert run(["plan", "--paired", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_pilot_of_two_versions_measures_the_variances(parquet_sink, capsys) -> None:
    rng = np.random.default_rng(1)
    cases, k = 12, 4
    counts = {}
    for case in range(cases):
        p = rng.uniform(0.3, 0.9)
        counts[f"case-{case}"] = (int(rng.binomial(k, p)), int(rng.binomial(k, p - 0.05)))
    for case, (base, current) in counts.items():
        for version, passes in (("v1", base), ("v2", current)):
            for i in range(k):
                with ai.trial(case, index=i, agent_version=version) as t:
                    t.check("ok", i < passes)
    path = str(parquet_sink.flush())
    args = ["plan", "--paired", "--pilot", path, "--pilot-baseline-version", "v1"]
    assert run([*args, "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    ordered = [counts[f"case-{c}"] for c in range(cases)]
    expected = pilot_variances(
        [b for b, _ in ordered], [k] * cases, [c for _, c in ordered], [k] * cases
    )
    assert document["pilot"]["within_case_var"] == pytest.approx(expected.within_case_var)
    assert document["pilot"]["between_case_sd"] == pytest.approx(expected.between_case_sd)
    assert document["pilot"]["versions"] == 2
    assert run(["plan", "--paired", "--pilot", path, "--pilot-baseline-version", "v1"]) == 0
    assert "measured on" in capsys.readouterr().out
    assert run(["plan", "--paired", "--pilot", path]) == 2
    assert "--pilot-baseline-version" in capsys.readouterr().err


def test_pilot_of_one_version_assumes_no_between_case_spread(parquet_sink, capsys) -> None:
    counts = {"a": (3, 4), "b": (1, 4), "c": (4, 4), "d": (2, 3)}
    for case, (passes, trials) in counts.items():
        for i in range(trials):
            with ai.trial(case, index=i) as t:
                t.check("ok", i < passes)
    path = str(parquet_sink.flush())
    assert run(["plan", "--paired", "--pilot", path, "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    expected = pilot_variances([3, 1, 4, 2], [4, 4, 4, 3])
    assert document["pilot"]["within_case_var"] == pytest.approx(expected.within_case_var)
    assert document["between_case_sd"] == 0 and document["pilot"]["versions"] == 1
    assert run(["plan", "--paired", "--pilot", path]) == 0
    assert "assumed 0" in capsys.readouterr().out
