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

.PHONY: setup site-deps python-deps js-deps node chromium site test test-fast lint format bench serve goldens mutate clean help

help:
	@echo "make site    install what is missing, then build the site into site/"
	@echo "make test    install what is missing (chromium too), then run every test"
	@echo "make test-fast  the tests that need no browser, no shared data and under ~30 s each"
	@echo "make lint    ruff check + ruff format --check (part of make test); make format rewrites the files"
	@echo "make bench   speed and size benchmarks (table + bench/results.json)"
	@echo "make serve   preview site/ on http://127.0.0.1:8000"
	@echo "make goldens re-record the screenshot goldens after an intended visual change"
	@echo "make mutate  mutation testing (mutmut) of the small numeric modules; slow, not part of make test"

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

# Mutation testing: mutmut changes one thing at a time in MUTATE_PATHS (in place, restored afterwards: do not
# edit those files meanwhile) and runs MUTATE_TESTS; a mutant the tests still pass "survives". Hours on 2 cores
# for everything; narrow it, e.g. make mutate MUTATE_PATHS=nilmbuild/infer/metrics.py MUTATE_TESTS=tests/test_infer_metrics.py
# Results: .mutmut-cache, `mutmut results`, `mutmut show ID`. Record the survivors in docs/testing.md.
# Covered: the model (what-ifs, checkpoint loading), metrics, post-processing, seq2subseq, the scalers
# (data/preprocess.py), the live model's affines (live/export.py), the cache unpickler, pcgrad, the capture format.
# Not mutmut's: static/js/url_state.js and the other JS (mutmut mutates Python only; tests/js/*.test.mjs and the
# browser tests cover them). The issue-18 checkpoint importer and the issue-21 NILMTK loader: add their modules and
# tests here when they land.
MUTATE_PATHS ?= nilmbuild/model/,nilmbuild/infer/postprocess.py,nilmbuild/infer/metrics.py,nilmbuild/infer/seq2subseq.py,nilmbuild/data/preprocess.py,nilmbuild/live/export.py,nilmbuild/pickle_store.py,nilmbuild/train/pcgrad.py,nilmbuild/capture/format.py
MUTATE_TESTS ?= tests/test_model.py tests/test_infer_postprocess.py tests/test_infer_metrics.py tests/test_infer_values.py \
                tests/test_reference_values.py tests/test_whatif_reference.py tests/test_infer_seq2subseq.py \
                tests/test_data_preprocess.py tests/test_security_loaders.py \
                tests/test_train_pcgrad.py tests/test_format.py tests/test_fuzz_readers.py tests/test_gate_calibration.py

mutate: setup
	$(BIN)/mutmut run --paths-to-mutate "$(MUTATE_PATHS)" --tests-dir tests --no-progress \
	  --runner "$(PY) -m pytest -x -q -p no:cacheprovider $(MUTATE_TESTS)" || true
	$(BIN)/mutmut results

clean:
	rm -rf $(VENV) node_modules .pytest_cache
	@echo "site/ is left alone; \`nilmbuild site\` rewrites only the files it wrote there"
