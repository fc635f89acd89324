# nilmbuild: two commands do everything on a fresh machine.
#   make site   installs what is missing (Python venv with torch==2.13.0, node + npm, npm packages), builds site/; no browser
#   make test   the same set-up plus Debian chromium, then the whole test suite (Python, node, browser); under CI
#               (CI=true) a test that would skip for a missing dependency fails instead (tests/conftest.py)
# Every set-up step is a no-op when its result is already there.
# TORCH_INDEX=https://download.pytorch.org/whl/cpu installs the CPU-only torch wheel (the Pages workflow does).

SHELL   := /bin/bash
PYTHON  ?= python3
VENV    ?= .venv
BIN     := $(VENV)/bin
PY      := $(BIN)/python
CHROMIUM ?= /usr/bin/chromium
PYTEST_ARGS ?=
TORCH_INDEX ?=
FAST_TESTS  := not browser and not slow and not realdata

.PHONY: setup site-deps python-deps js-deps node chromium site test test-fast lint format bench serve goldens mutate mutmut clean help

help:
	@echo "make site    install what is missing, then build the site into site/"
	@echo "make test    install what is missing (chromium too), then run every test"
	@echo "make test-fast  the tests that need no browser, no shared data and under ~30 s each"
	@echo "make lint    ruff check + ruff format --check (part of make test); make format rewrites the files"
	@echo "make bench   speed and size benchmarks (table + bench/results.json)"
	@echo "make serve   preview site/ on http://127.0.0.1:8000"
	@echo "make goldens re-record the screenshot goldens after an intended visual change"
	@echo "make mutate  deliberate mutants of the numeric modules, file loaders and URL state (scripts/mutants.py); hours, not part of make test"
	@echo "make mutmut  mutmut over whole files; hours"

site-deps: python-deps js-deps
setup: site-deps chromium

python-deps: $(VENV)/.installed
$(VENV)/.installed: pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check torch==2.13.0 $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX))
	$(PY) -m pip install -q --disable-pip-version-check -e '.[test]'
	@touch $@

js-deps: node node_modules/.installed
node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# node runs the JS tests and npm installs the pages' packages: Debian's nodejs + npm when either is missing
node:
	@if command -v node >/dev/null && command -v npm >/dev/null; then exit 0; fi; \
	echo "node or npm not found: installing Debian's nodejs and npm"; \
	if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq nodejs npm >/dev/null \
	  || { echo "could not install node: run 'apt-get install -y nodejs npm' as root, or install Node.js 20+"; exit 1; }

chromium:
	@if [ -x "$(CHROMIUM)" ]; then exit 0; fi; \
	echo "Chromium not found at $(CHROMIUM): installing Debian's chromium (playwright install cannot download browsers here)"; \
	if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null \
	  || { echo "could not install chromium: run 'apt-get install -y chromium' as root, or set CHROMIUM=/path/to/chromium"; exit 1; }

site: site-deps
	$(BIN)/nilmbuild site

test: setup lint
	NILMBUILD_CHROMIUM=$(CHROMIUM) $(PY) -m pytest -q $(PYTEST_ARGS)

lint: python-deps
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: python-deps
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

test-fast: site-deps
	$(PY) -m pytest -q -m "$(FAST_TESTS)" $(PYTEST_ARGS)

bench: setup
	NILMBUILD_CHROMIUM=$(CHROMIUM) $(PY) -m nilmbuild.bench

serve: site
	$(BIN)/nilmbuild serve

goldens: setup
	NILMBUILD_UPDATE_GOLDENS=1 NILMBUILD_CHROMIUM=$(CHROMIUM) $(PY) -m pytest -q tests/browser

# Mutation testing (docs/testing.md, "Mutation testing").
# make mutate: scripts/mutants.py applies the standard mutations (comparison and boundary, arithmetic, boolean,
# constants, min/max swaps, removed statements and raises) one at a time to each module in MUTANTS and runs only
# that module's tests with -x, in a child forked from a parent that imported torch once, against a scratch copy
# in /tmp (the checkout is never touched). JS modules (url_state) are mutated the same way: scripts/js_mutants.mjs
# lists their mutants with acorn (npm), and their tests are node's, then Chromium's. `scripts/mutants.py --list`
# names the modules and counts their mutants; all of them take a few hours on 2 shared cores; narrow it, e.g.
# make mutate MUTANTS="postprocess scalers". Survivors are listed at the end and in /tmp/nilmbuild-mutants/NAME.json.
# make mutmut: mutmut over whole Python files (MUTATE_PATHS, in place, restored afterwards: do not edit those files
# meanwhile) with every test file in MUTATE_TESTS per mutant: hours on 2 cores.
MUTANTS ?=
MUTATE_ARGS ?= --jobs 2 --skip-none
MUTATE_PATHS ?= nilmbuild/model/,nilmbuild/infer/postprocess.py,nilmbuild/infer/metrics.py,nilmbuild/infer/seq2subseq.py,nilmbuild/data/preprocess.py,nilmbuild/live/export.py,nilmbuild/pickle_store.py,nilmbuild/train/pcgrad.py,nilmbuild/capture/format.py
MUTATE_TESTS ?= tests/test_model.py tests/test_infer_postprocess.py tests/test_infer_metrics.py tests/test_infer_values.py \
                tests/test_reference_values.py tests/test_whatif_reference.py tests/test_infer_seq2subseq.py \
                tests/test_data_preprocess.py tests/test_security_loaders.py \
                tests/test_train_pcgrad.py tests/test_format.py tests/test_fuzz_readers.py tests/test_gate_calibration.py

mutate: setup
	OMP_NUM_THREADS=1 NILMBUILD_CHROMIUM=$(CHROMIUM) nice -n 19 $(PY) scripts/mutants.py $(MUTATE_ARGS) $(MUTANTS)

mutmut: setup
	$(BIN)/mutmut run --paths-to-mutate "$(MUTATE_PATHS)" --tests-dir tests --no-progress \
	  --runner "$(PY) -m pytest -x -q -p no:cacheprovider $(MUTATE_TESTS)" || true
	$(BIN)/mutmut results

clean:
	rm -rf $(VENV) node_modules .pytest_cache
	@echo "site/ is left alone; \`nilmbuild site\` rewrites only the files it wrote there"
