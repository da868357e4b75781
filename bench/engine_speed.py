"""How long the engine takes: one estimate (median of many) and the whole catalog grid.

Targets (issue 3): ≤ 2 ms per estimate, ≤ 15 s for every catalog model × accelerator. Loads the seed catalog
into a throw-away SQLite database, so it runs anywhere:

    python -m bench.engine_speed            # timings
    python -m bench.engine_speed --profile  # plus the top of a cProfile of the grid
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _setup_django(database: Path) -> None:
    sys.path.insert(0, str(REPO))
    os.environ["DJANGO_SETTINGS_MODULE"] = "sizer_site.test_settings"
    os.environ["DATABASE_URL"] = f"sqlite:///{database}"
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    from catalog.seed_loader import load_catalog

    load_catalog()


def _clear_engine_caches() -> None:
    """Start cold: every lru_cache of the engine (per-spec inventories, memory plans)."""
    import functools
    import gc

    for obj in gc.get_objects():
        if isinstance(obj, functools._lru_cache_wrapper) and getattr(obj, "__module__", "").startswith(
                "reports.sizing"):
            obj.cache_clear()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--repeat", type=int, default=500)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        _setup_django(Path(tmp) / "bench.sqlite3")
        from reports.estimates import CatalogSnapshot
        from reports.sizing.specs import Scenario

        catalog = CatalogSnapshot()
        models = [catalog.model(slug) for slug in catalog.model_slugs]
        accelerators = list(catalog.hardware.values())
        scenario = Scenario()

        def grid() -> int:
            count = 0
            for model in models:
                for hardware in accelerators:
                    catalog.estimate(model, hardware, scenario).to_contract_json()
                    count += 1
            return count

        _clear_engine_caches()
        started = time.perf_counter()
        count = grid()
        cold = time.perf_counter() - started
        started = time.perf_counter()
        grid()
        warm = time.perf_counter() - started
        print(f"grid: {count} estimates ({len(models)} models × {len(accelerators)} accelerators, "
              f"{len(catalog.offers)} cloud offers each)")
        print(f"  cold caches: {cold:.2f} s ({cold / count * 1e3:.2f} ms per estimate)")
        print(f"  warm caches: {warm:.2f} s ({warm / count * 1e3:.2f} ms per estimate)")

        model, hardware = catalog.model("glm-4-5"), catalog.accelerator("instinct-mi325x-256gb")
        for label, fresh in (("new scenario each time (memory plan recomputed)", True),
                             ("repeated scenario (memory plan cached)", False)):
            timings = []
            for i in range(args.repeat):
                varied = Scenario(context=8192 + 256 * i) if fresh else scenario
                started = time.perf_counter()
                catalog.estimate(model, hardware, varied).to_contract_json()
                timings.append(time.perf_counter() - started)
            print(f"one estimate, GLM-4.5 on MI325X, {label}: median {statistics.median(timings) * 1e3:.3f} ms, "
                  f"p90 {sorted(timings)[int(0.9 * len(timings))] * 1e3:.3f} ms over {args.repeat}")

        if args.profile:
            _clear_engine_caches()
            profiler = cProfile.Profile()
            profiler.runcall(grid)
            pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)


if __name__ == "__main__":
    main()
