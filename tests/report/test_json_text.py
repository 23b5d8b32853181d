"""The JSON documents' text is orjson's and parses to ``json.dumps``'s values; ``_plain`` walks a
result as ``dataclasses`` would.

orjson writes a NaN or infinity as null where ``json.dumps(allow_nan=False)`` raised, so nothing
at run time stops a figure that came out NaN by mistake: the real documents below (the sample
result, which holds every figure a test can have, an analysis and comparisons of example sets
with tool and LLM calls) are walked, every value checked to be a plain JSON value and every
float finite, so that a figure path that starts producing NaN fails here.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sample_result import build_result as sample_result

from assay._json_text import json_text
from assay.api import analyze, compare
from assay.choices import Adjustment
from assay.judge import AnalysisResult, AnalyzeOptions
from assay.report import analysis_to_dict, render_json
from assay.report._json import _plain

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
from synthetic import generate  # noqa: E402


class _Colour(enum.StrEnum):
    RED = "red"


def _finite_plain(value: Any, where: str = "$") -> None:
    """Every value in ``value`` is a plain JSON value, every float finite."""
    kind = type(value)
    if kind is dict:
        for key, item in value.items():
            assert type(key) is str, f"{where}: key {key!r}"
            _finite_plain(item, f"{where}.{key}")
    elif kind is list:
        for number, item in enumerate(value):
            _finite_plain(item, f"{where}[{number}]")
    elif kind is float:
        assert math.isfinite(value), f"{where} is {value}: a figure no code turned into null"
    else:  # a StrEnum is its string to both encoders
        assert isinstance(value, str) or kind in (int, bool, type(None)), f"{where}: {kind}"


def _same_values(result: AnalysisResult) -> None:
    document = analysis_to_dict(result)
    _finite_plain(document)
    text = render_json(result)
    assert text.endswith("}\n") and text.startswith('{\n  "schema": ')
    assert json.loads(text) == json.loads(json.dumps(document, indent=2, allow_nan=False))


@pytest.fixture(scope="module")
def example_v2(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example agent's v2 with a planted retry (the README's comparison)."""
    out = tmp_path_factory.mktemp("v2") / "traces"
    agent = str(ROOT / "examples" / "agent.py")
    args = ["--out", str(out), "--trials", "30", "--version", "v2", "--variant", "retry"]
    subprocess.run([sys.executable, agent, *args], check=True, capture_output=True, timeout=120)
    return out


@pytest.fixture(scope="module")
def tool_sets(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two versions of 40 cases × 5 trials that make tool and LLM calls."""
    root = tmp_path_factory.mktemp("tools")
    for version, seed in (("v1", 1), ("v2", 2)):
        generate(root / version, trials=200, spans_per_trial=8, tests=40, seed=seed)
    return root / "v1", root / "v2"


def test_the_sample_result_parses_to_json_dumps_values() -> None:
    _same_values(sample_result())


def test_real_documents_parse_to_json_dumps_values(
    traces: Path, example_v2: Path, tool_sets: tuple[Path, Path]
) -> None:
    _same_values(analyze(str(traces)).result)
    _same_values(compare(str(traces), str(example_v2)).result)
    for adjust in Adjustment:
        options = AnalyzeOptions(adjust=adjust)
        _same_values(compare(*map(str, tool_sets), options).result)


def test_the_text_differs_from_json_dumps_as_documented() -> None:
    document = {"id": "größe", "small": 8.3e-08, "ratio": 2.18e-05, "n": 3}
    text = json_text(document)
    assert '"größe"' in text and "8.3e-8" in text  # json.dumps: "gr\u00f6\u00dfe", 8.3e-08
    assert text.endswith("}\n") and "\n  " in text
    assert json.loads(text) == document


def test_a_nan_is_null_and_what_orjson_refuses() -> None:
    assert json.loads(json_text({"x": math.nan, "y": -math.inf})) == {"x": None, "y": None}
    # Keys that are not strings: as json.dumps writes them.
    keyed = {1: "a", 2.5: "b", None: "c", False: "d"}
    assert json.loads(json_text(keyed)) == json.loads(json.dumps(keyed))
    # An integer past 64 bits: the standard library's encoder, the same values exactly.
    big = {"n": 2**70, "m": -(2**64), "x": math.nan, "id": "größe", "list": [1.5, (2, math.inf)]}
    text = json_text(big)
    assert json.loads(text) == {
        "n": 2**70,
        "m": -(2**64),
        "x": None,
        "id": "größe",
        "list": [1.5, [2, None]],
    }
    assert text.endswith("}\n") and '"größe"' in text
    # numpy's scalars (a plan's figures): the numbers they hold, as json.dumps wrote a float64.
    held = {"x": np.float64(2.5), "n": np.int64(3), "b": np.bool_(True), "nan": np.float64("nan")}
    assert json.loads(json_text(held)) == {"x": 2.5, "n": 3, "b": True, "nan": None}
    assert json.loads(json_text({**held, "big": 2**70}))["x"] == 2.5
    with pytest.raises(TypeError, match="not JSON serializable"):
        json_text({"x": object()})


def test_plain_is_the_dataclass_walk_it_replaces() -> None:
    # The cached field names give what dataclasses.fields gives, in order, for every type.
    def reference(value: Any) -> Any:
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return {f.name: reference(getattr(value, f.name)) for f in dataclasses.fields(value)}
        if isinstance(value, enum.Enum):
            return value.value
        if isinstance(value, dict):
            return {str(k): reference(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [reference(v) for v in value]
        if isinstance(value, float) and not math.isfinite(value):
            return None
        if hasattr(value, "item") and callable(value.item):
            return reference(value.item())
        return value

    result = sample_result()
    for test in result.tests:
        for value in (test, test.flakiness, test.scores, test.tool_consistency, test.usage):
            assert repr(_plain(value)) == repr(reference(value))
    odd = [math.nan, np.float64(2.5), np.int64(4), _Colour.RED, (1, math.inf), {3: None}, type]
    assert repr(_plain(odd)) == repr(reference(odd))


def test_the_cli_writes_the_same_text_to_a_file_and_to_stdout(
    traces: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from assay.cli import run

    expected = analyze(str(traces)).to_json()
    out = tmp_path / "out.json"
    run(["analyze", str(traces), "--format", "json", "-o", str(out)])
    assert out.read_text(encoding="utf-8") == expected
    capsys.readouterr()
    run(["analyze", str(traces), "--format", "json"])
    assert capsys.readouterr().out == expected
