# The two commands: `make run` (set up + start the playground) and `make test` (set up + every test).
# Both work on a fresh machine: they create the venv, install npm packages and Chromium, build web/dist.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1
PORT ?= 5000
PYTEST_ARGS ?=

.PHONY: setup setup-run run test build chromium tiktoken-sdist lint bench clean

# `make run` installs only what running needs (the runtime dependencies, npm packages without
# devDependencies); `make test` adds the test and dev extras and every npm package.
setup-run: $(VENV)/.runtime node_modules/.runtime
setup: $(VENV)/.installed node_modules/.installed

$(VENV)/.runtime: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e .
	touch $@

$(VENV)/.installed: $(VENV)/.runtime
	$(PY) -m pip install -q -e '.[test,dev]'
	touch $@

# `npm ci` empties node_modules first, so each install leaves the markers of what it installed.
node_modules/.runtime: package.json package-lock.json
	npm ci --omit=dev --no-audit --no-fund --loglevel=error
	touch $@

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@ node_modules/.runtime

build: setup-run
	$(PY) -c 'from tokenizer.encodings import build_blobs; build_blobs()'
	$(PY) build_wasm.py

chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  echo "installing Debian's chromium (browser tests drive it)"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q chromium; }

# tiktoken's own tests (from its sdist, for the installed version) run against tokenizer.compat.
tiktoken-sdist: setup
	@v=$$($(PY) -c 'import importlib.metadata as m; print(m.version("tiktoken"))'); \
	test -f .cache/tiktoken-sdist/tiktoken-$$v.tar.gz || \
	$(PY) -m pip download -q --no-deps --no-binary :all: tiktoken==$$v -d .cache/tiktoken-sdist

run: setup-run build
	$(PY) server.py --host $(HOST) --port $(PORT)

test: setup build chromium tiktoken-sdist
	$(PY) -m pytest $(PYTEST_ARGS)

lint: setup
	$(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check .

bench: build
	$(PY) -m pip install -q -e '.[bench]'
	$(PY) bench/encode.py
	$(PY) bench/train.py

clean:
	rm -rf web/dist tokenizer/_data build dist *.egg-info
