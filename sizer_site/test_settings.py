"""Settings for the test suite: the normal settings with TESTING on (insecure key, plain static storage)."""

import os

os.environ["TESTING"] = "True"

from sizer_site.settings import *  # noqa: E402,F403

if "DATABASE_URL" not in os.environ:
    # pytest-django creates its own test database; should anything ever reach the configured database instead,
    # it is this throw-away file, never the developer's var/sizer.sqlite3.
    DATABASES["default"]["NAME"] = str(VAR_DIR / "tests-host.sqlite3")  # noqa: F405

STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # noqa: F405 - WhiteNoise warns about a missing STATIC_ROOT

# Password hashing is deliberately slow; tests that log in do not need that (Django's testing docs).
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
