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

.PHONY: run test venv setup migrate catalog translations static browser-deps postgres-test check-deploy clean

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
	$(LOCAL_ENV) $(VENV)/bin/gunicorn sizer_site.wsgi:application --bind $(HOST):$(PORT) --workers $(WORKERS) \
		--access-logfile - --forwarded-allow-ips=127.0.0.1

# Debian's Chromium for the browser tests (Playwright drives /usr/bin/chromium; it cannot download its own).
browser-deps:
	@if [ ! -x /usr/bin/chromium ]; then \
		if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
		else echo "Chromium missing: run 'sudo apt-get install chromium' (browser tests will be skipped)"; fi; \
	fi

test: venv translations browser-deps
	@mkdir -p var
	TESTING=True $(PY) -m pytest -q -p no:cacheprovider; status=$$?; \
	if [ $$status -eq 5 ]; then echo "pytest collected no tests: failing" >&2; exit 1; fi; exit $$status

check-deploy: venv
	SECRET_KEY="$$($(PYTHON_BOOT) -c 'import secrets; print(secrets.token_urlsafe(50))')" DEBUG=False HTTPS=True \
		ALLOWED_HOSTS=llmsizer.example $(PY) manage.py check --deploy --fail-level WARNING

clean:
	rm -rf $(VENV) var
