# Two entry points a new user needs: `make run` and `make test`. Both create .venv/ on first use
# and reinstall only when pyproject.toml changes, so the second run is fast.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test venv bench package clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
	touch $(STAMP)

venv: $(STAMP)

run: $(STAMP)
	$(BIN)/cluster-designer

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/python benchmarks/bench_engine.py --tiny
	$(BIN)/python benchmarks/bench_gui.py --tiny
	$(BIN)/python benchmarks/bench_sweep.py --tiny
	$(BIN)/python benchmarks/fuzz.py --count 50 --cli 3
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_engine.py
	$(BIN)/python benchmarks/bench_gui.py
	$(BIN)/python benchmarks/bench_sweep.py

package: $(STAMP)
	bash packaging/build.sh

clean:
	rm -rf $(VENV) build dist
