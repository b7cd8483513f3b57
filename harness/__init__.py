"""What the tests, the load tests and the benchmarks share to drive the real service.

A server subprocess on a free port (server.py), wrk and its report (wrk.py), request bodies
(workloads.py, refusals.py), timed runs (timing.py), server variants and their processes
(variants.py, processes.py), the service behind other edges (edges.py: Granian, HAProxy in
front of uvicorn), headless Chromium (browser.py), generated tables (synthetic_table.py,
lee_table.py) and the docs' screenshots. It imports the service and never `tests`,
`loadtests` or `benchmarks`, which may all import it (pyproject's import contracts).
"""
