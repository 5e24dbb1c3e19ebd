# Every target creates .venv itself, so a fresh checkout needs only `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
BASE_STAMP := $(VENV)/.installed-base
TEST_STAMP := $(VENV)/.installed-test
BROWSER_STAMP := $(VENV)/.installed-browser
CHROMIUM ?= /usr/bin/chromium
TYPES := $(VENV)/typecheck

# The upstream OpenProse checkout the conformance tier reads, and the reference vectors
# recorded from it (the `shared/` folder beside this checkout holds both by default).
UPSTREAM ?= ../shared/upstream/openprose-prose
REFERENCE_VECTORS ?= $(UPSTREAM)/../../conformance/reference-vectors.json
SEEDS ?= $(UPSTREAM)/../../seeds
export UPSTREAM REFERENCE_VECTORS SEEDS

PYTEST := $(BIN)/python -m pytest -q --ignore=tests/benchmarks

.PHONY: test conformance test-slow test-browser demo bench lint typecheck grammar clean check-upstream

# The base install: what `prosec` needs to lint, build and run (filesystem and SQLite).
$(BASE_STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e .
	touch $(BASE_STAMP)

# Every extra plus the test tools.
$(TEST_STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[all,test]'
	touch $(BASE_STAMP) $(TEST_STAMP)

# The test tools plus Playwright (its Python package only: it drives the system's Chromium).
$(BROWSER_STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[all,test,browser]'
	touch $(BASE_STAMP) $(TEST_STAMP) $(BROWSER_STAMP)

# mypy cannot see through setuptools' editable-install finder, so it checks the
# sources through a symlinked `prosec` namespace under .venv.
$(TYPES)/prosec: | $(TEST_STAMP)
	mkdir -p $(TYPES)/prosec
	ln -sfn $(CURDIR)/compiler $(TYPES)/prosec/compiler
	ln -sfn $(CURDIR)/runtime $(TYPES)/prosec/runtime
	ln -sfn $(CURDIR)/schemas $(TYPES)/prosec/schemas

# ruff; deptry (declared dependencies = imported ones); import-linter (the layering
# contracts in pyproject.toml, read through the editable install).
lint: $(TEST_STAMP)
	$(BIN)/ruff check compiler runtime tests
	$(BIN)/ruff format --check compiler runtime tests
	$(BIN)/deptry compiler runtime
	$(BIN)/lint-imports --no-logo

typecheck: $(TEST_STAMP) $(TYPES)/prosec
	cd $(TYPES) && $(CURDIR)/$(BIN)/mypy --config-file $(CURDIR)/pyproject.toml -p prosec.compiler -p prosec.runtime

# Self-contained: no upstream checkout, no environment variables. PostgreSQL tests use
# the server at $PROSEC_TEST_POSTGRES_URL (default 127.0.0.1:5432) or start their own.
test: lint typecheck
	$(PYTEST) -n auto -m "not conformance and not slow and not browser"

# Fails at once, in one line naming the variable, when the upstream data is missing.
check-upstream:
	$(if $(wildcard $(UPSTREAM)/.),,$(error UPSTREAM=$(UPSTREAM) does not exist; set UPSTREAM to a checkout of openprose-prose))
	$(if $(wildcard $(REFERENCE_VECTORS)),,$(error REFERENCE_VECTORS=$(REFERENCE_VECTORS) does not exist; set REFERENCE_VECTORS to the upstream reference-vectors.json))
	$(if $(wildcard $(SEEDS)/.),,$(error SEEDS=$(SEEDS) does not exist; set SEEDS to the seeds folder))

# The tests that read the upstream corpus and the reference vectors.
conformance: check-upstream $(TEST_STAMP)
	$(PYTEST) -n auto -m "conformance and not browser"

# Long tests: the demo, the plugin's own pytest runs, a base-only virtualenv, the
# private-PostgreSQL fallback.
test-slow: $(TEST_STAMP)
	$(PYTEST) -n auto --dist loadfile -m "slow and not conformance and not browser"

# The devtools in a real browser: Playwright driving $(CHROMIUM) (Debian's `chromium`
# package). Fails, never skips, when Chromium is missing. Screenshots: tests/artifacts/.
test-browser: check-upstream $(BROWSER_STAMP)
	@test -x $(CHROMIUM) || { echo "make test-browser: $(CHROMIUM) is missing; install it (apt-get install -y chromium) or set CHROMIUM" >&2; exit 1; }
	PROSEC_CHROMIUM=$(CHROMIUM) $(PYTEST) -p no:xdist -m browser

demo: $(BASE_STAMP)
	./corpus/demo.sh

# Regenerate the shipped ProseScript parse table after editing compiler/prosescript/grammar.lark
# (a test fails while it is stale; prosec still works, building the table at start-up).
grammar: $(BASE_STAMP)
	$(BIN)/python -c "from prosec.compiler.prosescript.parse import write_table; write_table()"

bench: check-upstream $(TEST_STAMP)
	$(BIN)/python -m pytest tests/benchmarks -q -s

clean:
	rm -rf $(VENV) build *.egg-info
