"""EvalView's ``config.yaml``: the agent, score weights and tool categories of a folder.

EvalView keeps a folder's settings beside its tests (``tests/test-cases/config.yaml``, or
``.evalview/config.yaml``); its loader never reads such a file as a test. The fields assay
cannot honour are named in one finding for the file (``docs/migrating.md``).
"""

from __future__ import annotations

import os
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

from assay.quality import Finding
from assay.run._suite import AgentSpec, ScoreWeights
from assay.run._yaml import Where, label, mapping, number, read_yaml, strings

CONFIG_FILE_NAMES = frozenset({"config.yaml", "config.yml", ".evalview.yaml", ".evalview.yml"})
"""Files EvalView's loader skips as configuration (never test cases)."""

JUDGE = "an LLM judge, which assay does not run; record a score or a check instead"
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
    "judge": JUDGE,
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


def is_config_file(path: Path) -> bool:
    """True for a file EvalView reads as configuration, not as a test case."""
    return path.name.lower() in CONFIG_FILE_NAMES


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


def headers_of(value: object, w: Where, path: str) -> dict[str, str]:
    m = mapping(value, w, path)
    return {k: label(v, w, f"{path}.{k}") for k, v in m.items()}


def url_of(value: object, w: Where, path: str) -> str:
    url = label(value, w, path)
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in {"http", "https"} or not parts.netloc:
        raise w.error(path, f"must be an http:// or https:// URL (got {url!r})")
    return url


def model_of(value: object, w: Where, path: str) -> str | None:
    if value is None:
        return None
    if isinstance(value, dict):  # config.yaml: model: {name: gpt-4o, pricing: ...}
        return label(value["name"], w, f"{path}.name") if "name" in value else None
    return label(value, w, path)


def _categories(value: object, w: Where, path: str) -> dict[str, frozenset[str]]:
    m = mapping(value, w, path)
    return {k: frozenset(strings(v, w, f"{path}.{k}")) for k, v in m.items()}


def merge_categories(*tables: dict[str, frozenset[str]]) -> dict[str, frozenset[str]]:
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
                url_of(endpoint, w, "endpoint")
                if adapter == "http"
                else label(endpoint, w, "endpoint")
            )
            if endpoint is not None
            else None,
            headers=headers_of(m["headers"], w, "headers") if m.get("headers") else {},
            timeout=number(m["timeout"], w, "timeout", low=0.001)
            if m.get("timeout") is not None
            else None,
            model=model_of(m.get("model"), w, "model"),
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
