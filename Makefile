# The README's commands. Each installs what it needs into .venv first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run demo openapi test lint typecheck bench-engine bench-http clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)  ## the HTTP service on the embedded default, at http://127.0.0.1:8000
	$(BIN)/nmafc serve

demo: $(STAMP)  ## remember a short conversation and recall from it, in-process
	$(BIN)/nmafc demo

openapi: $(STAMP)  ## regenerate the committed OpenAPI document
	$(BIN)/nmafc openapi > openapi/openapi.json

bench-http: $(STAMP)  ## recall over HTTP, 32 clients, 10^5 records in 1 and in 1,000 scopes
	$(BIN)/nmafc bench http --records 100000 --scopes 1,1000 --clients 32 --out benchmarks/results

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
