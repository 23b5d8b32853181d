"""EvalView's test-case schema: the fields assay reads with EvalView's meaning.

EvalView (``evalview`` 0.8.1, ``evalview/core/types.py``) writes one test per file, nests its
statistical mode under ``thresholds.variance``, names the agent with ``adapter`` /
``endpoint`` / ``adapter_config`` (or a ``config.yaml`` beside the tests) and scores a run as a
weighted sum of tool accuracy, output quality and sequence correctness. This module reads a
test's own fields (the folder's ``config.yaml`` is :mod:`assay.run._evalview_config`); every
field assay cannot honour is named in one finding per file, with what
honouring it would take (``docs/migrating.md``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from assay.run._evalview_config import (
    DEFAULT_CATEGORIES,
    JUDGE,
    EvalViewConfig,
    headers_of,
    merge_categories,
    model_of,
    url_of,
)
from assay.run._suite import AgentSpec
from assay.run._yaml import (
    Where,
    boolean,
    kind,
    label,
    mapping,
    number,
    strings,
)

EVALVIEW_DEFAULT_RUNS = 10
"""EvalView's ``VarianceConfig.runs`` default, used when ``thresholds.variance`` omits it."""


UNSUPPORTED_EXPECTED = {"metrics": "custom metric thresholds of EvalView's evaluators"}
UNSUPPORTED_EXPECTED_JUDGED = {"hallucination": JUDGE, "safety": JUDGE}
UNSUPPORTED_OUTPUT = {"must_acknowledge_uncertainty": JUDGE}
_UNSUPPORTED_TEST = {
    "gate": "EvalView's monitor confirmation gate; assay has no monitor",
    "generated": "EvalView's init-generated test quality filter",
    "timeout": "a per-test timeout; use --timeout",
}
_DESCRIPTIVE = {"description", "meta", "metadata", "category", "source_file"}
TEST_KEYS = {
    "id",
    "name",
    "input",
    "expected",
    "thresholds",
    "variance",
    "difficulty",
    "tags",
    "turns",
    "checks",
    "adapter",
    "endpoint",
    "adapter_config",
    "tools",
    "model",
    "suite_type",
    "mocks",
    *_UNSUPPORTED_TEST,
    *_DESCRIPTIVE,
}
"""Every field a test may have (assay's and EvalView's ``TestCase``)."""

_ADAPTER_CONFIG_HONOURED = {"headers", "timeout", "sequence_mode"}


@dataclass(frozen=True, slots=True)
class Extras:
    """EvalView's per-test fields beyond assay's schema."""

    agent: AgentSpec | None
    mocks: dict[str, Any] | None
    suite_type: str | None
    tools: tuple[dict[str, Any], ...]
    categories: dict[str, frozenset[str]]
    sequence_mode: str | None
    pii: bool


def note_unsupported(m: dict[str, Any], prefix: str, notes: dict[str, str]) -> None:
    """Add to ``notes`` every field of ``m`` that assay reads but cannot honour."""
    tables = {
        "": _UNSUPPORTED_TEST,
        "expected.": UNSUPPORTED_EXPECTED,
        "expected.output.": UNSUPPORTED_OUTPUT,
    }
    for key, why in tables.get(prefix, {}).items():
        if m.get(key) not in (None, False):
            notes[prefix + key] = why
    if prefix == "expected.":
        for key, why in UNSUPPORTED_EXPECTED_JUDGED.items():
            value = m.get(key)
            asked = value.get("check", False) if isinstance(value, dict) else value
            if asked not in (None, False):
                notes[prefix + key] = why


