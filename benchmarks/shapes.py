"""Trace sets of the shapes real trace sets have, for ``bench_shapes.py`` (issue 22).

A shape says how many trials a set holds, how many tool and LLM calls a trial makes, how many
score / check / evaluation events it records, how deep its spans nest, how many tests there
are, and how the spans lie in files. Every trial is the root span of its own trace (the trial
contract); a trace's spans follow one template of positions, so a chunk of trials is made with
a few vectorised numpy/pyarrow calls and written with the project's own :class:`SpanWriter`
(promoted columns, attribute families in the footers), as a collector or importer writes.

* ``flat``: every span is a child of the trial span.
* ``nested``: trial → ``invoke_agent`` → ``chat`` → ``execute_tool`` (each tool call below the
  LLM call that asked for it), as pydantic-ai and LangGraph write.

Events: 1 is an ``assay.score`` on the trial span; 5 adds an ``assay.check`` and a
``gen_ai.evaluation.result`` on the trial span, one ``gen_ai.evaluation.result`` on its first
LLM call, and an evaluation log record (the collector's zero-length child span holding one
``gen_ai.evaluation.result`` event, ``assay.synthetic = "log"``).

Files: ``files`` files of equal row counts, cut at row boundaries regardless of traces (so a
trace may cross two files, as a collector rolling every minute cuts them); or, with
``buckets``, the writers' ``bucket=NN`` layout.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from synthetic import _attributes as synthetic_attributes
from synthetic import _hex as synthetic_hex

from assay.store import ATTRIBUTE_TYPE, EVENT_TYPE, SPANS_SCHEMA, SpanWriter, promoted_column

TRIAL, AGENT, LLM, TOOL, EVAL_LOG = range(5)
SCORE, CHECK, EVALUATION = range(3)
_TOOLS = 6
_MIX = np.uint64(0x9E3779B97F4A7C15)


@dataclass(frozen=True)
class Shape:
    """One trace-set shape; ``spans`` is the size aimed at (trials × spans per trial)."""

    name: str
    tools: int = 8
    events: int = 1
    trials: int = 1_000_000
    nested: bool = False
    tests: int = 20
    files: int = 20
    buckets: int | None = None
    spans: int = 20_000_000

    @property
    def spans_per_trial(self) -> int:
        return max(self.spans // self.trials, self.tools + 2 + self.nested + (self.events >= 5))

    def key(self) -> str:
        """A folder name that changes whenever the shape does."""
        return "-".join(f"{k}{v}" for k, v in asdict(self).items() if k != "name")


def _template(shape: Shape) -> tuple[np.ndarray, np.ndarray]:
    """Roles and parent positions of one trial's spans, in start order."""
    roles, parents = [TRIAL], [-1]
    top = 0
    if shape.nested:
        roles.append(AGENT)
        parents.append(0)
        top = 1
    logs = 1 if shape.events >= 5 else 0
    llms = shape.spans_per_trial - len(roles) - shape.tools - logs
    last_llm = top
    for i in range(max(llms, shape.tools)):
        if i < llms:
            roles.append(LLM)
            parents.append(top)
            last_llm = len(roles) - 1
        if i < shape.tools:
            roles.append(TOOL)
            parents.append(last_llm if shape.nested else top)
    if logs:
        roles.append(EVAL_LOG)
        parents.append(0)
    return np.array(roles), np.array(parents)


def _event_template(shape: Shape, roles: np.ndarray) -> list[tuple[int, int]]:
    """(position, kind) of every event of a trial, in row order."""
    if shape.events == 0:
        return []
    if shape.events == 1:
        return [(0, SCORE)]
    first_llm = int(np.flatnonzero(roles == LLM)[0])
    log = int(np.flatnonzero(roles == EVAL_LOG)[0])
    return sorted([(0, SCORE), (0, CHECK), (0, EVALUATION), (first_llm, EVALUATION), (log, 3)])


def _hex(values: np.ndarray) -> pa.Array:
    """16 lowercase hex digits of uint64 values."""
    return synthetic_hex(values, 8)


def _mix(values: np.ndarray) -> np.ndarray:
    return (values.astype(np.uint64) + np.uint64(1)) * _MIX


def _attributes(keys: list[pa.Array], values: list[pa.Array], rows: int) -> pa.Array:
    """A list<attribute> column of string attributes: attribute i of every row is
    ``keys[i]`` / ``values[i]``."""
    per_row = len(keys)
    order = pa.array(np.arange(rows * per_row).reshape(per_row, rows).T.ravel())
    flat_keys = pa.concat_arrays(keys).take(order)
    return synthetic_attributes(flat_keys, pa.concat_arrays(values).take(order), per_row, rows)


_EVENT_ATTRIBUTES = {
    SCORE: (("assay.score.name", "string"), ("assay.score.value", "double")),
    CHECK: (("assay.check.name", "string"), ("assay.check.passed", "bool")),
    EVALUATION: (
        ("gen_ai.evaluation.name", "string"),
        ("gen_ai.evaluation.score.value", "double"),
        ("gen_ai.evaluation.score.label", "string"),
    ),
}
_EVENT_NAMES = {SCORE: "assay.score", CHECK: "assay.check", EVALUATION: "gen_ai.evaluation.result"}


