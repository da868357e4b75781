"""The site as production runs it, on loopback, for the web benchmarks (bench/web.py, bench/load.py).

``ProductionServer`` prepares a throw-away VAR_DIR the way `make run` and README.md ("Production") prepare var/:
a migrated SQLite database with the seed catalog, compiled translations (pybabel, only when a .mo is missing) and
collected static files; then it starts gunicorn with the production environment (DEBUG=False, a random SECRET_KEY,
ALLOWED_HOSTS=127.0.0.1, HTTPS=False because there is no TLS proxy on loopback) and `--workers 2` like `make run`.
The environment mirrors ``tests/test_deploy_settings.production_environment``; it is rebuilt here because that
module needs configured Django settings (and pytest) to import.

``HttpClient`` is a small asyncio HTTP/1.1 client (stdlib only): one connection per request with
``Connection: close``, as gunicorn's sync workers close every connection anyway. ``run_bounded`` drives it with a
fixed number of concurrent clients until a request count or a time limit is reached, whichever comes first.
"""

from __future__ import annotations

import asyncio
import gzip
import math
import os
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
LOOPBACK = "127.0.0.1"
WORKERS = 2  # `make run` (Makefile WORKERS ?= 2)
START_TIMEOUT_S = 30
STOP_TIMEOUT_S = 10
PREPARE_TIMEOUT_S = 300
REQUEST_TIMEOUT_S = 30
# Django's GZipMiddleware level (django.utils.text.compress_string): what "gzipped" means for HTML here.
GZIP_LEVEL = 6

# Variables a developer's shell or a test run may carry; none of them may leak into the production environment.
SETTINGS_VARIABLES = (
    "SECRET_KEY", "SECRET_KEY_FILE", "DEBUG", "TESTING", "HTTPS", "ALLOWED_HOSTS", "CSRF_TRUSTED_ORIGINS",
    "DATABASE_URL", "REDIS_URL", "VAR_DIR", "SITE_URL", "SECURE_HSTS_SECONDS", "SECURE_HSTS_INCLUDE_SUBDOMAINS",
    "SECURE_HSTS_PRELOAD", "SILENCED_SYSTEM_CHECKS", "PAGE_CACHE_SECONDS", "LOG_LEVEL", "DJANGO_SETTINGS_MODULE",
)


def production_environment(var_dir: Path) -> dict[str, str]:
    """README's production variables for plain HTTP on loopback, with a SQLite database in VAR_DIR."""
    env = {name: value for name, value in os.environ.items() if name not in SETTINGS_VARIABLES}
    env.update(
        DJANGO_SETTINGS_MODULE="sizer_site.settings",
        SECRET_KEY=secrets.token_urlsafe(50),
        DEBUG="False",
        HTTPS="False",
        ALLOWED_HOSTS=LOOPBACK,
        DATABASE_URL=f"sqlite:///{var_dir / 'sizer.sqlite3'}",
        VAR_DIR=str(var_dir),
    )
    return env


def free_loopback_port() -> int:
    with socket.socket() as probe:
        probe.bind((LOOPBACK, 0))
        return probe.getsockname()[1]


def gzipped_size(body: bytes) -> int:
    return len(gzip.compress(body, compresslevel=GZIP_LEVEL, mtime=0))


