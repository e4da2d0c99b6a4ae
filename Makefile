# The Positional Encoding Book: the project's front door.
#   make book   build the HTML book (sets up .venv first), every chapter executed, warnings = errors
#   make test   build the book, then run every test (library, notebooks, build, browser)
# Other targets: live, sync, lint, serve, bench, bench-rope, lab, clean. `make help` lists them.

SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
READER_STAMP := $(VENV)/.reader-installed
STAMP := $(VENV)/.installed
HTML := _build/html
PORT ?= 8000
# torch comes from PyTorch's CPU index (on Linux, plain PyPI's torch is the multi-GB CUDA build);
# only when that index cannot be reached does pip fall back to its configured indexes.
TORCH_CPU_INDEX ?= https://download.pytorch.org/whl/cpu
TORCH := $(shell grep -E '^torch==' requirements/reader.txt)
# JupyterLab refuses to start as root (containers, Binder-like machines) unless told it may.
ALLOW_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root)

.PHONY: help book test test-lib live sync lint serve bench bench-rope clean browser lab plotly-bundle

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/'

# The reader's set (make live): torch (CPU), the library with its widgets, JupyterLab, jupytext.
$(READER_STAMP): requirements/reader.txt pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --retries 1 --timeout 20 \
	  --index-url $(TORCH_CPU_INDEX) "$(TORCH)" || $(BIN)/python -m pip install --quiet "$(TORCH)"
	$(BIN)/python -m pip install --quiet -r requirements/reader.txt
	$(BIN)/python -m pip install --quiet --no-deps -e .
	@touch $@

# The developer's set (make book, make test): the reader's plus the build, tests, lint, type check.
$(STAMP): $(READER_STAMP) requirements.txt
	$(BIN)/python -m pip install --quiet -r requirements.txt
	@touch $@

# jupyter-cache keys a chapter by its own code only: when posenc_lib changes, drop the cache so
# that every chapter re-runs against the new library instead of showing stale outputs.
LIB_HASH = $(shell cat posenc_lib/*.py posenc_lib/*/*.py requirements.txt requirements/*.txt | sha256sum | cut -c1-16)
CACHE := _build/.jupyter_cache

book: $(STAMP)  ## build the HTML book into _build/html (executed notebooks are cached)
	@mkdir -p _build
	@if [ "$$(cat _build/.lib-hash 2>/dev/null)" != "$(LIB_HASH)" ]; then \
	  rm -rf $(CACHE) _build/.doctrees; echo "$(LIB_HASH)" > _build/.lib-hash; \
	  echo "posenc_lib changed: every chapter will be re-executed"; fi
	POSENC_STATIC=1 $(BIN)/jupyter-book build . -W -n --keep-going
	@echo "Open $(HTML)/index.html, or run: make serve"

# Debian's chromium for the browser tests, and a CJK font so that 我爱你 renders in screenshots.
BROWSER_PACKAGES := chromium fonts-wqy-zenhei

browser:  ## make sure Debian's chromium and a CJK font are installed (installs them when root)
	@missing=""; for p in $(BROWSER_PACKAGES); do \
	  dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	  else echo "Install Debian's$$missing (sudo apt-get install$$missing) for the browser tests"; exit 1; fi; fi

test: book browser  ## build the book, then run every test
	$(BIN)/python -m pytest

test-lib: $(STAMP)  ## only the library tests (no book build, no browser; 1.5-2.5 min on 2 cores)
	$(BIN)/python -m pytest -m "not book and not browser and not reader_env"

# jupyter_config/ (added to JUPYTER_CONFIG_PATH) opens .md chapters as notebooks and keeps the
# chapters' .ipynb twins output-free when saved; POSENC_STATIC is dropped so explorers are live.
live: $(READER_STAMP)  ## JupyterLab on the chapters, with live widgets (installs the reader's set only)
	env -u POSENC_STATIC JUPYTER_CONFIG_PATH="$(CURDIR)/jupyter_config$${JUPYTER_CONFIG_PATH:+:$$JUPYTER_CONFIG_PATH}" \
	  $(BIN)/jupyter lab $(ALLOW_ROOT) chapters/

# The twins' glued numbers come from the executed build (_build/jupyter_execute): build first.
sync: book  ## build the book, then re-pair every chapter .md with its output-free .ipynb
	$(BIN)/python scripts/sync_chapters.py

lint: $(STAMP)  ## ruff on the library, tests, benchmarks, scripts and chapter code; mypy on the library
	$(BIN)/ruff check posenc_lib tests benchmarks scripts _ext chapters
	$(BIN)/mypy posenc_lib

serve:  ## serve the built book on http://127.0.0.1:$(PORT)
	$(BIN)/python -m http.server $(PORT) --bind 127.0.0.1 --directory $(HTML)

# posenc_lib/static/plotly.min.js is committed (the build needs no node); this rebuilds it from npm
# (plotly.js at the version in js/plotly-bundle/package.json, locked by its package-lock.json).
plotly-bundle:  ## rebuild the partial plotly.js bundle from npm (needs node and npm)
	cd js/plotly-bundle && npm ci --no-audit --no-fund && node build.js

# The RoPE figures are CPU timings with one torch thread (OMP_NUM_THREADS=1, --threads 1), the
# setting the README and chapter 6 quote; no book build is needed for them.
bench-rope: $(STAMP)  ## the RoPE serving benchmark alone: prefill, decode steps, host syncs (CPU, 1 thread)
	OMP_NUM_THREADS=1 $(BIN)/python benchmarks/rope.py --threads 1

bench: book browser bench-rope  ## print every performance figure (RoPE, widgets; pages: needs the built book)
	$(BIN)/python benchmarks/widgets.py
	$(BIN)/python benchmarks/pages.py
	$(BIN)/python benchmarks/live.py
	$(BIN)/python benchmarks/live.py --lab

lab: $(STAMP)  ## retrain the chapter 9 lab (62 tiny models, 2 workers, ~30-60 min) into posenc_lib/lab/data
	OMP_NUM_THREADS=1 $(BIN)/python -m posenc_lib.lab run --workers 2

clean:  ## remove the built book and caches (keeps .venv)
	rm -rf _build .pytest_cache .ruff_cache .mypy_cache .hypothesis build
