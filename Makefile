# The README's commands. Each installs what it needs into .venv first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint typecheck bench-engine clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)  ## the embedded default: remember a conversation and recall from it
	$(BIN)/nmafc demo

test: $(STAMP)  ## lint, type-check and the full test suite (PostgreSQL and S3 included)
	$(BIN)/ruff check service tests benchmarks
	$(BIN)/ruff format --check service tests benchmarks
	$(BIN)/mypy
	$(BIN)/python -m pytest -m "not slow" -n 2 --dist loadfile

lint: $(STAMP)
	$(BIN)/ruff check service tests benchmarks
	$(BIN)/ruff format --check service tests benchmarks

typecheck: $(STAMP)
	$(BIN)/mypy

bench-engine: $(STAMP)  ## 10^5 and 10^6 records: pass time, recall latency, peak memory
	$(BIN)/nmafc bench engine --sizes 100000,1000000 --out benchmarks/results

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
