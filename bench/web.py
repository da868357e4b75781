"""How fast the site answers when it runs like production: requests/s, p50/p99 latency and page weight.

    .venv/bin/python bench/web.py                 # about a minute on 2 cores; stops by itself
    .venv/bin/python bench/web.py --quick         # a smoke run: a few requests per row

It starts gunicorn with the production environment in a throw-away VAR_DIR (bench/server.py: migrate,
load_catalog, collectstatic, gunicorn.conf.py and `--workers 2` like `make run`, DEBUG=False, HTTPS=False on loopback) and measures,
one row after another, each bounded by a request count and a time limit:

  static CSS       the stylesheet, served by WhiteNoise (precompressed; the client sends Accept-Encoding: gzip)
  report uncached  the full report page, every request a different configurator state (bench/site_urls.py), so a
                   page cache keyed on the URL never hits (sections that do not depend on the configuration, such
                   as the links to neighbours, are shared by every state of one report)
  report, new pair the full report page at the default configuration, every request another model × accelerator
                   (what a crawler does): nothing of it was computed before
  report cached    the same report URL again and again (a page cache, when the app has one, serves it)
  htmx partial     the report's results fragment (HX-Request: true), every request a different state
  htmx details     the longer sections the page then requests (part=details), every request a different state
  model page       /<lang>/model/<slug>/, each request another catalog model     (when the page exists)
  hardware page    /<lang>/hardware/<slug>/, each request another accelerator     (when the page exists)
  search           the search form's htmx request, a different typed prefix each time (when it exists)
  sitemap          /sitemap.xml, the same URL repeatedly                           (when it exists)

The last column, faults, is the gunicorn workers' minor page faults per request during the row (Linux's
/proc/PID/stat): a few dozen when a worker reuses its memory, a thousand or more when it maps and unmaps memory on
every request (gunicorn.conf.py says why that happened with the sync worker).

Concurrency is fixed and small: 2 clients by default (one request in flight per gunicorn worker), so latency is
the service time without queueing while the workers stay busy. The client (asyncio, one connection per request,
bench/server.py) runs on the same machine and takes its share of the CPU: on a 2-core machine two busy workers and
the client share two cores, so the uncached rows are measured twice, with 1 client (the latency of one page on an
otherwise idle server, which is what "p50 uncached" means) and with 2 (both workers busy).

Every request sends Accept-Encoding: gzip, as browsers do: WhiteNoise answers with its precompressed files, the
site with pages it gzipped once before caching them. Page weight: the HTML uncompressed (raw) and as sent gzipped,
plus the stylesheets and scripts the report page links, as WhiteNoise sends them. 1 KB = 1,000 bytes.

The cached/static ratio of issue 6 is measured again after the rows in alternating 1.5-s slices of the two (6 each),
so that both see the same machine; the rows' own ratio is printed beside it.

The targets of issue 6 are printed beside the numbers, never asserted: report p50 ≤ 20 ms uncached, cached ≥ half
the static file's requests/s, partial ≤ 1/4 of the page bytes, page ≤ 100 KB gzipped including CSS/JS.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import timeit
from collections.abc import Callable
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.server import (  # noqa: E402
    REPO, WORKERS, HttpClient, ProductionServer, Request, Response, RunStats, gzipped_size, run_bounded,
)
from bench.site_urls import DISTINCT_STATES, Site, configurator_state, search_fields, search_queries  # noqa: E402

DEFAULT_MODEL = "qwen3-30b-a3b-instruct-2507"  # a popular MoE that fits a 24 GB card at Q4_K_M
DEFAULT_HARDWARE = "rtx-4090"
STATE_STRIDE = 7919  # a prime, coprime to DISTINCT_STATES: consecutive requests differ in several options, none repeats
PAIR_STRIDE = 1031  # a prime, coprime to the catalog's model × accelerator count: consecutive pairs share neither
WARMUP_REQUESTS = 4 * WORKERS  # not measured: imports, the catalog snapshot and templates load once per worker
ACCEPT_GZIP = (("Accept-Encoding", "gzip"),)
HX_REQUEST = (("HX-Request", "true"),)
KB = 1000

# Targets of issue 6 ("Speed"): printed, not asserted.
TARGET_REPORT_P50_MS = 20.0
TARGET_CACHED_SHARE_OF_STATIC = 0.5
TARGET_PARTIAL_SHARE_OF_PAGE = 0.25
TARGET_PAGE_GZIP_BYTES = 100 * KB


@dataclass(frozen=True)
class Row:
    """One measured line: a name, how to make the i-th request, and its bounds."""

    name: str
    make_request: Callable[[int], Request]
    max_requests: int
    max_seconds: float
    sample: Request  # weighed for the bytes columns
    concurrency: int | None = None  # None: --concurrency


@dataclass(frozen=True)
class Weight:
    raw: int
    gzipped: int


def main() -> int:
    args = parse_args()
    with ProductionServer(workers=args.workers, log=lambda line: print(f"# {line}")) as server:
        server.setup_django()
        site = Site.load(args.language)
        client = HttpClient(server.port)
        report_path = site.report(args.model, args.hardware)
        max_context = site.model(args.model).max_context
        assets = linked_assets(fetch(client, Request(report_path)).body.decode())
        rows = build_rows(client, site, args, report_path, max_context, assets)

        print_header(args, site, assets, client.get_sync(Request(report_path)))
        results = []
        for row in rows:
            clients = row.concurrency or args.concurrency
            warm_up(server.port, row, clients)
            faults_before = server.worker_minor_faults()
            stats = run_bounded(server.port, row.make_request, concurrency=clients,
                                max_requests=row.max_requests, max_seconds=row.max_seconds,
                                ok_statuses=frozenset({200}))
            faults_after = server.worker_minor_faults()
            faults = (faults_after - faults_before) / stats.requests if (
                faults_before is not None and faults_after is not None and stats.requests) else None
            results.append((row, stats, weigh(client, row.sample)))
            print_row(row, stats, results[-1][2], faults)
        print(f"# after the rows: {cpu_reference_line()}")
        paired = paired_cached_and_static(server.port, rows, args.concurrency)
        print_failures(results)
        print_weights_and_targets(client, report_path, assets, results, paired)
        tracebacks = server.logged_tracebacks()
        if tracebacks:
            print(f"\ngunicorn logged {tracebacks} traceback(s); the end of its error log:\n{server.error_log_tail()}")
    return 0 if all(stats.errors == 0 for _, stats, _ in results) else 1


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--concurrency", type=int, default=WORKERS, help="concurrent clients (default: %(default)s)")
    parser.add_argument("--workers", type=int, default=WORKERS, help="gunicorn workers (default: %(default)s)")
    parser.add_argument("--seconds", type=float, default=8.0, help="time limit per row (default: %(default)s s)")
    parser.add_argument("--requests", type=int, default=600, help="request limit per page row (default: %(default)s;"
                                                                  " the static row gets 5×)")
    parser.add_argument("--language", default="en", choices=("en", "de"))
    parser.add_argument("--model", default=DEFAULT_MODEL, help="model slug of the report rows")
    parser.add_argument("--hardware", default=DEFAULT_HARDWARE, help="accelerator slug of the report rows")
    parser.add_argument("--quick", action="store_true", help="smoke run: 20 requests, 2 s per row")
    args = parser.parse_args()
    if args.quick:
        args.requests, args.seconds = 20, 2.0
    return args


def build_rows(client: HttpClient, site: Site, args, report_path: str, max_context: int | None,
               assets: list[str]) -> list[Row]:
    def page(path: str, headers: tuple[tuple[str, str], ...] = ()) -> Request:
        """A page request as a browser sends it: it accepts gzip (the site compresses pages before caching them)."""
        return Request(path, ACCEPT_GZIP + headers)

    def state(i: int) -> dict[str, str]:
        return configurator_state(i * STATE_STRIDE % DISTINCT_STATES, max_context)

    def uncached_report(i: int) -> Request:
        return page(site.report(args.model, args.hardware, state(i)))

    def partial(i: int) -> Request:
        return page(site.report(args.model, args.hardware, state(i)), HX_REQUEST)

    def details(i: int) -> Request:
        return page(site.report(args.model, args.hardware, {**state(i), "part": "details"}), HX_REQUEST)

    pairs = [(model.slug, hardware) for model in site.models for hardware in site.hardware]
    shuffled = [pairs[i * PAIR_STRIDE % len(pairs)] for i in range(len(pairs))]

    def new_pair(i: int) -> Request:
        # Measured rows use indexes below 3/4 of the pairs; the warm-up (i >= 10**6) takes the last pairs.
        index = len(shuffled) - 1 - (i - 10**6) % (len(shuffled) // 4) if i >= 10**6 else i
        model, hardware = shuffled[index]
        return page(site.report(model, hardware))

    n, seconds = args.requests, args.seconds
    stylesheet = next((path for path in assets if path.endswith(".css")), None)
    rows = []
    if stylesheet:
        rows.append(Row("static CSS (WhiteNoise)", lambda i: Request(stylesheet, ACCEPT_GZIP), 5 * n, seconds,
                        Request(stylesheet, ACCEPT_GZIP)))
    # Two pair rows of distinct pairs: [0, ¼) and [¼, ½) of the shuffled pairs; the warm-ups take the last quarter.
    pair_requests = min(n, len(pairs) // 4)
    rows += [
        # 2 clients first: the rows after them see warm per-process caches of what every page of a model shares
        # (its weights per format, layouts), as a long-running server does; the 1-client rows then measure the
        # steady-state latency of one page. Indexes differ between the rows, so no page is computed twice.
        Row("report, uncached", uncached_report, n, seconds, page(report_path)),
        Row("report, uncached, 1 cl.", lambda i: uncached_report(i + DISTINCT_STATES // 2), n, seconds,
            page(report_path), concurrency=1),
        Row("report, new pair", lambda i: new_pair(i + len(pairs) // 4), pair_requests, seconds,
            page(report_path)),
        Row("report, new pair, 1 cl.", new_pair, pair_requests, seconds, page(report_path), concurrency=1),
        Row("report, cached", lambda i: page(report_path), n, seconds, page(report_path)),
        Row("htmx partial", partial, n, seconds, page(report_path, HX_REQUEST)),
        Row("htmx details", details, n, seconds, page(f"{report_path}?part=details", HX_REQUEST)),
    ]
    if site.has("model"):
        slugs = [model.slug for model in site.models]
        rows.append(Row("model page", lambda i: page(site.model_page(slugs[i % len(slugs)])),
                        min(n, len(slugs)), seconds, page(site.model_page(args.model))))
    if site.has("hardware"):
        rows.append(Row("hardware page", lambda i: page(site.hardware_page(site.hardware[i % len(site.hardware)])),
                        min(n, len(site.hardware)), seconds, page(site.hardware_page(args.hardware))))
    if site.has("search"):
        queries = search_queries(site, search_fields_of(client, site))
        rows.append(Row("search (htmx, typing)",
                        lambda i: page(site.search(queries[i % len(queries)]), HX_REQUEST), n, seconds,
                        page(site.search(queries[0]), HX_REQUEST)))
    if site.has("sitemap"):
        rows.append(Row("sitemap", lambda i: page(site.sitemap()), n, seconds, page(site.sitemap())))
    return rows


def search_fields_of(client: HttpClient, site: Site) -> list[str]:
    return search_fields(fetch(client, Request(site.search_path())).body.decode(), site.search_path())


def warm_up(port: int, row: Row, concurrency: int) -> None:
    # Indexes far beyond the measured ones, so an "uncached" row stays uncached after its warm-up.
    run_bounded(port, lambda i: row.make_request(i + 10**6), concurrency=concurrency,
                max_requests=WARMUP_REQUESTS, max_seconds=30, ok_statuses=frozenset({200}))


# --- page weight ----------------------------------------------------------------------------------------------------

class _AssetLinks(HTMLParser):
    def __init__(self):
        super().__init__()
        self.paths: list[str] = []

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == "link" and attributes.get("rel") == "stylesheet" and attributes.get("href"):
            self.paths.append(attributes["href"])
        elif tag == "script" and attributes.get("src"):
            self.paths.append(attributes["src"])


def linked_assets(html: str) -> list[str]:
    """Same-site stylesheets and scripts a page links, in document order."""
    parser = _AssetLinks()
    parser.feed(html)
    return [path for path in parser.paths if path.startswith("/")]


def fetch(client: HttpClient, request: Request) -> Response:
    response = client.get_sync(request)
    if response.status != 200:
        raise RuntimeError(f"GET {request.path} answered {response.status}")
    return response


def weigh(client: HttpClient, request: Request) -> Weight:
    """Bytes on the wire without compression, and gzipped (WhiteNoise's own .gz when it sends one)."""
    response = client.get_sync(request)
    if response.headers.get("content-encoding") == "gzip":
        raw = client.get_sync(Request(request.path, tuple(h for h in request.headers if h[0] != "Accept-Encoding")))
        return Weight(len(raw.body), len(response.body))
    return Weight(len(response.body), gzipped_size(response.body))


# --- output ---------------------------------------------------------------------------------------------------------

def print_header(args, site: Site, assets: list[str], report: Response) -> None:
    commit = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=REPO, capture_output=True,
                            text=True, check=False).stdout.strip() or "unknown"
    print(f"# {platform.node()}: {os.cpu_count()} CPUs, Python {platform.python_version()}, commit {commit}")
    print(f"# gunicorn -c gunicorn.conf.py --workers {args.workers}; {args.concurrency} concurrent clients on loopback; each row at most "
          f"{args.requests} requests (static {5 * args.requests}, model/hardware pages one per catalog entry) "
          f"or {args.seconds:g} s, after {WARMUP_REQUESTS} unmeasured warm-up requests")
    print(f"# catalog: {len(site.models)} models, {len(site.hardware)} accelerators; report rows: "
          f"{args.model} on {args.hardware} ({args.language})")
    print(f"# page cache: {page_cache_status(report)}")
    print(f"# load average before the run: {' '.join(f'{load:.2f}' for load in os.getloadavg())} "
          "(other processes on this machine share its CPUs)")
    print(f"# {cpu_reference_line()}")
    for page in ("model", "hardware", "search", "sitemap"):
        print(f"# {page} page: {site.describe(page)}")
    print(f"# assets linked by the report page: {', '.join(assets) or 'none'}")
    print()
    print(f"{'row':<26}{'requests':>9}{'req/s':>9}{'p50 ms':>9}{'p99 ms':>9}{'bytes':>10}{'gzip':>9}"
          f"{'faults':>8}")


