"""The layers of docs/architecture.md hold: the import contracts pass, the doc lists them."""

import ast
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_import_contracts_hold() -> None:
    # The same check `make check` runs: an import up the layers or a circle fails it.
    lint = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run(
        [str(lint), "--config", str(ROOT / "pyproject.toml")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "4 kept, 0 broken" in result.stdout


def test_the_architecture_table_lists_every_layer_in_order() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    (layers,) = [
        c["layers"]
        for c in config["tool"]["importlinter"]["contracts"]
        if c["type"] == "layers" and "containers" not in c
    ]
    doc = (ROOT / "docs" / "architecture.md").read_text()
    rows = [line for line in doc.splitlines() if line.startswith("| `")]
    positions = []
    for layer in layers:
        for module in re.split(r"[|:]", layer):
            name = module.strip().removeprefix("assay.")
            shown = f"`{name}/`" if (ROOT / "src" / "assay" / name).is_dir() else f"`{name}"
            row = next(i for i, r in enumerate(rows) if shown in r.split("|")[1])
            positions.append(row)
    assert positions == sorted(positions), "docs/architecture.md lists the layers out of order"


def _imported(tree: ast.Module) -> list[tuple[int, str]]:
    """(line, dotted name) of every module or name imported, relative imports resolved away."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
    return found


def _package(parts: tuple[str, ...]) -> tuple[str, ...]:
    """The package a module of ``assay`` belongs to: ``stats`` has rooms (sub-packages)."""
    if len(parts) > 2 and parts[0] == "stats":
        return parts[:2]
    return parts[:1] if len(parts) > 1 else ()


def test_no_private_module_is_imported_from_another_package() -> None:
    # A package's `_modules` are its own: the others import what its __init__ re-exports. The
    # rooms of `stats` are packages too: `stats/planning` imports `assay.stats.suites`, never
    # `assay.stats.suites._paired`.
    source = ROOT / "src" / "assay"
    crossings = []
    for path in sorted(source.rglob("*.py")):
        package = _package(path.relative_to(source).parts)
        for line, name in _imported(ast.parse(path.read_text())):
            dotted = name.split(".")
            if dotted[0] != "assay" or len(dotted) < 3:
                continue
            if dotted[1] == "stats" and len(dotted) > 3 and not dotted[2].startswith("_"):
                owner, rest = ("stats", dotted[2]), dotted[3:]
            else:
                owner, rest = (dotted[1],), dotted[2:]
            inner = [part for part in rest if part.startswith("_") and not part.endswith("__")]
            if inner and owner != package[: len(owner)]:
                crossings.append(f"{path.relative_to(source)}:{line}: {name}")
    assert not crossings, crossings


def test_no_choice_is_spelled_outside_its_enum() -> None:
    # assay.choices holds each choice's values; code compares with (and defaults to) members.
    # "count" is also the kind of a behaviour feature (a number per trial): not a choice there.
    import assay.choices

    values = {
        member.value
        for name in assay.choices.__all__
        for member in getattr(assay.choices, name)
        if member.value != "count"
    }
    source = ROOT / "src" / "assay"
    spelled = []
    for path in sorted(source.rglob("*.py")):
        if path.name == "choices.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Compare):
                operands = [node.left, *node.comparators]
            elif isinstance(node, ast.arguments):
                operands = [*node.defaults, *(d for d in node.kw_defaults if d is not None)]
            else:
                continue
            constants = [
                inner
                for operand in operands
                for inner in (
                    operand.elts if isinstance(operand, ast.Tuple | ast.Set) else [operand]
                )
                if isinstance(inner, ast.Constant) and inner.value in values
            ]
            spelled += [f"{path.relative_to(source)}:{c.lineno}: {c.value!r}" for c in constants]
    assert not spelled, spelled
