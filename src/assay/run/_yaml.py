"""YAML with line numbers, and the validators every suite field goes through.

Every error names the file, the line, the test and the field (``_Where``); the schema that
uses these is in :mod:`assay.run._suite_load` (assay's) and :mod:`assay.run._evalview`
(EvalView's fields).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from assay._bounded import read_text_bounded
from assay.errors import SchemaError

MAX_DEPTH = 64
"""Deepest nesting of lists and mappings a suite file may have (a suite needs a handful)."""
MAX_VALUES = 1_000_000
"""Most values a suite file may expand to, aliases expanded: a YAML alias bomb ("billion
laughs") is a few lines that expand to billions, and would be built before any check."""


def _check_shape(text: str, path: Path) -> None:
    """Refuse a document nested deeper than MAX_DEPTH, before anything recursive reads it.

    PyYAML's parser is a state machine (no recursion), its composer and constructor are not:
    100,000 nested lists once ended in a RecursionError traceback.
    """
    depth = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                mark = event.start_mark
                line = mark.line + 1 if mark is not None else "?"
                raise SchemaError(
                    f"{path}:{line}: nested deeper than {MAX_DEPTH} levels; a suite never is"
                )
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def _check_expansion(node: yaml.Node, path: Path) -> None:
    """Refuse a node graph whose aliases expand to more than MAX_VALUES values.

    Counted on the composed graph, where each alias is a shared node: each node's expanded
    size is computed once, so this is linear in the nodes (recursion depth is bounded by
    :data:`MAX_DEPTH`, checked first).
    """
    sizes: dict[int, int] = {}

    def size(current: yaml.Node) -> int:
        known = sizes.get(id(current))
        if known is not None:
            if known < 0:
                line = current.start_mark.line + 1
                raise SchemaError(f"{path}:{line}: an alias refers to a value holding itself")
            return known
        sizes[id(current)] = -1  # in progress
        total = 1 + sum(size(child) for child in _children(current))
        if total > MAX_VALUES:
            line = current.start_mark.line + 1
            raise SchemaError(
                f"{path}:{line}: expands to more than {MAX_VALUES:,} values through its aliases "
                "(an alias bomb?)"
            )
        sizes[id(current)] = total
        return total

    size(node)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return []


class _LineLoader(yaml.SafeLoader):
    """A safe loader that remembers the line of every mapping it builds."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.lines: dict[int, int] = {}
        self.key_lines: dict[tuple[int, str], int] = {}


def _construct_map(loader: _LineLoader, node: yaml.MappingNode) -> Any:
    data: dict[Any, Any] = {}
    loader.lines[id(data)] = node.start_mark.line + 1
    for key_node, _ in node.value:
        if isinstance(key_node, yaml.ScalarNode):
            loader.key_lines[(id(data), key_node.value)] = key_node.start_mark.line + 1
    yield data
    data.update(loader.construct_mapping(node))


_LineLoader.add_constructor("tag:yaml.org,2002:map", _construct_map)


@dataclass(slots=True)
class Where:
    """Where a value sits, for error messages: file, line, test, field path."""

    file: str
    lines: dict[int, int]
    line: int | None = None
    test: str | None = None
    key_lines: dict[tuple[int, str], int] = field(default_factory=dict)

    def at(self, mapping: object, key: str | None = None) -> Where:
        """The place of ``mapping`` (or of its ``key``) in the same file."""
        line = self.lines.get(id(mapping), self.line)
        if key is not None:
            line = self.key_lines.get((id(mapping), key), line)
        return Where(self.file, self.lines, line, self.test, self.key_lines)

    def for_test(self, test: str) -> Where:
        """The same place, inside test ``test``."""
        return Where(self.file, self.lines, self.line, test, self.key_lines)

    def error(self, path: str, message: str) -> SchemaError:
        """The one-line error for the field ``path`` here."""
        place = self.file if self.line is None else f"{self.file}:{self.line}"
        test = f" test {self.test!r}:" if self.test else ""
        where = f" {path}:" if path else ""
        return SchemaError(f"{place}:{test}{where} {message}")


def read_yaml(path: Path) -> tuple[Any, Where]:
    """Parse one YAML file, keeping the line of every mapping.

    Raises:
        InputError: The file cannot be read.
        SchemaError: It is not valid YAML.
    """
    text = read_text_bounded(path, "suite")
    loader = _LineLoader(text)
    try:
        _check_shape(text, path)
        node = loader.get_single_node()
        if node is None:
            return None, Where(str(path), loader.lines, 1, None, loader.key_lines)
        _check_expansion(node, path)
        document = loader.construct_document(node)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        place = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise SchemaError(f"{place}: not valid YAML: {problem}") from None
    finally:
        loader.dispose()
    return document, Where(str(path), loader.lines, 1, None, loader.key_lines)


def kind(value: object) -> str:
    """How a value is named in an error message."""
    if value is None:
        return "nothing"
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), type(value).__name__
    )


def mapping(value: object, where: Where, path: str) -> dict[str, Any]:
    """``value`` as a mapping with string keys, else a schema error."""
    if not isinstance(value, dict):
        raise where.error(path, f"must be a mapping (got {kind(value)})")
    for key in value:
        if not isinstance(key, str):
            raise where.at(value).error(path, f"keys must be strings (got {key!r})")
    return value


def known(value: dict[str, Any], allowed: set[str], w: Where, path: str) -> None:
    """Refuse a key of ``value`` not in ``allowed`` (typos must not pass silently)."""
    for key in value:
        if key not in allowed:
            names = ", ".join(sorted(allowed))
            name = f"{path}.{key}" if path else key
            raise w.at(value, key).error(name, f"unknown field (allowed: {names})")


def strings(value: object, w: Where, path: str) -> tuple[str, ...]:
    """A string or a list of non-empty strings."""
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, list):
        raise w.error(path, f"must be a list of non-empty strings (got {kind(value)})")
    for i, item in enumerate(value):
        if not isinstance(item, str) or not item:
            hint = (
                " (quote it: YAML reads yes/no/on/off as booleans)"
                if isinstance(item, bool)
                else ""
            )
            raise w.error(f"{path}[{i}]", f"must be a non-empty string (got {item!r}){hint}")
    return tuple(value)


def number(value: object, w: Where, path: str, *, low: float | None = None) -> float:
    """A finite number, at least ``low`` if given."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise w.error(path, f"must be a number (got {value!r})")
    if low is not None and value < low:
        raise w.error(path, f"must be at least {low} (got {value})")
    return float(value)


def rate(value: object, w: Where, path: str) -> float:
    """A number in [0, 1]."""
    x = number(value, w, path)
    if not 0 <= x <= 1:
        raise w.error(path, f"must lie in [0, 1] (got {value!r})")
    return x


def boolean(value: object, w: Where, path: str) -> bool:
    """``true`` or ``false``."""
    if not isinstance(value, bool):
        raise w.error(path, f"must be true or false (got {value!r})")
    return value


def label(value: object, w: Where, path: str) -> str:
    """A non-empty string (numbers are read as their text)."""
    if not isinstance(value, str | int | float) or isinstance(value, bool) or value == "":
        raise w.error(path, f"must be a non-empty string (got {kind(value)})")
    return str(value)


def check_jsonable(value: object, w: Where, path: str) -> None:
    """Refuse a value that cannot be sent as JSON."""
    if value is None or isinstance(value, str | bool | int):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise w.error(path, f"must be JSON-able (got {value!r})")
        return
    if isinstance(value, list):
        for i, item in enumerate(value):
            check_jsonable(item, w, f"{path}[{i}]")
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise w.error(path, f"keys must be strings to be JSON-able (got {key!r})")
            check_jsonable(item, w, f"{path}.{key}")
        return
    raise w.error(path, f"must be JSON-able (got {type(value).__name__}: {value!r})")