class ProductionServer:
    """gunicorn serving the site with production settings from a temporary VAR_DIR; a context manager."""

    def __init__(self, workers: int = WORKERS, log=print):
        self.workers = workers
        self.log = log
        self._var = tempfile.TemporaryDirectory(prefix="sizer-bench-")
        self.var_dir = Path(self._var.name)
        self.env = production_environment(self.var_dir)
        self.port = free_loopback_port()
        self.error_log = self.var_dir / "gunicorn-error.log"
        self.process: subprocess.Popen | None = None

    def __enter__(self) -> ProductionServer:
        try:
            self.prepare()
            self.start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    # --- set-up, as `make setup` does it -------------------------------------------------------------------------

    def prepare(self) -> None:
        started = time.monotonic()
        self._compile_translations_if_missing()
        self.manage("migrate", "--noinput", "--verbosity", "0")
        self.manage("load_catalog")
        self.manage("collectstatic", "--noinput", "--verbosity", "0")
        self.log(f"prepared {self.var_dir} (migrate, load_catalog, collectstatic) in {time.monotonic() - started:.1f} s")

    def _compile_translations_if_missing(self) -> None:
        catalogs = sorted((REPO / "locale").glob("*/LC_MESSAGES/django.po"))
        if all(po.with_suffix(".mo").is_file() for po in catalogs):
            return
        pybabel = Path(PYTHON).with_name("pybabel")
        self.log("compiling translations (pybabel compile), as `make translations` does")
        subprocess.run([str(pybabel), "compile", "--domain", "django", "--directory", str(REPO / "locale")],
                       cwd=REPO, check=True, capture_output=True, timeout=PREPARE_TIMEOUT_S)

    def manage(self, *args: str) -> str:
        result = subprocess.run([PYTHON, "manage.py", *args], cwd=REPO, env=self.env, capture_output=True,
                                text=True, timeout=PREPARE_TIMEOUT_S, check=False)
        if result.returncode != 0:
            raise RuntimeError(f"manage.py {' '.join(args)} failed:\n{result.stdout}{result.stderr}")
        return result.stdout

    # --- gunicorn --------------------------------------------------------------------------------------------------

    def start(self) -> None:
        # gunicorn's own log and Django's (settings.LOGGING: console → stderr, e.g. every 500 with its traceback)
        # both go to stderr, which is the error log file.
        with self.error_log.open("ab") as error_log:
            self.process = subprocess.Popen(
                [PYTHON, "-m", "gunicorn", "sizer_site.wsgi:application", "--config", str(REPO / "gunicorn.conf.py"),
                 "--bind", f"{LOOPBACK}:{self.port}",
                 "--workers", str(self.workers), "--forwarded-allow-ips", LOOPBACK, "--error-logfile", "-"],
                cwd=REPO, env=self.env, stdout=subprocess.DEVNULL, stderr=error_log,
            )
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"gunicorn exited with {self.process.returncode}:\n{self.error_log_tail()}")
            try:
                socket.create_connection((LOOPBACK, self.port), timeout=0.5).close()
                self.log(f"gunicorn on http://{LOOPBACK}:{self.port}/ with {self.workers} workers "
                         f"(DEBUG=False, HTTPS=False, VAR_DIR={self.var_dir})")
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"gunicorn did not listen on port {self.port} within {START_TIMEOUT_S} s")

    def close(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=STOP_TIMEOUT_S)
        self._var.cleanup()

    def error_log_tail(self, lines: int = 40) -> str:
        if not self.error_log.is_file():
            return "(no gunicorn error log)"
        return "\n".join(self.error_log.read_text(errors="replace").splitlines()[-lines:])

    def worker_pids(self) -> list[int]:
        """The gunicorn workers now running (the master's children, from Linux's /proc)."""
        if self.process is None:
            return []
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        try:
            return [int(pid) for pid in children.read_text().split()]
        except OSError:
            return []

    def worker_minor_faults(self) -> int | None:
        """Minor page faults of the running workers so far (field 10 of /proc/PID/stat); None off Linux.

        A CPU-bound worker that faults a thousand times per request is mapping and unmapping memory on every request
        (see gunicorn.conf.py: CPython's frame-stack chunks); a steady worker faults a few dozen times."""
        total = 0
        pids = self.worker_pids()
        for pid in pids:
            try:
                stat = Path(f"/proc/{pid}/stat").read_text()
            except OSError:
                return None
            total += int(stat.rsplit(")", 1)[1].split()[7])
        return total if pids else None

    def worker_restarts(self) -> int:
        """Workers gunicorn booted beyond the first WORKERS (a worker timeout or crash boots a new one)."""
        if not self.error_log.is_file():
            return 0
        return max(0, self.error_log.read_text(errors="replace").count("Booting worker") - self.workers)

    def logged_tracebacks(self) -> int:
        """Tracebacks in the error log (Django logs every 500 with one through the root logger's console)."""
        if not self.error_log.is_file():
            return 0
        return self.error_log.read_text(errors="replace").count("Traceback (most recent call last)")

    # --- Django in the benchmark's own process -----------------------------------------------------------------

    def setup_django(self) -> None:
        """Configure Django here with the server's environment, to read the catalog and reverse URL names."""
        os.environ.update(self.env)
        if str(REPO) not in sys.path:
            sys.path.insert(0, str(REPO))
        import django

        django.setup()


# --- the HTTP client ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Request:
    path: str
    headers: tuple[tuple[str, str], ...] = ()
    label: str = ""  # the kind of page, for per-kind statistics


@dataclass(frozen=True)
class Response:
    status: int
    headers: dict[str, str]
    body: bytes
    seconds: float


class HttpClient:
    def __init__(self, port: int, host: str = LOOPBACK):
        self.host, self.port = host, port

    async def get(self, request: Request) -> Response:
        started = time.perf_counter()
        reader, writer = await asyncio.open_connection(self.host, self.port)
        try:
            head = [f"GET {request.path} HTTP/1.1", f"Host: {self.host}", "Connection: close",
                    "User-Agent: llm-sizer-bench"]
            head += [f"{name}: {value}" for name, value in request.headers]
            writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
            await writer.drain()
            raw = await reader.read()  # the server closes the connection after the response
        finally:
            writer.close()
        seconds = time.perf_counter() - started
        return _parse_response(raw, seconds)

    async def get_with_timeout(self, request: Request) -> Response:
        return await asyncio.wait_for(self.get(request), REQUEST_TIMEOUT_S)

    def get_sync(self, request: Request) -> Response:
        return asyncio.run(self.get_with_timeout(request))