def _events(
    rng: np.random.Generator,
    template: list[tuple[int, int]],
    count: int,
    per_trial: int,
    start: np.ndarray,
) -> pa.Array:
    rows = count * per_trial
    if not template:
        return pa.nulls(rows, pa.list_(EVENT_TYPE))
    kinds = [EVALUATION if k == 3 else k for _, k in template]
    positions = np.array([p for p, _ in template])
    per_row = np.bincount(positions, minlength=per_trial)
    offsets = np.concatenate([[0], np.cumsum(np.tile(per_row, count))]).astype(np.int32)
    event_rows = (np.arange(count)[:, None] * per_trial + positions[None, :]).ravel()
    n = len(event_rows)
    layout = [a for k in kinds for a in _EVENT_ATTRIBUTES[k]]
    keys = pa.array(np.tile([key for key, _ in layout], count))
    types = np.tile([t for _, t in layout], count)
    labels = {
        "assay.score.name": "quality",
        "assay.check.name": "format_ok",
        "gen_ai.evaluation.name": "relevance",
        "gen_ai.evaluation.score.label": "relevant",
    }
    strings = np.tile([labels.get(key) for key, _ in layout], count)
    m = len(strings)
    doubles = np.where(types == "double", rng.random(m), np.nan)
    bools = rng.random(m) < 0.9
    attributes = pa.StructArray.from_arrays(
        [
            keys,
            pa.array(types),
            pa.array(strings, pa.string()),
            pa.array(bools, mask=types != "bool"),
            pa.nulls(m, pa.int64()),
            pa.array(doubles, mask=types != "double"),
            pa.nulls(m, pa.binary()),
            pa.nulls(m, pa.string()),
        ],
        fields=list(ATTRIBUTE_TYPE),
    )
    sizes = np.tile([len(_EVENT_ATTRIBUTES[k]) for k in kinds], count)
    attribute_offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int32)
    event = pa.StructArray.from_arrays(
        [
            pa.array(start[event_rows] + 500_000),
            pa.array(np.tile([_EVENT_NAMES[k] for k in kinds], count)),
            pa.ListArray.from_arrays(pa.array(attribute_offsets), attributes),
        ],
        fields=list(EVENT_TYPE),
    )
    assert len(event) == n
    return pa.ListArray.from_arrays(pa.array(offsets), event)


