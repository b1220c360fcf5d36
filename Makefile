VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# The interpreter .venv is made from: the distribution's optimised build when it has one
# (tools/find-python.sh says why), else python3 on PATH.
PYTHON ?= $(shell tools/find-python.sh)

.PHONY: install demo test lint typecheck bench clean system-packages

$(STAMP): pyproject.toml setup.py constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints.txt -e '.[all,dev]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(PY) -m cairn play --workdir $${WORKDIR:-.cairn-demo} --episodes 3 --fresh

lint: $(STAMP)
	$(VENV)/bin/ruff check app container.py setup.py tests bench examples
	@mkdir -p .typecheck && ln -sfn ../app .typecheck/cairn  # (see pyproject's [tool.mypy])
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports --no-cache

# The PostgreSQL server and Chromium for the store and report tests (installed when missing).
SYSTEM_PACKAGES := /usr/lib/postgresql/15/bin/initdb=postgresql-15 chromium=chromium

system-packages:
	@tools/system-packages.sh $(SYSTEM_PACKAGES)

test: $(STAMP) lint system-packages
	$(VENV)/bin/pytest

bench: $(STAMP)
	$(PY) bench/store_bench.py
	$(PY) bench/play_bench.py
	$(PY) bench/startup_bench.py
	$(PY) bench/report_bench.py

clean:
	rm -rf $(VENV) .cairn-demo .pytest_cache .mypy_cache .ruff_cache .typecheck
