"""Settings for LLM Sizer, read from environment variables.

Typed helpers in the style of healthchecks (hc/settings.py): a malformed value stops start-up with a message
instead of silently becoming something else. Production is "DEBUG off + HTTPS on"; `make run` serves locally
over plain HTTP with a generated secret key (see the Makefile).
"""

from __future__ import annotations

import os
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from django.utils.csp import CSP
from django.utils.translation import gettext_lazy as _

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.getenv("VAR_DIR", BASE_DIR / "var"))


def envbool(name: str, default: str) -> bool:
    value = os.getenv(name, default)
    if value not in ("", "True", "False"):
        raise ImproperlyConfigured(f"Unexpected value {name}={value!r}, use 'True' or 'False'")
    return value == "True"


def envint(name: str, default: str) -> int:
    value = os.getenv(name, default)
    try:
        return int(value)
    except ValueError as exc:
        raise ImproperlyConfigured(f"Unexpected value {name}={value!r}, expected an integer") from exc


def envlist(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in os.getenv(name, default).split(",") if item.strip()]


def envsecret(name: str) -> str:
    """A secret from NAME, or from the file named by NAME_FILE (Docker/Kubernetes secrets)."""
    if path := os.getenv(f"{name}_FILE"):
        return Path(path).read_text(encoding="utf-8").strip()
    return os.getenv(name, "")


DEBUG = envbool("DEBUG", "False")
TESTING = envbool("TESTING", "False")
# HTTPS=True in production: redirects to https, HSTS and secure cookies (manage.py check --deploy).
HTTPS = envbool("HTTPS", "False")

SECRET_KEY = envsecret("SECRET_KEY")
if not SECRET_KEY:
    if DEBUG or TESTING:
        SECRET_KEY = "insecure-development-key-only-for-debug-and-tests"
    else:
        raise ImproperlyConfigured(
            "SECRET_KEY is not set. Set SECRET_KEY (or SECRET_KEY_FILE); `make run` generates one in var/."
        )

ALLOWED_HOSTS = envlist("ALLOWED_HOSTS", "127.0.0.1,localhost" if (DEBUG or TESTING or not HTTPS) else "")
if not ALLOWED_HOSTS:
    raise ImproperlyConfigured("ALLOWED_HOSTS is empty: list the site's host names, comma-separated.")
CSRF_TRUSTED_ORIGINS = envlist("CSRF_TRUSTED_ORIGINS")
SITE_URL = os.getenv("SITE_URL", "")  # e.g. https://llmsizer.example; empty = the request's host

INSTALLED_APPS = [
    "whitenoise.runserver_nostatic",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.sitemaps",
    "django.contrib.humanize",
    "django_htmx",
    "catalog",
    "reports",
    "api",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # WhiteNoise directly after SecurityMiddleware (whitenoise docs/django.rst).
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Locale before Sessions so public pages do not get `Vary: Cookie` (djangoproject.com's order).
    "django.middleware.locale.LocaleMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.http.ConditionalGetMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "sizer_site.urls"
WSGI_APPLICATION = "sizer_site.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "reports.context_processors.default_configuration",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# Database: DATABASE_URL (postgres://…) or a SQLite file under var/ in WAL mode.
VAR_DIR.mkdir(parents=True, exist_ok=True)
_default_sqlite = f"sqlite:///{VAR_DIR / 'sizer.sqlite3'}"
DATABASES = {"default": dj_database_url.parse(os.getenv("DATABASE_URL", _default_sqlite), conn_max_age=60)}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    DATABASES["default"]["OPTIONS"] = {
        # WAL lets gunicorn workers read while the admin writes; IMMEDIATE avoids "database is locked" upgrades.
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        "transaction_mode": "IMMEDIATE",
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Cache: Redis when REDIS_URL is set (shared by every app server), else per-process local memory.
if redis_url := os.getenv("REDIS_URL"):
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": redis_url}}
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "sizer"}}
PAGE_CACHE_SECONDS = envint("PAGE_CACHE_SECONDS", "3600")

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en"
LANGUAGES = [("de", _("German")), ("en", _("English"))]
LOCALE_PATHS = [BASE_DIR / "locale"]
USE_I18N = True
TIME_ZONE = "UTC"
USE_TZ = True
# Source links the catalog prints without a scheme ("www.example.com/…") are https, as every cited site serves
# (Django 6 warns until the transitional default is chosen).
URLIZE_ASSUME_HTTPS = True

STATIC_URL = "/static/"
STATIC_ROOT = VAR_DIR / "static"
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
if TESTING:
    # Tests render templates without running collectstatic first.
    STORAGES["staticfiles"] = {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}
WHITENOISE_MAX_AGE = 31536000 if not DEBUG else 0

# Security headers. Django's defaults already send nosniff, Referrer-Policy same-origin and COOP.
X_FRAME_OPTIONS = "DENY"
# No nonce: every script is a same-origin file and JSON-LD is a data block the CSP does not govern. A nonce in a
# cached page would be one visitor's nonce served to all, and it made each render's bytes (and ETag) differ, so a
# browser's If-None-Match missed on every other worker or after every expiry.
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF, "data:"],
    "connect-src": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
    "base-uri": [CSP.SELF],
    "form-action": [CSP.SELF],
}
if HTTPS:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = True
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = envint("SECURE_HSTS_SECONDS", "3600")
    SECURE_HSTS_INCLUDE_SUBDOMAINS = envbool("SECURE_HSTS_INCLUDE_SUBDOMAINS", "True")
    SECURE_HSTS_PRELOAD = envbool("SECURE_HSTS_PRELOAD", "True")
    SILENCED_SYSTEM_CHECKS = envlist("SILENCED_SYSTEM_CHECKS")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.getenv("LOG_LEVEL", "WARNING")},
}
