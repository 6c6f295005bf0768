# Two entry points: `make play` (a game against the shipped bot) and `make test`.
# Both create .venv and install everything on first use.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: play serve test lint wheel-check bench clean chromium

# PYTHONWARNINGS: setuptools' notice about editable installs is a boxed warning, not a problem.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==2.13.0
	PYTHONWARNINGS=ignore::UserWarning $(PY) -m pip install -q -e '.[train,fast,scale,web,openspiel,jax,dev]'
	touch $(STAMP)

play: $(STAMP)
	$(VENV)/bin/shelfie play

# Browser tests drive Debian's chromium; install it when it is missing (needs root or sudo).
chromium:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
	  ( if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	    $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq chromium )

lint: $(STAMP)
	$(VENV)/bin/ruff check .

# The wheel alone (core dependencies only) in a fresh venv outside the checkout plays the learned bot.
wheel-check: $(STAMP)
	bash scripts/wheel_check.sh $(PYTHON)

test: lint chromium wheel-check
	$(PY) -m pytest -q -n auto

serve: $(STAMP)
	$(VENV)/bin/shelfie serve

bench: $(STAMP)
	$(PY) scripts/bench_env.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
