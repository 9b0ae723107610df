# syntax=docker/dockerfile:1
# kube-rehash image: the wheel and its hash-pinned runtime dependencies on python slim, run as 65532.
# Neither the API simulator nor cryptography (the `kube-rehash[simulator]` extra) is installed here.
# Build: docker build -t ghcr.io/kube-rehash/kube-rehash:0.1.0 .
# Both stages use the same base, pinned by full version (add @sha256:<digest> when publishing). BASE is a
# build argument only so that `make image` can pass a base built from Debian's packages (the same bookworm
# and Python 3.11, with python and pip in /usr/local/bin) where no container registry is reachable.
ARG BASE=python:3.11.17-slim-bookworm

# --- stage 1: build the kube-rehash wheel with hash-pinned build tools -----------------------------
FROM ${BASE} AS build
# Optional, build time only: a CA bundle for pip behind a TLS-intercepting proxy (make image mounts one).
ARG PIP_CERT
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PYTHONDONTWRITEBYTECODE=1
WORKDIR /src
# setuptools and wheel come from the same hash-pinned lock as the runtime (no unpinned build isolation).
COPY requirements/runtime.txt requirements/runtime.txt
RUN python -m pip install --no-cache-dir --require-hashes --no-deps -r requirements/runtime.txt
COPY setup.cfg pyproject.toml README.md ./
COPY reconcile/ reconcile/
RUN python -m pip wheel --no-cache-dir --no-deps --no-build-isolation --wheel-dir /wheels .

# --- stage 2: runtime ------------------------------------------------------------------------------
FROM ${BASE}
ARG PIP_CERT
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
COPY requirements/runtime.txt /tmp/runtime.txt
COPY --from=build /wheels/ /tmp/wheels/
# Runtime dependencies by hash, then the wheel alone; then no build tools, pip or caches are left.
RUN python -m pip install --no-cache-dir --require-hashes --no-deps -r /tmp/runtime.txt \
 && python -m pip install --no-cache-dir --no-deps /tmp/wheels/kube_rehash-*.whl \
 && python -m pip uninstall --yes setuptools wheel \
 && python -m pip uninstall --yes pip \
 && rm -rf /tmp/runtime.txt /tmp/wheels /root/.cache
# The same UID/GID as the manifests' runAsUser/runAsGroup (tests/test_dockerfile.py checks it).
USER 65532:65532
ENTRYPOINT ["kube-rehash"]
CMD ["run"]
