# Every target creates .venv itself, so a fresh checkout needs only `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
TYPES := $(VENV)/typecheck

.PHONY: test demo bench lint typecheck grammar clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
	touch $(STAMP)

# mypy cannot see through setuptools' editable-install finder, so it checks the
# sources through a symlinked `prosec` namespace under .venv.
$(TYPES)/prosec: | $(STAMP)
	mkdir -p $(TYPES)/prosec
	ln -sfn $(CURDIR)/compiler $(TYPES)/prosec/compiler
	ln -sfn $(CURDIR)/runtime $(TYPES)/prosec/runtime
	ln -sfn $(CURDIR)/schemas $(TYPES)/prosec/schemas

lint: $(STAMP)
	$(BIN)/ruff check compiler runtime tests
	$(BIN)/ruff format --check compiler runtime tests

typecheck: $(STAMP) $(TYPES)/prosec
	cd $(TYPES) && $(CURDIR)/$(BIN)/mypy --config-file $(CURDIR)/pyproject.toml -p prosec.compiler -p prosec.runtime

test: lint typecheck
	$(BIN)/python -m pytest -q --ignore=tests/benchmarks

demo: $(STAMP)
	./corpus/demo.sh

# Regenerate the shipped ProseScript parse table after editing compiler/prosescript/grammar.lark
# (a test fails while it is stale; prosec still works, building the table at start-up).
grammar: $(STAMP)
	$(BIN)/python -c "from prosec.compiler.prosescript.parse import write_table; write_table()"

bench: $(STAMP)
	$(BIN)/python -m pytest tests/benchmarks -q -s

clean:
	rm -rf $(VENV) build *.egg-info