def _parse_response(raw: bytes, seconds: float) -> Response:
    head, separator, body = raw.partition(b"\r\n\r\n")
    if not separator:
        raise ConnectionError(f"incomplete HTTP response ({len(raw)} bytes)")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    status = int(status_line.split(" ", 2)[1])
    headers = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = _dechunk(body)
    elif "content-length" in headers:
        body = body[: int(headers["content-length"])]
    return Response(status, headers, body, seconds)


def _dechunk(data: bytes) -> bytes:
    chunks, position = [], 0
    while True:
        line_end = data.index(b"\r\n", position)
        size = int(data[position:line_end].split(b";")[0], 16)
        if size == 0:
            return b"".join(chunks)
        chunks.append(data[line_end + 2: line_end + 2 + size])
        position = line_end + 2 + size + 2


# --- bounded runs ---------------------------------------------------------------------------------------------------

@dataclass
class RunStats:
    """What a bounded run saw: latencies of successful requests, status counts, failures with a sample."""

    latencies: list[float] = field(default_factory=list)
    latencies_by_label: dict[str, list[float]] = field(default_factory=dict)
    statuses: Counter = field(default_factory=Counter)
    failures: Counter = field(default_factory=Counter)
    failure_samples: list[str] = field(default_factory=list)
    body_bytes: int = 0
    elapsed: float = 0.0

    @property
    def requests(self) -> int:
        return sum(self.statuses.values()) + sum(self.failures.values())

    @property
    def errors(self) -> int:
        return sum(self.failures.values())

    @property
    def per_second(self) -> float:
        return self.requests / self.elapsed if self.elapsed else 0.0

    def percentile_ms(self, pct: float, label: str | None = None) -> float:
        """Nearest-rank percentile of the successful requests' latencies (of one LABEL if given), in ms."""
        return percentile_ms(self.latencies if label is None else self.latencies_by_label.get(label, []), pct)

    def median_ms(self) -> float:
        return statistics.median(self.latencies) * 1000 if self.latencies else float("nan")


def percentile_ms(latencies: list[float], pct: float) -> float:
    """Nearest-rank percentile of LATENCIES (seconds), in milliseconds; NaN when there are none."""
    if not latencies:
        return float("nan")
    ordered = sorted(latencies)
    rank = max(1, math.ceil(pct / 100 * len(ordered)))
    return ordered[rank - 1] * 1000


def run_bounded(port: int, make_request: Callable[[int], Request], *, concurrency: int, max_requests: int,
                max_seconds: float, ok_statuses: frozenset[int] = frozenset({200})) -> RunStats:
    """CONCURRENCY clients issue make_request(0), make_request(1), … until MAX_REQUESTS were sent or MAX_SECONDS
    passed. A status outside OK_STATUSES, a transport error or a timeout counts as a failure."""
    return asyncio.run(_run_bounded(port, make_request, concurrency, max_requests, max_seconds, ok_statuses))


async def _run_bounded(port, make_request, concurrency, max_requests, max_seconds, ok_statuses) -> RunStats:
    client, stats = HttpClient(port), RunStats()
    next_index = 0
    started = time.perf_counter()
    deadline = started + max_seconds

    async def one_client() -> None:
        nonlocal next_index
        while next_index < max_requests and time.perf_counter() < deadline:
            request = make_request(next_index)
            next_index += 1
            try:
                response = await client.get_with_timeout(request)
            except (OSError, ConnectionError, asyncio.TimeoutError, ValueError) as exc:
                _record_failure(stats, type(exc).__name__, f"{request.path}: {exc!r}")
                continue
            if response.status in ok_statuses:
                stats.statuses[response.status] += 1
                stats.latencies.append(response.seconds)
                stats.latencies_by_label.setdefault(request.label, []).append(response.seconds)
                stats.body_bytes += len(response.body)
            else:
                _record_failure(stats, f"HTTP {response.status}", f"{request.path} → {response.status}")

    await asyncio.gather(*(one_client() for _ in range(concurrency)))
    stats.elapsed = time.perf_counter() - started
    return stats


def _record_failure(stats: RunStats, kind: str, sample: str) -> None:
    stats.failures[kind] += 1
    if len(stats.failure_samples) < 5:
        stats.failure_samples.append(sample)
