# The README's commands. Each installs what it needs into .venv first: `make run` only what
# serving needs (the package), the others the dev and test toolchain as well.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
SERVE_STAMP := $(VENV)/.installed-serve
UI := web-ui
UI_DEPS := $(UI)/node_modules/.ci-stamp
UI_EXPORT := service/nmafc/web/static/index.html
UI_SOURCES := $(shell find $(UI)/src -type f 2>/dev/null) \
	$(addprefix $(UI)/,package.json next.config.mjs tsconfig.json)

.PHONY: run demo ui wheel openapi scaled-smoke docker-steps test test-tools lint typecheck bench-engine bench-http bench-scale clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP) $(SERVE_STAMP)

# Serving needs the package alone; a .venv that has the dev install has it already.
$(SERVE_STAMP): pyproject.toml
	if [ -f $(STAMP) ] && [ $(STAMP) -nt pyproject.toml ]; then touch $@; else \
	  { test -x $(BIN)/python || $(PYTHON) -m venv $(VENV); } && \
	  $(BIN)/python -m pip install --quiet --upgrade pip && \
	  $(BIN)/python -m pip install --quiet -e . && touch $@; fi

run: $(SERVE_STAMP)  ## the HTTP service on the embedded default, at http://127.0.0.1:8000 (with the dashboard when npm can build it)
	@if command -v npm >/dev/null 2>&1; then $(MAKE) --no-print-directory ui; \
	elif [ ! -f $(UI_EXPORT) ]; then echo "npm not found: serving the API without the dashboard; http://127.0.0.1:8000/ says how to add it (Node 20+ and npm, then make ui)."; fi
	$(BIN)/nmafc serve

demo: $(STAMP)  ## load a sample conversation through the API (into a running service, else in-process)
	$(BIN)/nmafc demo

ui: $(UI_EXPORT)  ## build the dashboard (web-ui/) into service/nmafc/web/static when missing or stale

$(UI_DEPS): $(UI)/package-lock.json
	@command -v npm >/dev/null || { echo "The dashboard needs Node 20+ and npm (https://nodejs.org); the API runs without it."; exit 1; }
	cd $(UI) && npm ci --no-audit --no-fund
	touch $@

$(UI_EXPORT): $(UI_DEPS) $(UI_SOURCES)
	cd $(UI) && NEXT_TELEMETRY_DISABLED=1 npm run build
	rm -rf service/nmafc/web/static
	cp -R $(UI)/out service/nmafc/web/static
	touch $@

wheel: $(STAMP) ui  ## build dist/nmafc-*.whl with the dashboard inside (pip users need no Node)
	rm -rf dist && $(BIN)/python -m pip wheel . --no-deps --quiet --wheel-dir dist
	$(BIN)/python -c "import glob, sys, zipfile; \
	names = zipfile.ZipFile(glob.glob('dist/nmafc-*.whl')[0]).namelist(); \
	sys.exit(0 if 'nmafc/web/static/index.html' in names else 'the wheel lacks the dashboard')"

openapi: $(STAMP) $(UI_DEPS)  ## regenerate the committed OpenAPI document and the dashboard's client
	$(BIN)/nmafc openapi > openapi/openapi.json
	cd $(UI) && npm run --silent generate-api

bench-http: $(STAMP)  ## recall over HTTP, 32 clients, 10^5 records in 1 and in 1,000 scopes, 1 and 2 workers
	$(BIN)/nmafc bench http --records 100000 --scopes 1,1000 --workers 1,2 --clients 32 --out benchmarks/results

test: lint typecheck test-tools ui  ## lint, type-check and the full test suite (PostgreSQL, S3 and browser included)
	$(BIN)/python -m pytest -m "not slow" -n 2 --dist loadfile

# Beyond .venv the tests drive Chromium, `docker-compose config`, strace (the offline guard)
# and curl; PostgreSQL must listen on 127.0.0.1:5432. Missing ones are named here; their
# tests skip on a workstation and fail under CI=true (.ci/run installs them).
test-tools:  ## name what the tests need beyond .venv (CI=true: fail if any is missing)
	@missing=""; \
	for tool in strace curl; do command -v $$tool >/dev/null 2>&1 || missing="$$missing $$tool"; done; \
	[ -n "$$NMAFC_TEST_CHROMIUM" ] || command -v chromium >/dev/null 2>&1 || missing="$$missing chromium"; \
	command -v docker-compose >/dev/null 2>&1 || docker compose version >/dev/null 2>&1 || missing="$$missing docker-compose"; \
	if [ -n "$$missing" ]; then \
	  echo "make test: missing$$missing (apt-get install -y$$missing); their tests are skipped, and fail under CI=true"; \
	  if [ "$$CI" = "true" ]; then exit 1; fi; \
	fi; \
	command -v pg_isready >/dev/null 2>&1 && { pg_isready -h 127.0.0.1 -p 5432 -q || echo "make test: PostgreSQL is not answering on 127.0.0.1:5432 (trust auth, database test): its tests will fail"; } || true

lint: $(STAMP)  ## ruff, and the layering contracts of docs/architecture.md (import-linter)
	$(BIN)/ruff check service tests benchmarks
	$(BIN)/ruff format --check service tests benchmarks
	$(BIN)/lint-imports

typecheck: $(STAMP)  ## mypy, strict on the package
	$(BIN)/mypy

bench-engine: $(STAMP)  ## 10^5 and 10^6 records: pass time, recall latency, peak memory
	$(BIN)/nmafc bench engine --sizes 100000,1000000 --out benchmarks/results

# Issue 25's target: 2x10^6 records over 10^4 scopes plus one of 10^5, cache bounded at 1 GB.
# Override any of them: make bench-scale SCALE_SCOPES=200 SCALE_RECORDS=500 SCALE_BIG=20000
SCALE_SCOPES ?= 10000
SCALE_RECORDS ?= 200
SCALE_BIG ?= 100000
SCALE_CACHE_MB ?= 1024
SCALE_SEARCHES ?= 5000
bench-scale: $(STAMP)  ## 10^4 scopes x 200 records + one of 10^5, 1 GB cache, Zipf 1.1 searches, then cache off
	$(BIN)/nmafc bench scale --scopes $(SCALE_SCOPES) --records-per-scope $(SCALE_RECORDS) \
		--big-scope-records $(SCALE_BIG) --cache-mb $(SCALE_CACHE_MB) --zipf 1.1 \
		--searches $(SCALE_SEARCHES) --out benchmarks/results

scaled-smoke: $(STAMP)  ## PostgreSQL + SeaweedFS S3 + 2 replicas + 1 worker, as processes, then torn down
	$(BIN)/python -m nmafc.testing.scaled_smoke

docker-steps:  ## run the Dockerfile's build steps without Docker (fresh virtualenvs, wheel only)
	bash deploy/docker_steps.sh

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
	rm -rf $(UI)/node_modules $(UI)/.next $(UI)/out service/nmafc/web/static
