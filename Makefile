# Set-up is two commands: `make demo` and `make test`. Everything else is installed from here.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# Two stamps in one venv: CORE is assay alone (what `make demo` runs), STAMP everything the tests
# need on top of it. STAMP depends on CORE, so `make test` alone, or after `make demo`, builds
# what is missing and an edit of pyproject.toml redoes both.
CORE   := $(VENV)/.core
STAMP  := $(VENV)/.installed
# traceloop-sdk without its 40 instrumentations (pip backtracks on them): it and what it imports.
TRACELOOP := traceloop-sdk==0.62.4 opentelemetry-instrumentation-openai==0.62.4 \
	opentelemetry-instrumentation-logging opentelemetry-instrumentation-threading
# Frameworks whose declared caps conflict with the frameworks extra (see pyproject.toml), each
# run by tests/integrations on the extra's versions; their own imports are in the extra.
NODEPS := google-adk==2.13.0 strands-agents==1.62.0 \
	llama-index-llms-openai==0.8.3 llama-index-llms-openai-like==0.8.1
# The EvalView release tests/run/conftest.py reads (EVALVIEW_VERSION there).
EVALVIEW := 0.8.1

# The TypeScript agent's packages (ai, the OpenTelemetry JS SDK and exporters), pinned by its
# package-lock.json, for tests/integrations/test_typescript.py. Best effort only where Node is
# absent (the test then skips and says why); with Node, a failed install fails the set-up.
TS_DIR   := tests/integrations/typescript
TS_STAMP := $(TS_DIR)/node_modules/.installed

.PHONY: demo test fast check bench clean

# assay and its dependencies, no extra: the demo needs nothing more. uv (from PyPI, into the
# venv) installs them: 5 s against pip's 30 s, nearly all of it pip reading index pages
# (measured: `make demo` on a fresh venv, cache warm, 30 s). Compiled to bytecode here, once:
# uv does not compile by default, and where PYTHONDONTWRITEBYTECODE is set (as on this project's
# machines) every `assay` command compiled scipy, Polars, pyarrow and assay itself again from
# source, about 2 s of each command (a 100k-span analyze: 4.5 → 2.4 s; see docs/scale.md).
$(CORE): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet uv
	$(BIN)/uv pip install --quiet --compile-bytecode --python $(BIN)/python -e .
	$(BIN)/python -m compileall -q src >/dev/null
	touch $(CORE)

# Debian packages some tests use, each best effort: installed when missing and this is root (apt),
# otherwise that test skips and says why. $(1): the command, $(2): the package.
APT = command -v $(1) >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && apt-get update -qq && \
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(2) >/dev/null; } || \
	echo "make test: $(2) not installed (apt, needs root): the tests that need it will skip"

# Everything the tests need, once: the dev, frameworks and spark extras (about 3 GB, 3-6 minutes),
# framework packages installed without their caps, EvalView's wheel, and from Debian (with root;
# about 10 minutes on a fresh machine) chromium for the HTML report test, a Java runtime for
# local Spark, prometheus for a real scrape of `assay watch`.
$(STAMP): $(CORE)
	@echo "make test: installing what the tests need (Python extras, then chromium, Java and prometheus with root): 5-15 minutes the first time"
	$(call APT,chromium,chromium)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,frameworks,spark]'
	$(BIN)/pip install --quiet --no-deps $(TRACELOOP)
	$(BIN)/pip install --quiet --no-deps $(NODEPS)
	# EvalView's published wheel, read by tests/run (its templates run unchanged); never vendored.
	# Fetched here once, not by every test run; without network the tests fetch it or skip.
	$(BIN)/pip download --quiet --no-deps --disable-pip-version-check -d $(VENV)/wheels evalview==$(EVALVIEW) || true
	# --engine spark's tests run local Spark, which needs a Java runtime (17 or later).
	$(call APT,java,openjdk-17-jre-headless)
	# tests/watch scrapes `assay watch --metrics-port` with a real Prometheus.
	$(call APT,prometheus,prometheus)
	touch $(STAMP)

# The dependency floors of pyproject.toml, tried: assay and its test extra at the lowest versions
# its direct dependencies allow (uv's lowest-direct resolution) in a venv of their own, running
# the core tests (statistics, verdicts, analysis, storage, reports). A floor that no longer works
# (a function the code calls that the floor version lacks) fails here, not on a user's machine.
FLOORS := .venv-floors
FLOOR_TESTS := tests/stats tests/judge tests/analysis tests/store tests/report
$(FLOORS)/.installed: pyproject.toml $(CORE)
	$(BIN)/uv venv --quiet --allow-existing --python $(BIN)/python $(FLOORS)
	$(BIN)/uv pip install --quiet --python $(FLOORS)/bin/python --resolution lowest-direct -e '.[test]'
	touch $@

$(TS_STAMP): $(TS_DIR)/package-lock.json
	if command -v npm >/dev/null 2>&1; then \
		cd $(TS_DIR) && npm ci --no-audit --no-fund --loglevel=error && touch node_modules/.installed; \
	else echo "npm not found: the TypeScript integration test will be skipped"; fi

demo: $(CORE)
	rm -rf demo-traces
	$(BIN)/python examples/agent.py --out demo-traces --trials 30
	$(BIN)/assay analyze demo-traces --inconclusive-ok || test $$? -eq 1

# `make test` is what CI runs (.ci/run): the static checks first (they take a minute and fail
# fast), then every test, slow ones included, then the core tests on the dependency floors.
# Two pytest-xdist workers, one a core: the suite is CPU-bound (its subprocesses too), and
# measured here 3 or 4 workers cost a third more CPU for no shorter run. A module's tests share
# a worker (--dist loadscope), so a module's recordings are made once; modules are handed out
# in the order tests/conftest.py gives them (slow ones first), not by their number of tests.
test: check $(TS_STAMP) $(FLOORS)/.installed
	$(BIN)/python -m pytest -q -n 2 --dist loadscope --no-loadscope-reorder
	$(FLOORS)/bin/python -m pytest -q -n 2 --dist loadscope --no-loadscope-reorder -k "not golden" $(FLOOR_TESTS)

# The inner loop: every test not marked slow, in two workers (README, "Development").
fast: $(STAMP)
	$(BIN)/python -m pytest -q -n 2 -m "not slow"

check: $(STAMP)
	$(BIN)/ruff format --check src tests examples benchmarks
	$(BIN)/ruff check src tests examples benchmarks
	$(BIN)/mypy
	$(BIN)/lint-imports

bench: $(STAMP)
	$(BIN)/python benchmarks/run_all.py

clean:
	rm -rf $(VENV) $(FLOORS) demo-traces build dist .pytest_cache .mypy_cache .ruff_cache $(TS_DIR)/node_modules
