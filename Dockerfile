# Minimal image; the multi-stage, pinned, non-root build is tracked in its own issue.
# No registry is reachable on the build machines: pass a locally bootstrapped base, e.g.
#   podman build --build-arg BASE_IMAGE=localhost/bookworm-python:latest -t embedding-service .
ARG BASE_IMAGE=python:3.11-slim-bookworm
FROM ${BASE_IMAGE}
WORKDIR /app
COPY pyproject.toml README.md ./
COPY service ./service
RUN python3 -m venv /opt/venv && /opt/venv/bin/pip install --no-cache-dir .
ENV EMBEDDING_SERVICE_HOST=0.0.0.0
EXPOSE 8000
CMD ["/opt/venv/bin/embedding-service", "serve"]
