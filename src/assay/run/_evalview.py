"""EvalView's test-case schema: the fields assay reads with EvalView's meaning.

EvalView (``evalview`` 0.8.1, ``evalview/core/types.py``) writes one test per file, nests its
statistical mode under ``thresholds.variance``, names the agent with ``adapter`` /
``endpoint`` / ``adapter_config`` (or a ``config.yaml`` beside the tests) and scores a run as a
weighted sum of tool accuracy, output quality and sequence correctness. This module reads
those fields; every field assay cannot honour is named in one finding per file, with what
honouring it would take (``docs/migrating.md``).
"""

from __future__ import annotations

import os
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.quality import Finding
from assay.run._suite import AgentSpec, ScoreWeights
from assay.run._yaml import (
    Where,
    boolean,
    kind,
    label,
    mapping,
    number,
    read_yaml,
    strings,
)

EVALVIEW_DEFAULT_RUNS = 10
"""EvalView's ``VarianceConfig.runs`` default, used when ``thresholds.variance`` omits it."""

CONFIG_FILE_NAMES = frozenset({"config.yaml", "config.yml", ".evalview.yaml", ".evalview.yml"})
"""Files EvalView's loader skips as configuration (never test cases)."""

_JUDGE = "an LLM judge, which assay does not run; record a score or a check instead"
UNSUPPORTED_EXPECTED = {"metrics": "custom metric thresholds of EvalView's evaluators"}
UNSUPPORTED_EXPECTED_JUDGED = {"hallucination": _JUDGE, "safety": _JUDGE}
UNSUPPORTED_OUTPUT = {"must_acknowledge_uncertainty": _JUDGE}
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
_CONFIG_HONOURED = {
    "adapter",
    "endpoint",
    "timeout",
    "headers",
    "model",
    "scoring",
    "tool_categories",
    "allow_private_urls",  # assay never blocks private URLs, so it is honoured as is
}
_CONFIG_UNSUPPORTED = {
    "budget": "a run budget in USD; use --max-cost with --prices",
    "retry": "retries of failed calls; assay counts each call as a trial",
    "ci": "EvalView's diff statuses; assay's exit codes are its verdicts",
    "diff": "EvalView's golden-baseline diff; use assay compare",
    "judge": _JUDGE,
    "monitor": "EvalView's monitor; assay has no monitor",
}

# EvalView 0.8.1's default tool categories (evalview/core/tool_categories.py), so that
# `tool_categories: [file_read]` means the same tools; tests compare this with the wheel.
DEFAULT_CATEGORIES: dict[str, frozenset[str]] = {
    "file_read": frozenset(
        "bash text_editor read_file read view cat view_file str_replace_editor".split()
    ),
    "file_write": frozenset(
        "bash text_editor write_file write edit_file create_file str_replace_editor".split()
    ),
    "file_list": frozenset("bash list_directory list_dir ls find directory_tree analyze".split()),
    "search": frozenset(
        "bash grep ripgrep rg search search_files code_search find_in_files analyze".split()
    ),
    "shell": frozenset("bash shell terminal execute run_command exec developer".split()),
    "web": frozenset("web_search browse fetch_url http_request curl wget".split()),
    "git": frozenset("bash git git_commit git_push git_pull git_status github".split()),
    "python": frozenset("bash python python_repl execute_python ipython jupyter".split()),
}


@dataclass(frozen=True, slots=True)
class EvalViewConfig:
    """What a folder's ``config.yaml`` contributes."""

    agent: AgentSpec | None = None
    """Its ``adapter`` and ``endpoint``."""
    weights: ScoreWeights | None = None
    """``scoring.weights``: the default weights of EvalView's score."""
    categories: dict[str, frozenset[str]] = field(default_factory=dict)
    """``tool_categories``: categories added to (or extending) the defaults."""
    finding: Finding | None = None
    """Its fields assay does not honour."""


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


def is_config_file(path: Path) -> bool:
    """True for a file EvalView reads as configuration, not as a test case."""
    return path.name.lower() in CONFIG_FILE_NAMES


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


def finding(file: str, notes: dict[str, str]) -> Finding | None:
    """The one finding for a file: each field assay does not honour, and what it would take."""
    if not notes:
        return None
    parts = "; ".join(f"{key} ({why})" for key, why in notes.items())
    return Finding(
        kind="unhonoured_fields",
        message=f"{file}: read but not honoured: {parts}",
        count=len(notes),
        examples=tuple(notes),
    )


def _headers(value: object, w: Where, path: str) -> dict[str, str]:
    m = mapping(value, w, path)
    return {k: label(v, w, f"{path}.{k}") for k, v in m.items()}


def _url(value: object, w: Where, path: str) -> str:
    url = label(value, w, path)
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in {"http", "https"} or not parts.netloc:
        raise w.error(path, f"must be an http:// or https:// URL (got {url!r})")
    return url


