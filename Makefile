# LLM Sizer — two commands on a fresh clone: `make run` and `make test` (see README.md).
SHELL := /bin/bash
.DEFAULT_GOAL := run
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8000
HOST ?= 127.0.0.1
WORKERS ?= 2

# The first Python >= 3.12 on this machine: python3.13, python3.12, then pyenv's installed versions.
# (pyenv's shims refuse to run without PYENV_VERSION, so the versions directory is searched directly.)
PYTHON_BOOT := $(shell for c in python3.13 python3.12 $$(ls -d $${PYENV_ROOT:-$$HOME/.pyenv}/versions/3.1[2-9]*/bin/python3 2>/dev/null | sort -rV) python3; do \
	  p=$$(command -v $$c 2>/dev/null) || continue; \
	  "$$p" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' >/dev/null 2>&1 && { echo "$$p"; break; }; \
	done)

# Local, plain-HTTP settings for `make run`; production sets its own environment (README.md).
LOCAL_ENV := SECRET_KEY="$$(cat var/secret_key)" ALLOWED_HOSTS="127.0.0.1,localhost" DEBUG=False HTTPS=False

.PHONY: run test venv setup migrate catalog translations static browser-deps test-services postgres-test check-deploy clean

$(VENV)/.installed: requirements.txt
	@if [ -z "$(PYTHON_BOOT)" ]; then echo "No Python >= 3.12 found (tried python3.13, python3.12 and ~/.pyenv/versions/3.12+). Install one, e.g. 'pyenv install 3.12'." >&2; exit 1; fi
	@test -x $(PY) || $(PYTHON_BOOT) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	@touch $@

venv: $(VENV)/.installed

var/secret_key:
	@mkdir -p var
	@$(PYTHON_BOOT) -c 'import secrets; print(secrets.token_urlsafe(50))' > $@
	@chmod 600 $@

# Compile .po → .mo with Babel (no system gettext needed).
translations: venv
	@$(VENV)/bin/pybabel compile --domain django --directory locale --statistics 2>&1 | grep -v '^$$' || true
	@test -f locale/de/LC_MESSAGES/django.mo

setup: venv var/secret_key translations
	$(LOCAL_ENV) $(PY) manage.py migrate --noinput
	$(LOCAL_ENV) $(PY) manage.py load_catalog
	$(LOCAL_ENV) $(PY) manage.py collectstatic --noinput --verbosity 0

run: setup
	@echo "Serving on http://$(HOST):$(PORT)/ (Ctrl-C to stop)"
	$(LOCAL_ENV) $(VENV)/bin/gunicorn sizer_site.wsgi:application --config gunicorn.conf.py --bind $(HOST):$(PORT) --workers $(WORKERS) \
		--access-logfile - --forwarded-allow-ips=127.0.0.1

# Debian's Chromium for the browser tests (Playwright drives /usr/bin/chromium; it cannot download its own).
browser-deps:
	@if [ ! -x /usr/bin/chromium ]; then \
		if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
		else echo "Chromium missing: run 'sudo apt-get install chromium' (browser tests will be skipped)"; fi; \
	fi

# Debian's PostgreSQL and Redis servers for the scale-out tests (the tests start and stop their own instances), and
# GNU gettext for the test that runs makemessages (tests/test_translations.py).
# Installed when run as root and missing; otherwise those runs say why they were skipped.
test-services:
	@missing=""; \
	ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null || missing="postgresql"; \
	command -v redis-server >/dev/null || [ -x /usr/bin/redis-server ] || missing="$$missing redis-server"; \
	command -v xgettext >/dev/null || missing="$$missing gettext"; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" = 0 ]; then \
			echo "Installing Debian's$$missing for the tests"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null \
				|| echo "Could not install$$missing: those tests will be skipped"; \
		else echo "Missing$$missing: run 'sudo apt-get install$$missing' (those tests will be skipped)"; fi; \
	fi

# pytest with its exit status; "no tests collected" (5) counts as a failure, since a run that tested nothing passed nothing.
PYTEST := TESTING=True $(PY) -m pytest -q -p no:cacheprovider
define no_tests_is_failure
status=$$?; if [ $$status -eq 5 ]; then echo "$(1): pytest collected no tests: failing" >&2; status=1; fi
endef
# The database-backed tests again on a PostgreSQL server started for the run (scripts/with_postgres.sh; skipped
# with a message when PostgreSQL is unavailable). The pure engine tests gave their answer in the SQLite run.
PG_RUN := PYTHON=$(PY) scripts/with_postgres.sh env $(PYTEST) -m "not browser" -p scripts.pytest_db_only

# The whole suite on SQLite, then the database-backed tests on PostgreSQL; fails if either run fails.
test: venv translations browser-deps test-services
	@mkdir -p var
	@echo "== SQLite: the whole suite"; \
	$(PYTEST); $(call no_tests_is_failure,SQLite run); sqlite_status=$$status; \
	echo "== PostgreSQL: the database-backed tests"; start=$$(date +%s); \
	$(PG_RUN); $(call no_tests_is_failure,PostgreSQL run); pg_status=$$status; \
	echo "== exit status: SQLite run $$sqlite_status, PostgreSQL run $$pg_status ($$(( $$(date +%s) - start )) s)"; \
	[ $$sqlite_status -eq 0 ] && [ $$pg_status -eq 0 ]

# Only the PostgreSQL run of `make test`.
postgres-test: venv translations test-services
	@mkdir -p var
	@$(PG_RUN); $(call no_tests_is_failure,PostgreSQL run); exit $$status

check-deploy: venv
	SECRET_KEY="$$($(PYTHON_BOOT) -c 'import secrets; print(secrets.token_urlsafe(50))')" DEBUG=False HTTPS=True \
		ALLOWED_HOSTS=llmsizer.example $(PY) manage.py check --deploy --fail-level WARNING

clean:
	rm -rf $(VENV) var
