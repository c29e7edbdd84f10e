# The commands the README names. Set-up is idempotent: a second run reuses .venv and only
# reinstalls when a requirements file or pyproject.toml changed.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
PORT   ?= 8888
# Which torch build set-up installs (tools/install_torch.py): auto = the CPU build on Linux
# without an NVIDIA GPU, PyPI's default elsewhere (CUDA on Linux with a GPU; CPU/MPS on macOS,
# CPU on Windows). TORCH=cpu or TORCH=pypi forces one.
TORCH  ?= auto
# CONSTRAINTS=1 installs the exact versions of constraints.txt (the last green CI run): use it
# when a new release of a dependency breaks something. Its own stamps, so that switching reinstalls.
PIN    := $(if $(CONSTRAINTS),-c constraints.txt)
STAMP  := $(VENV)/.setup-stamp$(if $(CONSTRAINTS),-constraints)
DEV_STAMP := $(VENV)/.dev-stamp$(if $(CONSTRAINTS),-constraints)
# The course's JupyterLab settings (tools/lab/), read by the JupyterLab of $(VENV): no news
# pop-up, and opening a lesson with another Python version does not rewrite its metadata
LAB_FILES := $(VENV)/share/jupyter/lab/settings/overrides.json $(VENV)/etc/jupyter/jupyter_server_config.py
ALLOW_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root,)
# pytest-xdist workers for the notebooks (two fit a 2-core laptop)
WORKERS ?= 2

# Two notebooks run at once on two cores: one BLAS/OpenMP thread each avoids oversubscription
# (a torch step takes several times the CPU time with 2 threads per kernel on 2 busy cores).
test notebooks execute browser-check: export OMP_NUM_THREADS = 1
test notebooks execute browser-check: export MKL_NUM_THREADS = 1
# ... and a notebook that builds missing caches builds one at a time (helpers.infra.cache), not
# one per core: the cores are already taken by the two notebooks.
test notebooks browser-check: export NLP_COURSE_WORKERS = 1

.PHONY: setup dev lab test unit fuzz notebooks browser-check bench lint doctor constraints \
	execute student clean models site html site-check figures

## setup: the student's environment: requirements.txt (what the lessons need) in .venv
setup: $(STAMP)

## dev: the maintainers' environment: requirements-dev.txt (tests, lint, site, browser check) too
dev: $(DEV_STAMP)

# The course package first: it is small, and pip stops at once with a clear message when the
# Python version is outside pyproject.toml's requires-python. Then torch's build, then the rest.
$(STAMP): requirements.txt pyproject.toml tools/install_torch.py $(if $(CONSTRAINTS),constraints.txt)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade pip
	$(BIN)/python -m pip install --no-deps -e .
	$(BIN)/python tools/install_torch.py --build $(TORCH) $(if $(CONSTRAINTS),--constraint constraints.txt)
	$(BIN)/python -m pip install -r requirements.txt $(PIN)
	touch $(STAMP)

$(DEV_STAMP): $(STAMP) requirements-dev.txt
	$(BIN)/python -m pip install -r requirements-dev.txt $(PIN)
	touch $(DEV_STAMP)

$(VENV)/share/jupyter/lab/settings/overrides.json: tools/lab/overrides.json $(STAMP)
	mkdir -p $(dir $@) && cp $< $@

$(VENV)/etc/jupyter/jupyter_server_config.py: tools/lab/jupyter_server_config.py $(STAMP)
	mkdir -p $(dir $@) && cp $< $@

## lab: set up, then open the course in JupyterLab, in student/ (your copies of the lessons)
lab: setup $(LAB_FILES)
	@test -d student || $(BIN)/python tools/make_student.py
	@echo ""
	@echo "  Start with student/01_feedforward.ipynb: your copy of lesson 01, to write in and run."
	@echo "  The lessons as published are in notebooks/ (one folder up in JupyterLab's file browser)."
	@echo ""
	$(BIN)/jupyter lab --ServerApp.root_dir=. --LabApp.default_url=/lab/tree/student \
		--port=$(PORT) $(ALLOW_ROOT)

