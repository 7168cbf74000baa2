# The verbs of blog-api. Every target installs what it needs first, so each works from a fresh clone.
# The venv, so the tests, the server and the benchmark, run on the Python of Lambda's runtime (the stack's
# default, python3.12): found on PATH, else among pyenv's versions (a pyenv shim counts only if it runs).
# PYTHON=/path/to/python picks another interpreter.
RUNTIME_PYTHON ?= 3.12
PYTHON ?= $(or $(shell for p in python$(RUNTIME_PYTHON) \
  $$(ls -d $${PYENV_ROOT:-$$HOME/.pyenv}/versions/$(RUNTIME_PYTHON).*/bin/python$(RUNTIME_PYTHON) 2>/dev/null | sort -rV); \
  do "$$p" -c '' 2>/dev/null && { echo "$$p"; break; }; done),\
  $(error Python $(RUNTIME_PYTHON), Lambda's runtime, was not found: install it (pyenv install $(RUNTIME_PYTHON)) or set PYTHON=))
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp-$(RUNTIME_PYTHON)
# A venv made by another Python (an older checkout's) is made again, empty, by the one above.
MAKE_VENV = @[ "$$($(BIN)/python -c 'import sys; print(sys.version)' 2>/dev/null)" = \
  "$$($(PYTHON) -c 'import sys; print(sys.version)')" ] || $(PYTHON) -m venv --clear $(VENV)
# What serving needs (the project's own dependencies): `make run` installs only this, in seconds;
# the dev extra (test tools, Pulumi, moto...) comes with `make install`, `make test` and the rest.
RUN_STAMP := $(VENV)/.installed-run-stamp-$(RUNTIME_PYTHON)
# `make run PORT=5001 HOST=0.0.0.0` when 5000 is taken or another machine must reach the server.
PORT ?= 5000
HOST ?= 127.0.0.1
# What `make install` installs or upgrades before the lock: the newest by default; CI pins exact versions.
PIP_TOOLS ?= pip uv

# What `make run` serves: REPO, a Zenn-shaped repository (its root, or its articles/ folder), else the
# sample. Each folder gets its own SQLite database, so the sample's articles never enter your blog's.
REPO ?=
# The settings `make run` fixes, each unless given on make's command line (`make run ARTICLE_SOURCE=dir:..`):
# a DATABASE_URL or ARTICLE_SOURCE exported in the shell for something else is never used, nor written to,
# by a local server. Every other setting of docs/configuration.md (SITE_URL, LOG_LEVEL, ...) reaches the
# app from make's command line or the environment as it is.
given = $(if $(filter command line,$(origin $(1))),$($(1)),$(2))
RUN_SOURCE := $(call given,ARTICLE_SOURCE,dir:$(or $(REPO),examples/articles))
RUN_FOLDER := $(patsubst dir:%,%,$(filter dir:%,$(RUN_SOURCE)))
# Named after the repository's folder (its parent when REPO names the articles/ folder itself).
run_root = $(if $(filter articles,$(notdir $(1))),$(patsubst %/,%,$(dir $(1))),$(1))
RUN_DATABASE := .data/$(if $(filter-out examples/articles,$(RUN_FOLDER)),$(notdir $(call run_root,$(abspath $(RUN_FOLDER)))),blog).db
RUN_ENV := GITHUB_WEBHOOK_SECRET=$(call given,GITHUB_WEBHOOK_SECRET,dev-secret) \
           ARTICLE_SOURCE=$(RUN_SOURCE) \
           DATABASE_URL=$(call given,DATABASE_URL,sqlite:///$(RUN_DATABASE))

.PHONY: install install-run run preview test test-tidb check bench package lock lock-check mariadb-server docs clean

install: $(STAMP)

# Exactly the versions of uv.lock (hash-checked; refused if the lock is stale), then the project.
$(STAMP): pyproject.toml uv.lock
	$(MAKE_VENV)
	$(BIN)/python -m pip install -q --upgrade $(PIP_TOOLS)
	$(BIN)/python -m uv export --locked --extra dev --no-emit-project --no-header --format requirements-txt \
	  --quiet -o $(VENV)/requirements-dev.lock.txt
	$(BIN)/python -m pip install -q --require-hashes -r $(VENV)/requirements-dev.lock.txt
	$(BIN)/python -m pip install -q --no-deps -e .
	@touch $(STAMP) $(RUN_STAMP) $(PREVIEW_STAMP)

install-run: $(RUN_STAMP)

# The runtime's part of uv.lock only (the versions the Lambda zip carries), then the project.
$(RUN_STAMP): pyproject.toml uv.lock
	$(MAKE_VENV)
	$(BIN)/python -m pip install -q --upgrade $(PIP_TOOLS)
	$(BIN)/python -m uv export --locked --no-emit-project --no-header --format requirements-txt \
	  --quiet -o $(VENV)/requirements.lock.txt
	$(BIN)/python -m pip install -q --require-hashes -r $(VENV)/requirements.lock.txt
	$(BIN)/python -m pip install -q --no-deps -e .
	@touch $(RUN_STAMP)

# The folder is synced before serving, so it is served from the first request; a refused or partial sync
# is said by the sync itself, and the server starts all the same.
run: install-run
	@mkdir -p .data
	$(RUN_ENV) $(BIN)/blog-api init-db
	$(RUN_ENV) $(BIN)/blog-api users add --name demo --email demo@example.com --installation-id 1 --if-missing
	$(RUN_ENV) $(BIN)/blog-api sync --user demo || true
	$(RUN_ENV) $(BIN)/python -m flask --app function.app run --host $(HOST) --port $(PORT)

# `make preview REPO=path/to/your/zenn-repo`: your articles and books in the browser as readers will see
# them, drafts included, re-synced on every save (blog-api preview; PORT=8001 for another port).
PREVIEW_STAMP := $(VENV)/.installed-preview-stamp

preview: $(PREVIEW_STAMP)
	@test -n "$(REPO)" || { echo "make preview REPO=path/to/your/zenn-repo (e.g. REPO=examples/articles)" >&2; exit 2; }
	$(BIN)/blog-api preview "$(REPO)" $(if $(filter command line,$(origin PORT)),--port $(PORT))

# The runtime's part of uv.lock and the watcher (the preview extra), then the project.
$(PREVIEW_STAMP): pyproject.toml uv.lock
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade $(PIP_TOOLS)
	$(BIN)/python -m uv export --locked --extra preview --no-emit-project --no-header --format requirements-txt \
	  --quiet -o $(VENV)/requirements-preview.lock.txt
	$(BIN)/python -m pip install -q --require-hashes -r $(VENV)/requirements-preview.lock.txt
	$(BIN)/python -m pip install -q --no-deps -e .
	@touch $(PREVIEW_STAMP)

# The MariaDB binaries for the throwaway test server (the tests start and stop the server themselves).
mariadb-server:
	@if [ -n "$$TEST_DATABASE_URL" ] || command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ]; then :; \
	elif [ "$$(id -u)" = "0" ]; then \
	  echo "Installing mariadb-server with apt (needed for the database tests)..."; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mariadb-server >/dev/null; \
	else \
	  echo "The database tests need MariaDB: run 'sudo apt-get install mariadb-server'," \
	       "or set TEST_DATABASE_URL=mysql://user:pw@127.0.0.1:3306/db to use a server you run." >&2; exit 1; \
	fi

test: install mariadb-server
	$(BIN)/python -m pytest

check: install lock-check
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

# The tables of docs/configuration.md and docs/deploying.md, from the declarations of the settings and
# the stack keys (a test fails while a committed table is stale).
docs: install
	$(BIN)/python -m function.settings_docs --write docs/configuration.md
	$(BIN)/python -m infra.stack_docs --write docs/deploying.md
	$(BIN)/python -m function.store.error_docs --write docs/operating.md

# The store, worker and outgoing-webhook suites on the TiDB-faithful test database (tests/kit/tidb_proxy.py):
# their MariaDB tests through the relay that enforces what TiDB enforces (docs/development.md).
test-tidb: install mariadb-server
	TEST_TIDB_MODE=1 $(BIN)/python -m pytest tests/store tests/worker tests/hooks tests/kit -m mysql

bench: install mariadb-server
	$(BIN)/python -m bench

# The renderer against Zenn's own (zenn-markdown-html), feature by feature, on tools/parity's corpus;
# parity-zenn re-renders the corpus with Zenn's renderer (Node + npm, into the ignored .parity/).
.PHONY: parity parity-zenn
parity: install
	$(BIN)/python -m tools.parity check

parity-zenn: install
	@mkdir -p .parity
	cp tools/parity/package.json tools/parity/package-lock.json .parity/
	cd .parity && npm ci --no-audit --no-fund --silent
	$(BIN)/python -m tools.parity zenn

# The Lambda zip from uv.lock, compiled by the runtime's Python (python3.12 on PATH, pyenv, or
# BLOG_API_BUILD_PYTHON); PYTHON_VERSION=3.13 for a python3.13 stack.
PYTHON_VERSION ?= $(RUNTIME_PYTHON)
package: install
	$(BIN)/python -m infra.packaging --out build --python-version $(PYTHON_VERSION)

# Refresh uv.lock after a pyproject.toml change (pins kept where still allowed); UPGRADE=1 moves every
# pin to the newest allowed version. UV_OFFLINE=1 resolves from uv's cache alone.
lock:
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@$(BIN)/python -m uv --version >/dev/null 2>&1 || $(BIN)/python -m pip install -q uv
	$(BIN)/python -m uv lock $(if $(UPGRADE),--upgrade)

# Fails when uv.lock no longer matches pyproject.toml; needs no network.
lock-check:
	$(BIN)/python -m uv lock --check --offline

clean:
	rm -rf build .data .pytest_cache .mypy_cache .ruff_cache
