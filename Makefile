# browserdeck — two commands from a fresh clone:
#   make run    install what is missing, then start the app
#   make test   install what is missing, then lint, type-check and run the whole test suite
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed


.PHONY: lock run serve test lint typecheck pytest bench peers fuzz browser system-deps node-clients widgets browserless clean package screenshots cli-args

# requirements.lock pins every transitive version we test with (pip freeze of .venv);
# refresh it with `make lock` after changing dependencies in pyproject.toml.
$(STAMP): pyproject.toml requirements.lock
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
	  { echo "browserdeck needs Python 3.11 or newer (found $$($(PYTHON) --version))"; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -c requirements.lock -e '.[dev]'
	touch $(STAMP)

lock: $(STAMP)
	$(PY) -m pip install -q -e '.[dev,package]'
	$(PY) -m pip freeze --exclude-editable | grep -v '^browserdeck' > requirements.lock

# Chromium (apt, when no Chrome/Chromium is found and we are root; else a clear message),
# and beside Debian's chromium its headless shell, which headless profiles launch.
browser:
	@sh packaging/ensure-system.sh browser

# What the GUI and its tests need from the OS (Qt's xcb libs, Xvfb, a tray host).
system-deps:
	@sh packaging/ensure-system.sh test

run: $(STAMP) browser
	$(VENV)/bin/browserdeck

serve: $(STAMP) browser
	$(VENV)/bin/browserdeck serve

lint: $(STAMP)
	$(VENV)/bin/ruff check app tests bench

typecheck: $(STAMP)
	$(VENV)/bin/mypy

# Third-party CDP clients (puppeteer-core, playwright-core) for the tests, from npm, into a
# gitignored scratch folder; tests find it through tests/support/node.py. Without npm the
# tests that need them skip and say so (in CI, CI=true, they fail instead).
NODE_CLIENTS := .cache/node-clients
node-clients: $(NODE_CLIENTS)/.installed
$(NODE_CLIENTS)/.installed: tests/node/package.json
	@if command -v npm >/dev/null 2>&1; then \
	  mkdir -p $(NODE_CLIENTS) && cp tests/node/package.json $(NODE_CLIENTS)/package.json && \
	  npm install --prefix $(NODE_CLIENTS) --no-audit --no-fund --loglevel=error >/dev/null && \
	  touch $@; \
	else echo "browserdeck: npm not found; tests with Puppeteer/Playwright for Node will skip"; fi

# Real widget libraries (a rich-text editor, data grids, code editors, a date picker ...)
# for the widget suite (tests/widgets) and bench/bench_widgets.py, from npm at the versions
# tests/widgets/package-lock.json pins, into the gitignored .cache/widgets; a local server
# serves their dist files (tests/widgets/server.py). Without npm those tests skip and say so
# (in CI they fail instead).
WIDGETS := .cache/widgets
widgets: $(WIDGETS)/.installed
$(WIDGETS)/.installed: tests/widgets/package.json tests/widgets/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
	  mkdir -p $(WIDGETS) && cp tests/widgets/package.json tests/widgets/package-lock.json $(WIDGETS)/ && \
	  npm ci --prefix $(WIDGETS) --no-audit --no-fund --loglevel=error >/dev/null && \
	  touch $@; \
	else echo "browserdeck: npm not found; the widget suite (tests/widgets) will skip"; fi

# The open-source Browserless server (a browser service) for the remote-profile tests and
# bench, from npm into the gitignored .cache/browserless, plus the link that makes its
# playwright-core find this machine's Chromium (tests/remote/browserless.py). Without
# npm those tests skip and say so.
browserless: $(STAMP) browser
	@$(PY) -m tests.remote.browserless install

pytest: $(STAMP) browser system-deps node-clients widgets browserless
	$(PY) -m pytest -q -p no:cacheprovider $(PYTEST_ARGS)

test: lint typecheck pytest

# The full API fuzz (schemathesis, every phase, >= 5,000 cases) against a real service;
# make test runs a short one (tests/chaos/test_fuzz.py).
fuzz: $(STAMP) browser
	$(PY) -m tests.chaos.fuzz 5000

bench: $(STAMP) browser widgets
	$(PY) bench/run_all.py

# The peers the benches compare against, from npm, outside the repo (bench/peers.py).
peers: $(STAMP)
	@command -v npm >/dev/null || { echo "npm is missing: install Node.js and npm (apt install npm) to benchmark the peers"; exit 1; }
	$(PY) -c "from bench import peers; import subprocess; subprocess.run(peers.INSTALL, shell=True, check=True)"

# A PyInstaller onedir bundle in dist/browserdeck, then started far enough to answer /health.
package: $(STAMP) system-deps
	$(PY) -m pip install -q -c requirements.lock -e '.[package]'
	$(VENV)/bin/pyinstaller --noconfirm --clean --log-level WARN packaging/browserdeck.spec
	$(PY) packaging/smoke_package.py dist/browserdeck

# app/browserdeck/cli/args.py: the CLI's page-command arguments, generated from the engine's
# request models (engine/options.py) so a CLI call needs no pydantic; tests/core/
# test_cli_args.py fails while it is stale.
cli-args: $(STAMP)
	$(PY) -m browserdeck.cli.schema

# docs/screenshots/*.png, captured from the real app under Xvfb.
screenshots: $(STAMP) browser system-deps
	$(PY) docs/screenshots/capture.py

clean:
	rm -rf $(VENV) build dist .mypy_cache .ruff_cache
