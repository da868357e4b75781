"""Production settings: `check --deploy` passes, bad environments refuse to start, responses carry the headers.

The production environment is the one README.md ("Production") documents: DEBUG=False, HTTPS=True behind a
TLS-terminating proxy, a random SECRET_KEY, ALLOWED_HOSTS, DATABASE_URL. Start-up checks run `manage.py` in a
subprocess, as a server would; header checks load `sizer_site/settings.py` afresh under that environment and apply
its security settings to the test client, so they test the real production values, not a copy of them.
"""

from __future__ import annotations

import importlib.util
import os
import re
import secrets
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.conf import global_settings
from django.urls import reverse

from catalog.seed_loader import load_catalog

REPO = Path(__file__).resolve().parent.parent
SETTINGS_FILE = REPO / "sizer_site" / "settings.py"
PRODUCTION_HOST = "llmsizer.example"
SUBPROCESS_TIMEOUT_S = 60

# Variables the test run itself may carry (make test sets TESTING=True; pytest-django sets the settings module).
SETTINGS_VARIABLES = (
    "SECRET_KEY", "SECRET_KEY_FILE", "DEBUG", "TESTING", "HTTPS", "ALLOWED_HOSTS", "CSRF_TRUSTED_ORIGINS",
    "DATABASE_URL", "REDIS_URL", "VAR_DIR", "SITE_URL", "SECURE_HSTS_SECONDS", "SECURE_HSTS_INCLUDE_SUBDOMAINS",
    "SECURE_HSTS_PRELOAD", "SILENCED_SYSTEM_CHECKS", "PAGE_CACHE_SECONDS", "LOG_LEVEL", "DJANGO_SETTINGS_MODULE",
)


def production_environment(var_dir: Path, **overrides: str | None) -> dict[str, str]:
    """os.environ without the test run's settings, plus README's production variables; None removes a variable."""
    env = {name: value for name, value in os.environ.items() if name not in SETTINGS_VARIABLES}
    env.update(
        DJANGO_SETTINGS_MODULE="sizer_site.settings",
        SECRET_KEY=secrets.token_urlsafe(50),  # 67 characters, as `make run` generates
        DEBUG="False",
        HTTPS="True",
        ALLOWED_HOSTS=PRODUCTION_HOST,
        DATABASE_URL=f"sqlite:///{var_dir / 'production.sqlite3'}",
        VAR_DIR=str(var_dir),
    )
    for name, value in overrides.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


def manage(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=REPO, env=env, capture_output=True, text=True,
        timeout=SUBPROCESS_TIMEOUT_S, check=False,
    )


# --- start-up -------------------------------------------------------------------------------------------------------

def test_check_deploy_passes_with_the_production_environment(tmp_path):
    result = manage(production_environment(tmp_path), "check", "--deploy", "--fail-level", "WARNING")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues (0 silenced)." in result.stdout


# Negative controls: the same command fails when a production setting is weakened, so the pass above means something.
@pytest.mark.parametrize("overrides, check_id", [
    ({"SECRET_KEY": "too-short-for-production"}, "security.W009"),  # < 50 characters
    ({"SECURE_HSTS_SECONDS": "0"}, "security.W004"),
    ({"HTTPS": "False"}, "security.W008"),  # no SSL redirect (nor HSTS, secure cookies)
])
def test_check_deploy_fails_when_a_production_setting_is_weakened(tmp_path, overrides, check_id):
    result = manage(production_environment(tmp_path, **overrides), "check", "--deploy", "--fail-level", "WARNING")
    assert result.returncode != 0
    assert check_id in result.stderr


def test_production_refuses_to_start_without_a_secret_key(tmp_path):
    # A per-process random fallback key would make each gunicorn worker reject the others' sessions and CSRF tokens.
    result = manage(production_environment(tmp_path, SECRET_KEY=None), "check")
    assert result.returncode != 0
    assert "django.core.exceptions.ImproperlyConfigured: SECRET_KEY is not set." in result.stderr


def test_secret_key_file_is_read_like_docker_secrets(tmp_path):
    key_file = tmp_path / "secret_key"
    key_file.write_text(secrets.token_urlsafe(50) + "\n", encoding="utf-8")
    env = production_environment(tmp_path, SECRET_KEY=None, SECRET_KEY_FILE=str(key_file))
    result = manage(env, "check", "--deploy", "--fail-level", "WARNING")
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("name, value", [("DEBUG", "maybe"), ("HTTPS", "1"), ("DEBUG", "true")])
def test_a_malformed_boolean_stops_start_up(tmp_path, name, value):
    result = manage(production_environment(tmp_path, **{name: value}), "check")
    assert result.returncode != 0
    message = f"django.core.exceptions.ImproperlyConfigured: Unexpected value {name}={value!r}, use 'True' or 'False'"
    assert message in result.stderr


def test_production_without_allowed_hosts_refuses_to_start(tmp_path):
    result = manage(production_environment(tmp_path, ALLOWED_HOSTS=None), "check")
    assert result.returncode != 0
    assert "ImproperlyConfigured: ALLOWED_HOSTS is empty" in result.stderr


