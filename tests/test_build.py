"""The package builds as an sdist and a wheel that install and run, and the workflow example
installs what exists.

``python -m build`` makes the sdist, then the wheel *from the sdist* (so a file missing from the
sdist breaks the wheel too). Each install goes into a fresh virtualenv with ``--no-deps``;
assay's dependencies come from the test's own environment through a ``.pth`` line, so the test
needs no index for them (the build itself fetches setuptools, as ``pip install .`` does).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow

#: The environment of what runs in the fresh venv: no PYTHONPATH pointing at the sources.
_ENV = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}
#: What a build reads: the metadata, the README it embeds, and the sources.
_SOURCES = ("pyproject.toml", "README.md", "src")


def _version() -> str:
    return str(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"])


def _checkout(folder: Path) -> Path:
    """A clean copy of what a build reads (no caches, no build/ left by an earlier build)."""
    folder.mkdir()
    for name in _SOURCES:
        source = ROOT / name
        if source.is_dir():
            ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
            shutil.copytree(source, folder / name, ignore=ignore)
        else:
            shutil.copy(source, folder / name)
    return folder


def _venv(folder: Path) -> Path:
    """A fresh virtualenv whose dependencies resolve from this environment; its python."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    python = folder / "bin" / "python"
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    # appended after the venv's own site-packages: what is installed there wins
    (Path(purelib) / "_deps.pth").write_text(sysconfig.get_path("purelib") + "\n")
    return python


def _pip(python: Path, *args: str, cwd: Path | None = None) -> None:
    # the test environment's pip, acting on the venv (--python): the venv has no pip of its own
    command = [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet"]
    done = subprocess.run(
        [*command, "--no-deps", "--force-reinstall", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr


def _runs(python: Path, tmp_path: Path) -> None:
    """The installed assay is the one answering, says its version and analyses a trace set."""
    bin_dir = python.parent
    where = subprocess.run(
        [python, "-c", "import assay; print(assay.__file__)"],
        check=True,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=_ENV,
    ).stdout
    assert where.startswith(str(bin_dir.parent)), where
    version = subprocess.run(
        [bin_dir / "assay", "--version"], check=True, capture_output=True, text=True, env=_ENV
    )
    assert _version() in version.stdout
    traces = tmp_path / "traces"
    record = (
        "import assay.instrument as ai\n"
        f"handle = ai.configure({str(traces)!r})\n"
        "for i in range(5):\n"
        "    with ai.trial('smoke') as t:\n"
        "        t.check('ok', i != 0)\n"
        "handle.shutdown()\n"
    )
    subprocess.run([python, "-c", record], check=True, cwd=tmp_path, timeout=120, env=_ENV)
    analysis = subprocess.run(
        [bin_dir / "assay", "analyze", str(traces), "--format", "json", "--inconclusive-ok"],
        capture_output=True,
        text=True,
        timeout=120,
        env=_ENV,
    )
    assert analysis.returncode in (0, 1), analysis.stderr
    (test,) = json.loads(analysis.stdout)["tests"]
    assert (test["test_id"], test["n"], test["passed"]) == ("smoke", 5, 4)


def test_sdist_and_wheel_build_install_and_run(tmp_path: Path) -> None:
    checkout = _checkout(tmp_path / "checkout")
    dist = tmp_path / "dist"
    built = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(dist), str(checkout)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    version = _version()
    names = sorted(p.name for p in dist.iterdir())
    assert names == [f"assay_otel-{version}-py3-none-any.whl", f"assay_otel-{version}.tar.gz"]
    python = _venv(tmp_path / "venv")
    _pip(python, str(dist / names[0]))
    _runs(python, tmp_path)


def test_the_workflow_example_installs_what_exists(tmp_path: Path) -> None:
    workflow = yaml.safe_load((ROOT / "examples" / "github-actions.yml").read_text())
    steps = workflow["jobs"]["assay"]["steps"]
    uses = [str(step.get("uses", "")) for step in steps]
    (install,) = [step for step in steps if step.get("name") == "Install assay"]
    # the repository is checked out before it is installed from
    assert uses.index("actions/checkout@v4") < steps.index(install)
    argv = shlex.split(str(install["run"]))
    assert argv[:2] == ["pip", "install"], argv
    # run as written, from a checkout (plus --no-deps: dependencies come from here)
    python = _venv(tmp_path / "venv")
    _pip(python, *argv[2:], cwd=_checkout(tmp_path / "checkout"))
    _runs(python, tmp_path)