def _chunk(rng: np.random.Generator, shape: Shape, first: int, count: int) -> pa.Table:
    """Trials ``first … first+count-1`` of ``shape`` as one spans table."""
    roles_t, parents_t = _template(shape)
    per_trial = len(roles_t)
    rows = count * per_trial
    trial = np.arange(first, first + count)
    local = np.repeat(np.arange(count), per_trial)
    position = np.tile(np.arange(per_trial), count)
    role = roles_t[position]
    number = trial[local] * per_trial + position
    parent_pos = parents_t[position]
    start = 1_795_000_000_000_000_000 + trial[local] * 10**8 + position * 10**6
    end = start + rng.integers(10**5, 9 * 10**5, rows)
    end = np.where(role == TRIAL, start + per_trial * 10**6 + 10**5, end)
    end = np.where(role == AGENT, start + (per_trial - 1) * 10**6, end)
    end = np.where(role == EVAL_LOG, start, end)
    is_ = {r: pa.array(role == r) for r in (TRIAL, AGENT, LLM, TOOL, EVAL_LOG)}
    tool_no = np.cumsum(role == TOOL) - 1  # running count of tools; per trial below
    tool_no = tool_no - np.repeat(tool_no[::per_trial] + (role[::per_trial] == TOOL), per_trial)
    weights = 0.5 ** np.arange(_TOOLS)
    variant = rng.choice(_TOOLS, count, p=weights / weights.sum())[local]
    tool_index = (tool_no + variant * (tool_no % 5 == 0)) % _TOOLS
    tool_names = pa.array([f"tool_{i}" for i in range(_TOOLS)]).take(pa.array(tool_index))
    width = len(str(shape.tests - 1))
    tests = pa.array([f"test-{i:0{width}d}" for i in range(shape.tests)]).take(
        pa.array(trial % shape.tests)
    )
    passed = rng.random(count) < np.linspace(0.5, 1.0, shape.tests)[trial % shape.tests]
    test_ids = tests.take(pa.array(local))
    outcome = pa.array(np.where(passed, "pass", "fail")[local])
    null_str = pa.scalar(None, pa.string())
    no_int = pa.scalar(None, pa.int64())

    def where(mask: pa.Array, values: pa.Array | str) -> pa.Array:
        return pc.if_else(mask, values, null_str)

    operation = pa.array(
        np.array([None, "invoke_agent", "chat", "execute_tool", None], dtype=object)[role],
        pa.string(),
    )
    names = np.array(
        ["trial", "invoke_agent support", "chat gpt-4o", "", "gen_ai.evaluation.result"],
        dtype=object,
    )[role]
    name = pc.if_else(is_[TOOL], pc.binary_join_element_wise("execute_tool ", tool_names, ""), "")
    name = pc.if_else(is_[TOOL], name, pa.array(names, pa.string()))
    tokens = rng.integers(100, 2000, rows)
    has_parent = parent_pos >= 0
    parent_number = trial[local] * per_trial + np.maximum(parent_pos, 0)
    columns: dict[str, pa.Array] = {
        "trace_id": pc.binary_join_element_wise(
            _hex(_mix(trial[local]) >> np.uint64(7)), _hex(_mix(trial[local])), ""
        ),
        "span_id": _hex(_mix(number + 1)),
        "parent_span_id": pc.if_else(pa.array(has_parent), _hex(_mix(parent_number + 1)), null_str),
        "name": name,
        "kind": pa.array(np.where(role == LLM, "CLIENT", "INTERNAL")),
        "start_time_unix_nano": pa.array(start),
        "end_time_unix_nano": pa.array(end),
        "status_code": pa.array(["UNSET"] * rows),
        "service_name": pa.array(["agent"] * rows),
        "events": _events(rng, _event_template(shape, roles_t), count, per_trial, start),
    }
    promoted = {
        "assay.test.id": where(is_[TRIAL], test_ids),
        "assay.trial.outcome": where(is_[TRIAL], outcome),
        "gen_ai.operation.name": operation,
        "gen_ai.tool.name": where(is_[TOOL], tool_names),
        "gen_ai.request.model": where(is_[LLM], "gpt-4o"),
        "gen_ai.agent.name": where(is_[AGENT], "support"),
    }
    for attribute, values in promoted.items():
        columns[promoted_column(attribute)] = values
    columns[promoted_column("assay.trial.index")] = pc.if_else(
        is_[TRIAL], pa.array(trial[local] // shape.tests), no_int
    )
    columns[promoted_column("gen_ai.usage.input_tokens")] = pc.if_else(
        is_[LLM], pa.array(tokens), no_int
    )
    columns[promoted_column("gen_ai.usage.output_tokens")] = pc.if_else(
        is_[LLM], pa.array(tokens // 10), no_int
    )
    # Two attributes a span: what its promoted columns hold (the attribute list is the truth).
    first_key = pa.array(
        np.array(
            [
                "assay.test.id",
                "gen_ai.operation.name",
                "gen_ai.operation.name",
                "gen_ai.operation.name",
                "assay.synthetic",
            ],
            dtype=object,
        )[role],
        pa.string(),
    )
    second_key = pa.array(
        np.array(
            [
                "assay.trial.outcome",
                "gen_ai.agent.name",
                "gen_ai.request.model",
                "gen_ai.tool.name",
                "gen_ai.evaluation.name",
            ],
            dtype=object,
        )[role],
        pa.string(),
    )
    first_value = pc.if_else(is_[TRIAL], test_ids, pc.if_else(is_[EVAL_LOG], "log", operation))
    second_value = pc.coalesce(
        promoted["assay.trial.outcome"],
        promoted["gen_ai.agent.name"],
        promoted["gen_ai.request.model"],
        promoted["gen_ai.tool.name"],
        where(is_[EVAL_LOG], "relevance"),
    )
    columns["attributes"] = _attributes([first_key, second_key], [first_value, second_value], rows)
    return pa.table(
        {f.name: columns.get(f.name, pa.nulls(rows, f.type)) for f in SPANS_SCHEMA},
        schema=SPANS_SCHEMA,
    )


def generate(shape: Shape, out: Path, seed: int = 0) -> int:
    """Write ``shape`` into ``out`` (made fresh); return the number of spans written."""
    rng = np.random.default_rng(seed)
    per_trial = len(_template(shape)[0])
    total = shape.trials * per_trial
    if shape.buckets is not None:
        writer = SpanWriter(
            out, partition_by=(), row_group_rows=256 * 1024 // shape.buckets, buckets=shape.buckets
        )
    else:
        file_rows = -(-total // shape.files)
        group = min(256 * 1024, file_rows)
        writer = SpanWriter(out, partition_by=(), row_group_rows=group, max_file_bytes=1 << 40)
    chunk = max(1, 250_000 // per_trial)
    pending: list[pa.Table] = []
    held = 0
    for first in range(0, shape.trials, chunk):
        table = _chunk(rng, shape, first, min(chunk, shape.trials - first))
        if shape.buckets is not None:
            writer.write(table)
            continue
        pending.append(table)
        held += table.num_rows
        while held >= file_rows:
            whole = pa.concat_tables(pending)
            writer.write(whole.slice(0, file_rows))
            writer.flush()  # one file: cut at a row, wherever the traces lie
            rest = whole.slice(file_rows)
            pending, held = [rest], rest.num_rows
    for table in pending:
        writer.write(table)
    writer.flush()
    return total
