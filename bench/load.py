"""A load run: 50 concurrent clients for 30 s against gunicorn on loopback, started like production.

    .venv/bin/python bench/load.py                         # 50 clients, 30 s (about a minute with set-up)
    .venv/bin/python bench/load.py --clients 10 --seconds 5

The server is the one bench/web.py measures (bench/server.py: production environment in a throw-away VAR_DIR,
`--workers 2` like `make run`). Every client sends one request after another, each a random draw (seeded, so runs
are repeatable) from this mix:

  40 %  report page: a random catalog model × accelerator, half at the default state (the URLs search engines and
        links lead to), half at a random configurator state (bench/site_urls.py)
  25 %  htmx partial of a report (HX-Request: true) at a random state: a visitor changing the configurator
  15 %  model page of a random model          } when the pages exist; otherwise their share goes to report pages
  15 %  hardware page of a random accelerator }
   5 %  search as you type (htmx)            }

After 20 unmeasured warm-up requests, bounded: no request starts after --seconds, at most --max-requests are
sent, and each has a 30 s timeout. An error is a transport failure, a timeout or any status but 200 and 400
(400 is the report's answer to a configurator state the engine rejects, with the reason beside the field).
Tracebacks in the server's error log are counted too; the exit status is 1 when there was either.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.server import HttpClient, ProductionServer, Request, RunStats, percentile_ms, run_bounded  # noqa: E402
from bench.site_urls import (  # noqa: E402
    DISTINCT_STATES, Site, configurator_state, search_fields, search_queries,
)

CLIENTS = 50
SECONDS = 30.0
MAX_REQUESTS = 100_000
SEED = 6
WARMUP_REQUESTS = 20
HX_REQUEST = (("HX-Request", "true"),)
OK_STATUSES = frozenset({200, 400})
MIX = {"report": 40, "partial": 25, "model": 15, "hardware": 15, "search": 5}  # percent of requests


def main() -> int:
    args = parse_args()
    with ProductionServer(log=lambda line: print(f"# {line}")) as server:
        server.setup_django()
        site = Site.load(args.language)
        mix = effective_mix(site)
        make_request = request_maker(site, mix, HttpClient(server.port), random.Random(args.seed))
        print(f"# {args.clients} concurrent clients for at most {args.seconds:g} s or {args.max_requests:,} "
              f"requests on {os.cpu_count()} CPUs (load average before: "
              f"{' '.join(f'{load:.2f}' for load in os.getloadavg())})")
        print(f"# mix: {', '.join(f'{kind} {share} %' for kind, share in mix.items())}; catalog: "
              f"{len(site.models)} models × {len(site.hardware)} accelerators")
        # Unmeasured: each worker imports the views and reads the catalog snapshot on its first requests.
        run_bounded(server.port, make_request, concurrency=2 * server.workers, max_requests=WARMUP_REQUESTS,
                    max_seconds=60, ok_statuses=OK_STATUSES)
        stats = run_bounded(server.port, make_request, concurrency=args.clients, max_requests=args.max_requests,
                            max_seconds=args.seconds, ok_statuses=OK_STATUSES)
        tracebacks = server.logged_tracebacks()
        print_summary(stats, tracebacks, server.worker_restarts())
        if tracebacks:
            print(f"\nthe end of gunicorn's error log:\n{server.error_log_tail()}")
    return 0 if stats.errors == 0 and tracebacks == 0 else 1


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=CLIENTS, help="concurrent clients (default: %(default)s)")
    parser.add_argument("--seconds", type=float, default=SECONDS, help="duration (default: %(default)s s)")
    parser.add_argument("--max-requests", type=int, default=MAX_REQUESTS, help="request limit (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=SEED, help="random seed of the request mix")
    parser.add_argument("--language", default="en", choices=("en", "de"))
    return parser.parse_args()


def effective_mix(site: Site) -> dict[str, int]:
    """MIX without the pages this checkout does not have; their share goes to report pages."""
    mix = {kind: share for kind, share in MIX.items() if kind in ("report", "partial") or site.has(kind)}
    mix["report"] += 100 - sum(mix.values())
    return mix


def request_maker(site: Site, mix: dict[str, int], client: HttpClient, rng: random.Random):
    kinds, weights = list(mix), list(mix.values())
    queries = (search_queries(site, search_fields(client.get_sync(Request(site.search_path())).body.decode(),
                                                  site.search_path()))
               if "search" in mix else [])

    def configured_report(hx: bool) -> Request:
        model = rng.choice(site.models)
        state = configurator_state(rng.randrange(DISTINCT_STATES), model.max_context)
        return Request(site.report(model.slug, rng.choice(site.hardware), state), HX_REQUEST if hx else (),
                       "partial" if hx else "report")

    def make_request(_index: int) -> Request:
        kind = rng.choices(kinds, weights)[0]
        if kind == "report":
            return Request(site.random_report(rng), label="report")
        if kind == "partial":
            return configured_report(hx=True)
        if kind == "model":
            return Request(site.model_page(rng.choice(site.models).slug), label="model")
        if kind == "hardware":
            return Request(site.hardware_page(rng.choice(site.hardware)), label="hardware")
        return Request(site.search(rng.choice(queries)), HX_REQUEST, label="search")

    return make_request


def print_summary(stats: RunStats, tracebacks: int, restarts: int) -> None:
    print(f"\nrequests   {stats.requests:,} in {stats.elapsed:.1f} s = {stats.per_second:.1f} requests/s")
    print(f"errors     {stats.errors}" + (f" {dict(stats.failures)}" if stats.errors else "")
          + f"; gunicorn logged {tracebacks} traceback(s) and restarted {restarts} worker(s)")
    print(f"statuses   {dict(sorted(stats.statuses.items()))}")
    print(f"latency    p50 {stats.percentile_ms(50):.0f} ms, p95 {stats.percentile_ms(95):.0f} ms, "
          f"p99 {stats.percentile_ms(99):.0f} ms")
    print(f"\n{'kind':<10}{'requests':>9}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}")
    counts = Counter({label: len(values) for label, values in stats.latencies_by_label.items()})
    for label, count in counts.most_common():
        latencies = stats.latencies_by_label[label]
        print(f"{label:<10}{count:>9}{percentile_ms(latencies, 50):>9.0f}{percentile_ms(latencies, 95):>9.0f}"
              f"{percentile_ms(latencies, 99):>9.0f}")
    for sample in stats.failure_samples:
        print(f"failure: {sample}")


if __name__ == "__main__":
    sys.exit(main())
