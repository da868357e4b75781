"""gunicorn settings shared by `make run`, the README's production start, bench/ and the scale-out test.

Passed explicitly (`gunicorn -c gunicorn.conf.py …`); `--workers` and `--bind` stay on the command line, where each
caller sets its own.

Worker class: gthread with one thread per worker. It serves one request at a time per worker, as the sync worker
does, and keeps HTTP keep-alive connections open for a proxy. The reason is CPython, not gunicorn: CPython 3.11 to
3.13 before the fix (python/cpython#142183, fixed March 2026 by caching one chunk per thread state, backported to
3.13 and 3.14) maps a fresh 16 KiB chunk of its frame stack whenever a call crosses a chunk boundary and unmaps it
when that call returns. In the sync worker, requests run on the main thread at a stack depth where the report
page's template recursion crosses that boundary over and over: 1,420 minor page faults per uncached report and 57.7
ms of CPU, against 52 faults and 44.7 ms in a gthread worker, whose requests start at the bottom of a thread's own
stack (Python 3.12.1, 2-core VM, 40 requests per page kind, alternating; a new model × accelerator pair: 3,187
against 158 faults, 99.5 against 66.7 ms). Model, hardware and partial pages fault equally in both (within 5 %).
`bench/web.py` prints the workers' page faults per request, so a shift of the boundary shows up there.

More threads per worker would not help a CPU-bound page on a 2-core machine: they would share one GIL.
"""

worker_class = "gthread"
threads = 1


def post_worker_init(worker) -> None:
    """Each worker, once it has loaded the app: load what every request needs and freeze it out of the garbage
    collector's walks (reports/warmup.py says what that saves)."""
    from reports.warmup import warm_worker

    frozen = warm_worker()
    worker.log.info("worker warmed up: %d objects frozen out of the garbage collector's walks", frozen)