## test: the maintainers' set-up, then the unit tests and every notebook executed with nbval
# A worker runs whole files (--dist loadfile); xdist hands them out by their number of items, most
# first (not in the order given): the ten lessons and the big test files start early, the many
# short files fill the end, and the two workers finish together. The slowest items are listed.
test: dev
	$(BIN)/python -m pytest -n $(WORKERS) --dist loadfile --durations=20 notebooks tests solutions \
		--nbval-lax --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg -p no:cacheprovider

unit: dev
	$(BIN)/python -m pytest -n $(WORKERS) tests -p no:cacheprovider

## fuzz: maintainers: the property-based tests (every @given test) with the long hypothesis profile
# (tests/conftest.py: 50 times the examples of `make test`, fresh random ones each run; tens of minutes)
fuzz: dev
	HYPOTHESIS_PROFILE=fuzz $(BIN)/python -m pytest -n $(WORKERS) tests -m hypothesis -p no:cacheprovider

notebooks: dev
	$(BIN)/python -m pytest -n $(WORKERS) --dist loadfile notebooks solutions \
		--nbval-lax --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg -p no:cacheprovider

## browser-check: open every notebook in JupyterLab in headless Chromium, run it, move sliders
browser-check: dev
	$(BIN)/python -m tools.browser_check --jobs $(WORKERS) $(NB)

## site: the whole course as a static website in build/site/ (open build/site/index.html): built
# offline from the committed notebooks, nothing executed; solutions in its instructors' section
site: dev
	$(BIN)/python tools/build_site.py

## html: one lesson as a web page, the same way: make html NB=notebooks/05_tfidf_svd.ipynb
html: dev
	@test -n "$(NB)" || { echo "make html needs the lesson: make html NB=notebooks/05_tfidf_svd.ipynb"; exit 1; }
	$(BIN)/python tools/build_site.py --lesson $(NB)

## site-check: open build/site in headless Chromium with the network blocked; formulas, images, links, no solution
site-check: dev
	$(BIN)/python -m tools.site_check

bench: dev
	for b in benchmarks/bench_*.py; do $(BIN)/python $$b || exit 1; done

## lint: ruff over the code, and a spell check of the prose (notebook markdown, *.md files)
lint: dev
	$(BIN)/ruff check helpers tests training benchmarks tools
	$(BIN)/python tools/spellcheck.py

## doctor: check this computer's set-up; prints each problem with the command that fixes it
# (no dependency on setup: it must also run, and say what is wrong, when set-up failed)
doctor:
	@test -x $(BIN)/python || { echo "doctor: there is no $(VENV) yet: run \`make setup\` first"; exit 1; }
	$(BIN)/python tools/doctor.py

## constraints: rewrite constraints.txt from a fresh set-up of both requirement files (then run
# `make test` before committing it)
constraints:
	rm -rf .venv-constraints
	$(MAKE) dev VENV=.venv-constraints
	.venv-constraints/bin/python tools/freeze_constraints.py constraints.txt
	rm -rf .venv-constraints

## execute: re-run every notebook in place so the committed outputs are a clean run
# (no per-cell timestamps; tools/clean_notebooks.py then drops widget state, keeps the final line
# of each text progress bar and sets the kernel that the course's environment registers)
execute: setup
	for nb in $(or $(NB),notebooks/*.ipynb); do \
		$(BIN)/jupyter nbconvert --to notebook --execute --inplace \
			--ExecutePreprocessor.timeout=1200 --ExecutePreprocessor.record_timing=False $$nb || exit 1; \
	done
	$(BIN)/python tools/clean_notebooks.py $(or $(NB),notebooks/*.ipynb)

## student: write student copies of the lessons into student/ (solutions removed, exercise outputs
# cleared); a copy you have written in is kept unless FORCE=1
student: setup
	$(BIN)/python tools/make_student.py $(if $(FORCE),--force) $(NB)

## models: train the course's shipped models into data/models/ (all, or NAME=<name>; JOBS=n at a time)
# Each training runs in its own process with OMP/MKL/OpenBLAS threads fixed before NumPy loads
# (training/__main__.py); by default one training per CPU core.
models: setup
	$(BIN)/python -m training $(or $(NAME),--all) $(if $(JOBS),--jobs $(JOBS))

## figures: redraw every diagram in notebooks/figures/ from tools/diagrams (same bytes every run)
figures: setup
	$(BIN)/python -m tools.diagrams

clean:
	rm -rf $(VENV) .pytest_cache
