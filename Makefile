# The two commands of the README: `make demo` and `make test`. Everything they need is
# installed here (into .venv and tools/cypherlint/node_modules), so a fresh clone works.
VENV    ?= .venv
PYTHON  ?= python3
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed-stamp
LINTDIR := tools/cypherlint
EXAMPLES := $(wildcard examples/*.json)

.PHONY: install demo test test-bolt test-lock lint lint-cypher typecheck chromium postgres clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

install: $(STAMP)

$(LINTDIR)/node_modules/.installed-stamp: $(LINTDIR)/package.json $(LINTDIR)/package-lock.json
	npm ci --prefix $(LINTDIR) --no-audit --no-fund --loglevel=error
	touch $@

demo: install
	$(BIN)/provrepair db start
	$(BIN)/provrepair ingest --replace $(EXAMPLES)
	$(BIN)/provrepair tasks
	$(BIN)/provrepair show --task shopping_task_014
	@echo "--- the recorded (faulty) answer is s_012 above; plan and repair it offline:"
	$(BIN)/provrepair plan --task shopping_task_014
	$(BIN)/provrepair repair --task shopping_task_014
	@echo "--- an agent's chat transcript with its memory log, read as a case, and its plan:"
	$(BIN)/provrepair ingest --replace --from openai-messages examples/transcripts/shopping_transcript.json
	$(BIN)/provrepair plan --task transcript_shopping_001 --no-record
	@echo "--- an OpenTelemetry GenAI trace (OTLP/JSON) of an instrumented agent, and its plan:"
	$(BIN)/provrepair ingest --replace --from otel examples/otel/shopping_agent.otlp.jsonl
	$(BIN)/provrepair plan --task otel_shopping_001 --no-record
	$(BIN)/provrepair db status

# The queries as they run: the state rules a file names (`@visible(n)`) filled in from
# provenance/state/runs.py (build/cypher/ mirrors cypher/, line for line).
lint-cypher: install $(LINTDIR)/node_modules/.installed-stamp
	@mkdir -p build && rm -rf build/cypher
	$(BIN)/python -m provrepair.provenance.vocab > build/cypher-vocab.json
	$(BIN)/python -m provrepair.provenance.store.queries build/cypher
	node $(LINTDIR)/lint.mjs --vocab build/cypher-vocab.json build/cypher

lint: install
	$(BIN)/ruff check .

# mypy reads the package through a symlink named provrepair (it cannot follow the editable
# install's import hook; see pyproject.toml).
typecheck: install
	@mkdir -p build/typecheck && ln -sfn ../.. build/typecheck/provrepair
	$(BIN)/mypy

# Headless Chromium for the view tests (Debian's package); without it they skip, saying why.
chromium:
	@command -v chromium >/dev/null 2>&1 || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium) || echo "chromium could not be installed: the browser tests will be skipped"

# PostgreSQL's server binaries (initdb, pg_ctl; Debian's package) for the LangGraph
# PostgresStore tests, which start a throwaway server (tests/postgres_server.py); without them
# those tests skip, saying why.
postgres:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1 || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql) || echo "postgresql could not be installed: the PostgresStore tests will be skipped"

# Every test, on every core (pytest-xdist; each worker has its own embedded server). The
# planner's long property run is a deeper profile outside `make test`: bench/property.py.
# The Neo4j-marked tests run too, over Bolt: ArcadeDB from the dev extra when no
# PROVREPAIR_TEST_BOLT_URI or Docker engine is there (tests/bolt_server.py; the report's
# header says which server ran).
test: lint lint-cypher typecheck chromium postgres
	$(BIN)/pytest -q -n auto --durations=15

# Only the tests over Bolt, and a missing Bolt server is a failure, not a skip.
test-bolt: install
	PROVREPAIR_REQUIRE_NEO4J=1 $(BIN)/pytest -q -n auto -m neo4j

# The lock and once-only tests, 20 iterations each (make test runs 1: the barriers order them).
test-lock: install
	PROVREPAIR_LOCK_ITERATIONS=20 $(BIN)/pytest -q -n auto tests/integration/test_task_lock.py tests/integration/test_repair_once.py

clean:
	rm -rf build .pytest_cache .mypy_cache .ruff_cache
