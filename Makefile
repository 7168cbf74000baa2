# The verbs of blog-api. Every target installs what it needs first, so each works from a fresh clone.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

# Embedded defaults for `make run`.
RUN_ENV := GITHUB_WEBHOOK_SECRET=dev-secret ARTICLE_SOURCE=dir:examples/articles \
           DATABASE_URL=sqlite:///.data/blog.db

.PHONY: install run test check bench package mariadb-server clean

install: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	@touch $(STAMP)

run: install
	@mkdir -p .data
	$(RUN_ENV) $(BIN)/blog-api init-db
	$(RUN_ENV) $(BIN)/blog-api users add --name demo --email demo@example.com --installation-id 1 --if-missing
	$(RUN_ENV) $(BIN)/flask --app function.app run --host 127.0.0.1 --port 5000

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

check: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

bench: install mariadb-server
	$(BIN)/python -m bench

package: install
	$(BIN)/python -m infra.packaging --out build

clean:
	rm -rf build .data .pytest_cache .mypy_cache .ruff_cache