def _agent(
    m: dict[str, Any], w: Where, config: EvalViewConfig, notes: dict[str, str]
) -> AgentSpec | None:
    adapter = label(m["adapter"], w, "adapter") if m.get("adapter") is not None else None
    endpoint = m.get("endpoint")
    raw_config = m.get("adapter_config")
    cfg = mapping(raw_config, w, "adapter_config") if raw_config is not None else {}
    for key in cfg:
        if key not in _ADAPTER_CONFIG_HONOURED:
            notes[f"adapter_config.{key}"] = "a setting of EvalView's own adapters"
    if adapter is None and endpoint is None:
        return None
    adapter = adapter or (config.agent.adapter if config.agent else "http")
    if adapter == "http":
        url = url_of(endpoint, w, "endpoint") if endpoint is not None else None
    else:
        url = label(endpoint, w, "endpoint") if endpoint is not None else None
    timeout = (
        number(cfg["timeout"], w, "adapter_config.timeout", low=0.001) if "timeout" in cfg else None
    )
    return AgentSpec(
        adapter=adapter,
        endpoint=url or (config.agent.endpoint if config.agent else None),
        headers={
            **(config.agent.headers if config.agent else {}),
            **(headers_of(cfg["headers"], w, "adapter_config.headers") if "headers" in cfg else {}),
        },
        timeout=timeout
        if timeout is not None
        else (config.agent.timeout if config.agent else None),
        model=model_of(m.get("model"), w, "model")
        or (config.agent.model if config.agent else None),
        source=f"{w.file}:{w.line}" if w.line else w.file,
    )


def parse_test_extras(
    m: dict[str, Any], w: Where, config: EvalViewConfig, notes: dict[str, str]
) -> Extras:
    """Read EvalView's per-test fields: agent, tools, mocks, suite_type, checks.

    Raises:
        SchemaError: A field has the wrong shape.
    """
    tools: list[dict[str, Any]] = []
    declared: dict[str, frozenset[str]] = {}
    if m.get("tools") is not None:
        if not isinstance(m["tools"], list):
            raise w.error("tools", f"must be a list of tool definitions (got {kind(m['tools'])})")
        for i, item in enumerate(m["tools"]):
            tool = mapping(item, w, f"tools[{i}]")
            name = label(tool.get("name"), w.at(tool), f"tools[{i}].name")
            for key in ("category", "categories"):
                if tool.get(key) is not None:
                    for cat in strings(tool[key], w.at(tool), f"tools[{i}].{key}"):
                        declared[cat] = declared.get(cat, frozenset()) | {name}
            tools.append(tool)
    suite_type = None
    if m.get("suite_type") is not None:
        suite_type = label(m["suite_type"], w, "suite_type")
        if suite_type not in ("capability", "regression"):
            raise w.error("suite_type", f"must be capability or regression (got {suite_type!r})")
    mocks = mapping(m["mocks"], w, "mocks") if m.get("mocks") is not None else None
    if mocks is not None:
        allowed = {"seed", "strict", "tool_mocks", "response_mocks", "http_mocks"}
        for key in mocks:
            if key not in allowed:
                raise w.at(mocks, key).error(
                    f"mocks.{key}", f"unknown field (allowed: {', '.join(sorted(allowed))})"
                )
    pii = False
    if m.get("checks") is not None:
        checks = mapping(m["checks"], w, "checks")
        cw = w.at(checks)
        for key in checks:
            if key not in ("hallucination", "safety", "pii"):
                raise cw.error(
                    f"checks.{key}", "unknown field (allowed: hallucination, pii, safety)"
                )
            if boolean(checks[key], cw, f"checks.{key}") and key != "pii":
                notes[f"checks.{key}"] = JUDGE
        pii = bool(checks.get("pii", False))
    cfg = m.get("adapter_config")
    mode = cfg.get("sequence_mode") if isinstance(cfg, dict) else None
    if mode is not None and mode not in ("subsequence", "exact", "unordered"):
        raise w.error(
            "adapter_config.sequence_mode",
            f"must be subsequence, exact or unordered (got {mode!r})",
        )
    return Extras(
        agent=_agent(m, w, config, notes),
        mocks=mocks,
        suite_type=suite_type,
        tools=tuple(tools),
        categories=merge_categories(DEFAULT_CATEGORIES, config.categories, declared),
        sequence_mode=mode,
        pii=pii,
    )


def with_tools(test_input: Any, tools: tuple[dict[str, Any], ...], w: Where) -> Any:
    """The input with the test's tool definitions in ``context.tools`` (as EvalView sends them)."""
    if not tools:
        return test_input
    if not isinstance(test_input, dict):
        raise w.error("tools", "needs `input` to be a mapping (the tools go in input.context)")
    context = dict(test_input.get("context") or {})
    context.setdefault("tools", list(tools))
    return {**test_input, "context": context}
