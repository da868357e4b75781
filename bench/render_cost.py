"""What an uncached report page costs to compute and render, in process: Python function calls and milliseconds.

    .venv/bin/python bench/render_cost.py              # 40 states × 4 pairs, 3 rounds, about a minute
    .venv/bin/python bench/render_cost.py --states 10 --rounds 1

bench/web.py measures the page through gunicorn, where this VM's neighbours move a p50 by several milliseconds
between identical runs. This script takes the server out and the noise down, to compare two versions of the code:

- the same random configurator states (bench/site_urls.configurator_state) of four model × accelerator pairs (en
  and de: a MoE on a 24 GB card, a dense 70B on an H100, a sliding-window model on an RTX 3090, an MoE on an MI300X)
  are requested with Django's test client under the production settings (a throw-away VAR_DIR prepared as `make run`
  prepares var/: bench/server.py);
- before each round every lru_cache of the project and the page cache are cleared, so every round computes
  everything again; per state the fastest round counts (noise only ever adds time);
- printed: the median milliseconds (process CPU time) per pair and over all, and, from one more round under
  cProfile, the Python function calls per request: deterministic, so it compares two commits on a busy machine.
"""

from __future__ import annotations

import argparse
import functools
import gc
import random
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.server import ProductionServer  # noqa: E402
from bench.site_urls import configurator_state  # noqa: E402

PAIRS = (("en", "qwen3-30b-a3b-instruct-2507", "rtx-4090"), ("de", "llama-3-3-70b-instruct", "h100-80gb-sxm"),
         ("en", "gemma-3-27b-it", "rtx-3090"), ("de", "glm-4-5-air", "instinct-mi300x-192gb"))
SEED = 11
MAX_CONTEXT = 131072


def clear_caches() -> None:
    from django.core.cache import cache

    for obj in gc.get_objects():
        if isinstance(obj, functools._lru_cache_wrapper) and getattr(obj, "__module__", "").startswith(
                ("reports", "catalog")):
            obj.cache_clear()
    cache.clear()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--states", type=int, default=40, help="random configurator states per pair")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    server = ProductionServer(log=lambda line: print(f"# {line}"))
    try:
        server.prepare()
        server.setup_django()
        from django.test import Client

        client = Client(HTTP_ACCEPT_ENCODING="gzip", HTTP_HOST="127.0.0.1")  # a host the production settings allow
        rnd = random.Random(SEED)
        urls = [[f"/{lang}/report/{model}/{hardware}/?" + urlencode(configurator_state(rnd.randrange(10**6),
                                                                                       MAX_CONTEXT))
                 for _ in range(args.states)] for lang, model, hardware in PAIRS]
        best: dict[str, float] = {}
        statuses: dict[int, int] = {}
        for _ in range(args.rounds):
            clear_caches()
            for pair_urls in urls:
                client.get(pair_urls[0].split("?")[0])  # the pair's default page first (not measured)
                for url in pair_urls:
                    started = time.process_time()
                    status = client.get(url).status_code
                    best[url] = min(best.get(url, float("inf")), time.process_time() - started)
                    statuses[status] = statuses.get(status, 0) + 1
        for (lang, model, hardware), pair_urls in zip(PAIRS, urls):
            print(f"{lang} {model} on {hardware}: p50 {statistics.median(best[u] for u in pair_urls) * 1e3:.1f} ms")
        print(f"statuses: {statuses} (a refused state, 400, is a page too: the form with its message)")
        print(f"all: p50 {statistics.median(best.values()) * 1e3:.1f} ms, mean {statistics.mean(best.values()) * 1e3:.1f} ms"
              f" (process CPU time, fastest of {args.rounds} rounds per state)")
        import cProfile
        import pstats

        clear_caches()
        profile, requests = cProfile.Profile(), 0
        for pair_urls in urls:
            client.get(pair_urls[0].split("?")[0])
            for url in pair_urls:
                profile.enable()
                client.get(url)
                profile.disable()
                requests += 1
        print(f"function calls per request: {pstats.Stats(profile).total_calls / requests:,.0f}")
    finally:
        server.close()


if __name__ == "__main__":
    main()
