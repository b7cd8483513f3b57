"""How many threads BLAS (numpy) and OpenMP (FAISS) may use in this process."""

from __future__ import annotations

import faiss
from threadpoolctl import threadpool_limits

# What limit_compute_threads last set; None until it is called (every pool at its own default).
# Read as an attribute on the request path (search/products.py: the compiled pass is one thread).
compute_cap: int | None = None


def limit_compute_threads(threads: int) -> None:
    """Cap the BLAS and OpenMP pools of this process (numpy, FAISS) at `threads`.

    OpenMP's count is per thread: a thread that runs FAISS must call limit_openmp itself
    (the batchers' worker threads do, through their executors' initializer).
    """
    global compute_cap
    threadpool_limits(limits=threads)
    limit_openmp(threads)
    compute_cap = threads


def limit_openmp(threads: int) -> None:
    """Cap the OpenMP threads FAISS starts from the calling thread (each thread has its own
    setting: a worker thread would otherwise use every core, its pool spinning against the
    event loop)."""
    faiss.omp_set_num_threads(threads)