# --- response headers -----------------------------------------------------------------------------------------------

def load_settings_module(env: dict[str, str]) -> dict[str, object]:
    """Execute settings.py under ENV as a new module (django.conf.settings is untouched) and return its settings."""
    saved = os.environ.copy()
    os.environ.clear()
    os.environ.update(env)
    try:
        spec = importlib.util.spec_from_file_location("sizer_site._production_settings_probe", SETTINGS_FILE)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return {name: getattr(module, name) for name in dir(module) if name.isupper()}


SECURITY_SETTING = re.compile(r"^(SECURE_|X_FRAME_OPTIONS$|(SESSION|CSRF)_COOKIE_SECURE$|MIDDLEWARE$|DEBUG$)")


@pytest.fixture
def production_security(settings, tmp_path):
    """The test settings with every security setting replaced by its production value (Django's default if unset)."""
    production = load_settings_module(production_environment(tmp_path))
    names = {name for name in [*dir(global_settings), *production] if SECURITY_SETTING.match(name)}
    for name in names:
        setattr(settings, name, production.get(name, getattr(global_settings, name, None)))
    settings.ALLOWED_HOSTS = [PRODUCTION_HOST]
    return production


def https_get(client, url):
    return client.get(url, HTTP_HOST=PRODUCTION_HOST, HTTP_X_FORWARDED_PROTO="https")


def site_urls() -> list[str]:
    return [reverse("reports:home"), "/de/", "/en/no-such-page/"]


def csp_directives(header: str) -> dict[str, list[str]]:
    directives = (part.split() for part in header.split(";") if part.strip())
    return {name: sources for name, *sources in directives}


@pytest.mark.django_db
@pytest.mark.parametrize("url", [*site_urls(), "/admin/login/"])
def test_https_responses_carry_the_security_headers(client, production_security, url):
    response = https_get(client, url)

    assert response.status_code in (200, 404)
    hsts = response.headers["Strict-Transport-Security"]
    assert hsts == f"max-age={production_security['SECURE_HSTS_SECONDS']}; includeSubDomains; preload"
    assert production_security["SECURE_HSTS_SECONDS"] >= 3600
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Referrer-Policy"] == "same-origin"
    assert response.headers["X-Frame-Options"] == "DENY"
    assert response.headers["Cross-Origin-Opener-Policy"] == "same-origin"

    csp = csp_directives(response.headers["Content-Security-Policy"])
    assert csp["default-src"] == ["'self'"]
    assert "'unsafe-inline'" not in csp["script-src"] and "'unsafe-eval'" not in csp["script-src"]
    assert "'unsafe-inline'" not in csp["style-src"]
    assert csp["frame-ancestors"] == ["'none'"]


def test_plain_http_is_redirected_to_https(client, production_security):
    response = client.get("/en/", HTTP_HOST=PRODUCTION_HOST, HTTP_X_FORWARDED_PROTO="http")
    assert response.status_code == 301
    assert response.headers["Location"] == f"https://{PRODUCTION_HOST}/en/"


class InlineCodeFinder(HTMLParser):
    """Collects what a strict CSP would block: inline <script>/<style> without the nonce, on*= handlers, style=."""

    def __init__(self, nonce: str):
        super().__init__()
        self.nonce = nonce
        self.blocked: list[str] = []

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        for name in attributes:
            if name.startswith("on") or name == "style":
                self.blocked.append(f"<{tag} {name}=…>")
        if tag == "script" and "src" not in attributes and attributes.get("nonce") != self.nonce:
            if attributes.get("type") not in ("application/json", "application/ld+json"):  # data, not executed
                self.blocked.append("<script> without the response's nonce")
        if tag == "style":
            self.blocked.append("<style> block (style-src has no nonce)")


def blocked_inline_code(response) -> list[str]:
    nonce_match = re.search(r"'nonce-([^']+)'", response.headers["Content-Security-Policy"])
    finder = InlineCodeFinder(nonce_match.group(1) if nonce_match else "")
    finder.feed(response.content.decode())
    return finder.blocked


@pytest.mark.django_db
@pytest.mark.parametrize("url", site_urls())
def test_pages_contain_no_inline_code_the_csp_would_block(client, production_security, url):
    assert blocked_inline_code(https_get(client, url)) == []


@pytest.mark.django_db
def test_report_page_and_partial_contain_no_inline_code_the_csp_would_block(client, production_security):
    load_catalog()
    report = reverse("reports:report", args=["llama-3-1-8b-instruct", "rtx-4090"])
    for url, extra_headers in [(report, {}), (report.replace("/en/", "/de/", 1), {}),
                               (report, {"HTTP_HX_REQUEST": "true"})]:
        response = client.get(url, HTTP_HOST=PRODUCTION_HOST, HTTP_X_FORWARDED_PROTO="https", **extra_headers)
        assert response.status_code == 200, url
        assert "'unsafe-inline'" not in response.headers["Content-Security-Policy"]
        assert blocked_inline_code(response) == [], url
