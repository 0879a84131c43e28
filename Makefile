# qspace-frames: `make run` and `make test` bootstrap everything on a fresh machine.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
NAME   ?= default
CORPUS ?= sample_corpus
PARAMS ?= params/default.yaml

.PHONY: run test test-fast lab notebooks sweep bench clean-store help

help:
	@echo "make run        run every notebook on $(CORPUS) with $(PARAMS); report in reports/$(NAME)/"
	@echo "make test       unit, property and notebook (nbval) tests, and end-to-end runs through the notebooks"
	@echo "make test-fast  the inner loop (a few minutes): tests/ without the slow tiers (real corpora, notebooks, browser, Ray)"
	@echo "make lab        JupyterLab on notebooks/ with the project kernel"
	@echo "make notebooks  re-execute notebooks/ in place (the stored outputs nbval compares against)"
	@echo "make sweep      trees and evaluation once per params/weights/*.yaml, then the comparison notebook"
	@echo "make bench      throughput and peak memory on CUAD txt (x1, x4, x16) and PDFs; results in reports/bench/"

# Create the virtual environment and install on first use (or when pyproject.toml changes).
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	$(BIN)/qspace kernel
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/qspace run --corpus $(CORPUS) --params $(PARAMS) --name $(NAME)

# The report tests open the pages in headless Chromium (Debian's chromium and chromium-driver).
BROWSER := /usr/bin/chromedriver
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

$(BROWSER):
	$(SUDO) apt-get update -qq && $(SUDO) DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null

test: $(STAMP) $(BROWSER)
	$(BIN)/python -m pytest

test-fast: $(STAMP)
	$(BIN)/python -m pytest tests -m "not slow"

lab: $(STAMP)
	$(BIN)/jupyter lab notebooks/

notebooks: $(STAMP)
	$(BIN)/qspace notebooks

sweep: $(STAMP)
	$(BIN)/qspace sweep params/weights/*.yaml --corpus $(CORPUS)

bench: $(STAMP)
	$(BIN)/qspace bench

clean-store:
	rm -rf reports/store
