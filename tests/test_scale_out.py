"""Scale-out: app servers keep no state of their own, so several of them can stand behind a load balancer.

With DATABASE_URL and REDIS_URL set, every gunicorn process shares the database (sessions live there) and the
cache (Redis), and signs with the same SECRET_KEY from the environment. These tests start a real redis-server
(Debian's `redis-server`; `make test` installs it as root) on a loopback port and, for the end-to-end check, two
gunicorn servers that a client alternates between, as a round-robin load balancer would.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from http.cookiejar import CookieJar
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.core.cache import caches
from django.db import connection

from tests.test_deploy_settings import REPO, SUBPROCESS_TIMEOUT_S, production_environment

REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"
START_TIMEOUT_S = 15
STOP_TIMEOUT_S = 10
REQUEST_TIMEOUT_S = 30


def free_loopback_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for_port(port: int, process: subprocess.Popen, what: str) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited with {process.returncode} before listening on port {port}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{what} did not listen on port {port} within {START_TIMEOUT_S} s")


def stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=STOP_TIMEOUT_S)


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory) -> Iterator[str]:
    """A private redis-server on 127.0.0.1 without persistence, stopped at teardown."""
    if not Path(REDIS_SERVER).is_file():
        pytest.skip("redis-server not installed (Debian package 'redis-server'; `make test` installs it as root)")
    port = free_loopback_port()
    workdir = tmp_path_factory.mktemp("redis")
    process = subprocess.Popen(
        [REDIS_SERVER, "--bind", "127.0.0.1", "--port", str(port), "--save", "", "--appendonly", "no",
         "--dir", str(workdir), "--logfile", str(workdir / "redis.log")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, process, "redis-server")
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        stop(process)


def redis_cache_settings(url: str) -> dict[str, dict[str, str]]:
    """Two aliases on one server: each is its own client with its own connection pool, like two app servers."""
    backend = {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": url}
    return {"default": dict(backend), "other_app_server": dict(backend)}


def test_a_value_cached_by_one_client_is_seen_by_another(settings, redis_url):
    settings.CACHES = redis_cache_settings(redis_url)
    first, second = caches["default"], caches["other_app_server"]
    assert first is not second
    assert first._cache._get_connection_pool(write=True) is not second._cache._get_connection_pool(write=True)

    first.set("report:glm-4-5:h100", "<html>rendered once</html>", timeout=60)
    assert second.get("report:glm-4-5:h100") == "<html>rendered once</html>"

    # Invalidation in one app server (say, after an admin edit) reaches the other.
    second.delete("report:glm-4-5:h100")
    assert first.get("report:glm-4-5:h100") is None

    # Counters are shared, not per process.
    first.set("catalog-version", 1)
    second.incr("catalog-version")
    assert first.get("catalog-version") == 2


def test_settings_use_redis_when_redis_url_is_set(settings, tmp_path, redis_url):
    # A separate process with production settings and REDIS_URL writes; this process reads through its own client.
    writer = (
        "import django; django.setup()\n"
        "from django.core.cache import cache, caches\n"
        "print(type(caches['default']).__name__)\n"
        "cache.set('written-by', 'another process', 60)\n"
    )
    env = production_environment(tmp_path, REDIS_URL=redis_url)
    result = subprocess.run([sys.executable, "-c", writer], cwd=REPO, env=env, capture_output=True, text=True,
                            timeout=SUBPROCESS_TIMEOUT_S, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "RedisCache"

    settings.CACHES = redis_cache_settings(redis_url)
    assert caches["default"].get("written-by") == "another process"


@pytest.mark.django_db
def test_the_database_is_the_one_database_url_names():
    # The PostgreSQL run of `make test` must really run on PostgreSQL, not fall back to SQLite silently.
    scheme = urllib.parse.urlsplit(os.environ.get("DATABASE_URL", "sqlite://")).scheme
    expected_vendor = {"postgres": "postgresql", "postgresql": "postgresql", "sqlite": "sqlite"}[scheme]
    assert connection.vendor == expected_vendor


def test_sessions_are_stored_where_every_app_server_sees_them():
    # Cache-only sessions in a per-process memory cache would log a user out whenever the balancer switches server.
    engine = django_settings.SESSION_ENGINE
    if engine.endswith((".cache", ".cached_db")):
        cache_backend = django_settings.CACHES[django_settings.SESSION_CACHE_ALIAS]["BACKEND"]
        assert engine.endswith(".cached_db") or not cache_backend.endswith("LocMemCache")
    else:
        assert engine in ("django.contrib.sessions.backends.db", "django.contrib.sessions.backends.signed_cookies")


# --- two gunicorn servers behind a (simulated) round-robin balancer -------------------------------------------------

class AppServers:
    """COUNT gunicorn processes with the same production environment, each on its own loopback port."""

    def __init__(self, env: dict[str, str], count: int = 2):
        self.env = env
        self.log_file = Path(env["VAR_DIR"]) / f"gunicorn-{secrets.token_hex(4)}.log"
        self.ports = [free_loopback_port() for _ in range(count)]
        self.processes: list[subprocess.Popen] = []

    def start(self) -> None:
        for port in self.ports:
            self.processes.append(subprocess.Popen(
                [sys.executable, "-m", "gunicorn", "sizer_site.wsgi:application",
                 "--config", str(REPO / "gunicorn.conf.py"), "--bind", f"127.0.0.1:{port}",
                 "--workers", "1", "--forwarded-allow-ips", "127.0.0.1",
                 "--error-logfile", str(self.log_file)],
                cwd=REPO, env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            ))
        for port, process in zip(self.ports, self.processes):
            wait_for_port(port, process, f"gunicorn on port {port} (log: {self.log_file})")

    def stop(self) -> None:
        for process in self.processes:
            stop(process)

    def url(self, server: int, path: str) -> str:
        return f"http://127.0.0.1:{self.ports[server]}{path}"


def manage(env: dict[str, str], *args: str) -> None:
    subprocess.run([sys.executable, "manage.py", *args], cwd=REPO, env=env, capture_output=True, text=True,
                   timeout=SUBPROCESS_TIMEOUT_S, check=True)


@pytest.fixture(scope="module")
def app_servers(request, tmp_path_factory) -> Iterator[AppServers]:
    var_dir = tmp_path_factory.mktemp("app-servers")
    try:  # production shares Redis as well; the session check below needs only the shared database
        redis = request.getfixturevalue("redis_url")
    except pytest.skip.Exception:
        redis = None
    # Plain HTTP on loopback: the TLS proxy in front is not part of this test (HTTPS=False only skips the redirect).
    env = production_environment(var_dir, HTTPS="False", ALLOWED_HOSTS="127.0.0.1", REDIS_URL=redis)
    manage(env, "migrate", "--noinput", "--verbosity", "0")
    manage(env, "collectstatic", "--noinput", "--verbosity", "0")
    manage(env, "shell", "-c", "from django.contrib.auth.models import User; "
                               "User.objects.create_superuser('admin', 'admin@llmsizer.example', 'a long passphrase')")
    servers = AppServers(env)
    try:
        servers.start()
        yield servers
    finally:
        servers.stop()


class NoRedirect(urllib.request.HTTPRedirectHandler):
    """Report redirects as HTTPError so the test sees each hop."""

    def redirect_request(self, *args, **kwargs):
        return None


def new_browser() -> urllib.request.OpenerDirector:
    return urllib.request.build_opener(urllib.request.HTTPCookieProcessor(CookieJar()), NoRedirect)


def log_in(browser, form_url: str, post_url: str) -> None:
    """Fetch the admin login form from FORM_URL and post the credentials with its CSRF token to POST_URL."""
    with browser.open(form_url, timeout=REQUEST_TIMEOUT_S) as response:
        form = response.read().decode()
    token = form.split('name="csrfmiddlewaretoken" value="', 1)[1].split('"', 1)[0]
    credentials = urllib.parse.urlencode({
        "csrfmiddlewaretoken": token, "username": "admin", "password": "a long passphrase", "next": "/admin/",
    }).encode()
    # Django's CSRF check wants a same-origin Referer for a POST it considers secure; send the form's page.
    login = urllib.request.Request(post_url, data=credentials, headers={"Referer": post_url})
    with pytest.raises(urllib.error.HTTPError) as redirect:
        browser.open(login, timeout=REQUEST_TIMEOUT_S)
    assert redirect.value.code == 302, redirect.value.read().decode()[:500]
    assert redirect.value.headers["Location"] == "/admin/"


def admin_index_status(browser, url: str) -> tuple[int, str]:
    try:
        with browser.open(url, timeout=REQUEST_TIMEOUT_S) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Location", "")


def test_a_login_survives_switching_between_app_servers(app_servers):
    browser = new_browser()
    # Server 0 hands out the form, server 1 accepts the POST and logs in, server 0 knows the session.
    log_in(browser, app_servers.url(0, "/admin/login/"), app_servers.url(1, "/admin/login/"))

    status, body = admin_index_status(browser, app_servers.url(0, "/admin/"))
    assert status == 200
    assert "/admin/logout/" in body


def test_a_server_with_another_secret_key_does_not_know_the_session(app_servers):
    # Negative control for the test above: sessions are signed with SECRET_KEY, so a worker that made up its own
    # key would log every user out whenever the balancer sends them to it.
    stranger = AppServers(dict(app_servers.env, SECRET_KEY=secrets.token_urlsafe(50)), count=1)
    try:
        stranger.start()
        browser = new_browser()
        log_in(browser, app_servers.url(0, "/admin/login/"), app_servers.url(1, "/admin/login/"))

        status, location = admin_index_status(browser, stranger.url(0, "/admin/"))
        assert (status, location) == (302, "/admin/login/?next=/admin/")
    finally:
        stranger.stop()
