# Two entry points: `make play` (a game against the shipped bot) and `make test`.
# Both create .venv and install everything on first use.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: play test bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[train,fast,web,dev]'
	touch $(STAMP)

play: $(STAMP)
	$(VENV)/bin/shelfie play

test: $(STAMP)
	$(PY) -m pytest -q

bench: $(STAMP)
	$(PY) scripts/bench_env.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
