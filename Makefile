# Two commands on a fresh machine: `make site` and `make test`. Each sets itself up.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: setup site serve report test test-integration lint clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

# Measure the releases the committed history (data/) does not have yet (the registries are
# asked now), export, and build the site of the whole history from data/ and those results.
# Exit 3 from run means some cells ended as infra errors: they are shown as such, not hidden.
site: $(STAMP)
	$(BIN)/compat-matrix run --new; status=$$?; [ $$status -eq 0 ] || [ $$status -eq 3 ] || exit $$status
	$(BIN)/compat-matrix report --format json --output results/matrix.json
	$(BIN)/compat-matrix report --format csv --output results/matrix.csv
	$(BIN)/compat-matrix build

serve: $(STAMP)
	$(BIN)/mkdocs serve

report: $(STAMP)
	$(BIN)/compat-matrix report

# Every core; a module's tests stay on one worker, in order (some share one browser page, one site).
test: $(STAMP)
	$(BIN)/pytest -n auto --dist loadfile

# Installs real SDK and CLI versions from the registries and measures real cells: the tests
# that measure through the harness on one worker, the rest beside them (tests/conftest.py).
test-integration: $(STAMP)
	$(BIN)/pytest -m integration -n 2 --cells-apart --durations=25

# actionlint checks the workflow files (expressions, contexts, shell); built by the go command.
ACTIONLINT := $(BIN)/actionlint
$(ACTIONLINT): | $(STAMP)
	GOBIN=$(abspath $(BIN)) go install github.com/rhysd/actionlint/cmd/actionlint@v1.7.12

lint: $(STAMP) $(ACTIONLINT)
	$(BIN)/compat-matrix check
	$(BIN)/ruff check matrix tests scripts
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(ACTIONLINT)

clean:
	rm -rf $(VENV) site results/.tmp-*