def _model(value: object, w: Where, path: str) -> str | None:
    if value is None:
        return None
    if isinstance(value, dict):  # config.yaml: model: {name: gpt-4o, pricing: ...}
        return label(value["name"], w, f"{path}.name") if "name" in value else None
    return label(value, w, path)


def _categories(value: object, w: Where, path: str) -> dict[str, frozenset[str]]:
    m = mapping(value, w, path)
    return {k: frozenset(strings(v, w, f"{path}.{k}")) for k, v in m.items()}


def _merge(*tables: dict[str, frozenset[str]]) -> dict[str, frozenset[str]]:
    """Categories of later tables extend those of earlier ones (EvalView's merge)."""
    out: dict[str, frozenset[str]] = {}
    for table in tables:
        for name, tools in table.items():
            out[name] = out.get(name, frozenset()) | tools
    return out


def parse_weights(
    thresholds: object, w: Where, default: ScoreWeights | None
) -> ScoreWeights | None:
    """``thresholds.weights`` over ``default``; None when neither is given."""
    raw = thresholds.get("weights") if isinstance(thresholds, dict) else None
    if raw is None:
        return default
    m = mapping(raw, w.at(thresholds), "thresholds.weights")
    ww = w.at(m)
    base = default or ScoreWeights()
    values = {}
    for key in ("tool_accuracy", "output_quality", "sequence_correctness"):
        given = m.get(key)
        values[key] = (
            number(given, ww, f"thresholds.weights.{key}", low=0.0)
            if given is not None
            else getattr(base, key)
        )
    extra = set(m) - set(values)
    if extra:
        raise ww.error(f"thresholds.weights.{sorted(extra)[0]}", "unknown field")
    total = sum(values.values())
    if abs(total - 1.0) > 0.001:
        raise ww.error("thresholds.weights", f"must sum to 1 (got {total:.3f})")
    return ScoreWeights(**values)


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
        url = _url(endpoint, w, "endpoint") if endpoint is not None else None
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
            **(_headers(cfg["headers"], w, "adapter_config.headers") if "headers" in cfg else {}),
        },
        timeout=timeout
        if timeout is not None
        else (config.agent.timeout if config.agent else None),
        model=_model(m.get("model"), w, "model") or (config.agent.model if config.agent else None),
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
                notes[f"checks.{key}"] = _JUDGE
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
        categories=_merge(DEFAULT_CATEGORIES, config.categories, declared),
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


def _find_config(root: Path) -> Path | None:
    folder = root if root.is_dir() else root.parent
    candidates = [folder / name for name in ("config.yaml", "config.yml")]
    candidates += [
        folder / ".evalview" / "config.yaml",
        Path(os.getcwd()) / ".evalview" / "config.yaml",
    ]
    return next((p for p in candidates if p.is_file()), None)


def load_config(root: Path) -> EvalViewConfig:
    """The EvalView ``config.yaml`` of a suite folder, looked up as EvalView does.

    In order: ``config.yaml`` (or ``.yml``) in the folder, ``.evalview/config.yaml`` in the
    folder, ``.evalview/config.yaml`` in the current directory; the first found is read.

    Raises:
        SchemaError: ``adapter``, ``endpoint``, ``headers``, ``scoring`` or
            ``tool_categories`` has the wrong shape.
    """
    path = _find_config(root)
    if path is None:
        return EvalViewConfig()
    document, w = read_yaml(path)
    if document is None:
        return EvalViewConfig()
    m = mapping(document, w, "")
    w = w.at(m)
    notes = {k: why for k, why in _CONFIG_UNSUPPORTED.items() if m.get(k) is not None}
    for key in m:
        if key not in _CONFIG_HONOURED and key not in _CONFIG_UNSUPPORTED:
            notes[key] = "not a field of EvalView's config"
    agent = None
    if m.get("adapter") is not None or m.get("endpoint") is not None:
        adapter = label(m.get("adapter", "http"), w, "adapter")
        endpoint = m.get("endpoint")
        agent = AgentSpec(
            adapter=adapter,
            endpoint=(
                _url(endpoint, w, "endpoint")
                if adapter == "http"
                else label(endpoint, w, "endpoint")
            )
            if endpoint is not None
            else None,
            headers=_headers(m["headers"], w, "headers") if m.get("headers") else {},
            timeout=number(m["timeout"], w, "timeout", low=0.001)
            if m.get("timeout") is not None
            else None,
            model=_model(m.get("model"), w, "model"),
            source=str(path),
        )
    weights = None
    scoring = m.get("scoring")
    if scoring is not None:
        sm = mapping(scoring, w, "scoring")
        weights = parse_weights(
            {"weights": sm["weights"]} if "weights" in sm else {}, w.at(sm), None
        )
    categories = (
        _categories(m["tool_categories"], w, "tool_categories") if m.get("tool_categories") else {}
    )
    return EvalViewConfig(agent, weights, categories, finding(str(path), notes))