CPU_REFERENCE = "sum(i * i for i in range(10000))"
CPU_REFERENCE_RUNS = 200


def cpu_reference_line() -> str:
    """How fast each CPU runs a fixed pure-Python loop right now. On a virtual machine whose CPUs are shared with
    other tenants this changes by up to 2× within minutes (measured on the development VM: 0.67–1.35 ms per loop),
    and every latency above changes with it; printed before and after the rows so runs can be compared."""
    cpus = sorted(os.sched_getaffinity(0))
    timings = []
    try:
        for cpu in cpus:
            os.sched_setaffinity(0, {cpu})
            seconds = min(timeit.repeat(CPU_REFERENCE, number=CPU_REFERENCE_RUNS // 4, repeat=4))
            timings.append(f"cpu{cpu} {seconds / (CPU_REFERENCE_RUNS // 4) * 1000:.2f}")
    finally:
        os.sched_setaffinity(0, set(cpus))
    return f"CPU reference ({CPU_REFERENCE}, ms per loop, lower is faster): {', '.join(timings)}"


def print_row(row: Row, stats: RunStats, weight: Weight, faults_per_request: float | None) -> None:
    faults = f"{faults_per_request:>8.0f}" if faults_per_request is not None else f"{'n/a':>8}"
    print(f"{row.name:<26}{stats.requests:>9}{stats.per_second:>9.1f}{stats.median_ms():>9.1f}"
          f"{stats.percentile_ms(99):>9.1f}{weight.raw:>10,}{weight.gzipped:>9,}{faults}"
          + (f"   {stats.errors} errors" if stats.errors else ""), flush=True)


def print_failures(results) -> None:
    for row, stats, _ in results:
        if stats.errors:
            print(f"\n{row.name}: {dict(stats.failures)}; e.g.\n  " + "\n  ".join(stats.failure_samples))


def page_cache_status(report: Response) -> str:
    """What the report page's caching headers say (cache_page sets Cache-Control max-age and Expires), and which
    application code reads PAGE_CACHE_SECONDS (settings.py defines it, default 3600 s)."""
    readers = sorted(str(path.relative_to(REPO)) for folder in ("reports", "catalog", "sizer_site")
                     for path in (REPO / folder).rglob("*.py")
                     if path.name != "settings.py" and "PAGE_CACHE_SECONDS" in path.read_text(encoding="utf-8"))
    headers = ", ".join(f"{name}: {report.headers[name]}" for name in ("cache-control", "expires", "etag",
                                                                        "last-modified") if name in report.headers)
    read_by = f"PAGE_CACHE_SECONDS read by {', '.join(readers)}" if readers else "no code reads PAGE_CACHE_SECONDS"
    return (f"report page headers: {headers or 'no Cache-Control/Expires/ETag/Last-Modified'}; {read_by}. "
            "The uncached rows vary the query string; 'cached' repeats one URL")


PAIRED_ROUNDS = 6
PAIRED_SECONDS = 1.5


def paired_cached_and_static(port: int, rows: list[Row], concurrency: int) -> tuple[float, float] | None:
    """Requests/s of the cached report and of the static file, measured in alternating 1.5-s slices (6 each).

    The rows above run one after another, a minute apart; on a machine whose CPUs run the same loop 2× faster or
    slower from one minute to the next (the CPU reference line), a ratio of two such rows mostly measures the
    machine. Alternating slices give both sides the same conditions."""
    by_name = {row.name: row for row in rows}
    static, cached = by_name.get("static CSS (WhiteNoise)"), by_name.get("report, cached")
    if static is None or cached is None:
        return None
    totals = {"static": [0, 0.0], "cached": [0, 0.0]}
    for _ in range(PAIRED_ROUNDS):
        for name, row in (("static", static), ("cached", cached)):
            stats = run_bounded(port, row.make_request, concurrency=concurrency, max_requests=10**6,
                                max_seconds=PAIRED_SECONDS)
            totals[name][0] += stats.requests
            totals[name][1] += stats.elapsed
    return tuple(count / seconds if seconds else 0.0 for count, seconds in (totals["cached"], totals["static"]))


def print_weights_and_targets(client: HttpClient, report_path: str, assets: list[str], results,
                              paired: tuple[float, float] | None = None) -> None:
    page = weigh(client, Request(report_path))
    partial = weigh(client, Request(report_path, HX_REQUEST))
    asset_weights = {path: weigh(client, Request(path, ACCEPT_GZIP)) for path in assets}
    assets_gzipped = sum(weight.gzipped for weight in asset_weights.values())
    total_gzipped = page.gzipped + assets_gzipped

    names = {path: Path(path).name for path in assets}
    width = max([len("htmx partial"), *map(len, names.values())]) + 2
    print(f"\npage weight of {report_path}")
    print(f"  {'HTML':<{width}}{page.raw:>9,} B raw {page.gzipped:>8,} B gzipped")
    for path, weight in asset_weights.items():
        print(f"  {names[path]:<{width}}{weight.raw:>9,} B raw {weight.gzipped:>8,} B gzipped")
    print(f"  {'total':<{width}}{page.raw + sum(w.raw for w in asset_weights.values()):>9,} B raw "
          f"{total_gzipped:>8,} B gzipped (CSS+JS {assets_gzipped:,} B)")
    print(f"  {'htmx partial':<{width}}{partial.raw:>9,} B raw {partial.gzipped:>8,} B gzipped "
          f"({partial.raw / page.raw:.0%} of the page)")

    by_name = {row.name: stats for row, stats, _ in results}
    cached = by_name["report, cached"]
    static = by_name.get("static CSS (WhiteNoise)")
    print("\ntargets (issue 6; printed, not asserted)")
    for name in ("report, uncached, 1 cl.", "report, new pair, 1 cl.", "report, uncached", "report, new pair"):
        p50 = by_name[name].median_ms()
        target(f"p50 ≤ 20 ms: {name}", f"{p50:.1f} ms", p50 <= TARGET_REPORT_P50_MS)
    if paired is not None:
        paired_cached, paired_static = paired
        share = paired_cached / paired_static
        target("cached ≥ ½ static file's req/s", f"{paired_cached:.0f} vs {paired_static:.0f} req/s ({share:.0%}), "
               f"alternating {PAIRED_ROUNDS} × {PAIRED_SECONDS:g} s", share >= TARGET_CACHED_SHARE_OF_STATIC)
    if static is not None:
        share = cached.per_second / static.per_second
        rows_apart = f"{cached.per_second:.0f} vs {static.per_second:.0f} req/s ({share:.0%}))"
        print(f"  {'(the two rows above, a minute apart:':<40} {rows_apart}")
    target("partial ≤ ¼ of the page bytes", f"{partial.raw:,} / {page.raw:,} B ({partial.raw / page.raw:.0%})",
           partial.raw <= TARGET_PARTIAL_SHARE_OF_PAGE * page.raw)
    target("page ≤ 100 KB gzipped incl. CSS/JS", f"{total_gzipped / KB:.1f} KB",
           total_gzipped <= TARGET_PAGE_GZIP_BYTES)


def target(name: str, measured: str, met: bool) -> None:
    print(f"  {name:<40} {measured:<34} {'met' if met else 'MISSED'}")


if __name__ == "__main__":
    sys.exit(main())
