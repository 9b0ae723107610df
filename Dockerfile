# syntax=docker/dockerfile:1
# kube-rehash image: the CLI frozen by PyInstaller (onedir) on an empty base, run as 65532. The build stage
# installs the wheel and its hash-pinned runtime dependencies on python slim and freezes them with the
# hash-pinned PyInstaller (requirements/freeze.txt); the final stage holds only that frozen tree, the few
# shared libraries it loads (glibc, the loader, libz, libgcc_s), /etc/passwd and /etc/group naming 65532, an
# empty /tmp, and for scanners /etc/os-release and the Debian package of each of those libraries
# (/var/lib/dpkg/status.d/, as distroless images): no shell, no package manager, no Python outside the frozen
# tree (scripts/freeze.py).
# Neither the API simulator nor cryptography (the `kube-rehash[simulator]` extra) is installed here.
# Build: docker build -t ghcr.io/kube-rehash/kube-rehash:0.1.0 .
# The build stage's base is pinned by full version (add @sha256:<digest> when publishing). BASE is a build
# argument only so that `make image` can pass a base built from Debian's packages (the same bookworm and
# Python 3.11, with python and pip in /usr/local/bin) where no container registry is reachable.
ARG BASE=python:3.11.17-slim-bookworm

# --- stage 1: the wheel, installed with its locked dependencies, frozen with PyInstaller ---------------------
FROM ${BASE} AS build
# Optional, build time only: a CA bundle for pip behind a TLS-intercepting proxy (make image mounts one).
ARG PIP_CERT
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PYTHONDONTWRITEBYTECODE=1
# PyInstaller needs objdump on Linux: Debian's binutils, which the python image lacks (make image's base has it).
RUN if ! command -v objdump >/dev/null; then \
      apt-get update && apt-get install -y --no-install-recommends binutils=2.40-2 && rm -rf /var/lib/apt/lists/*; \
    fi
WORKDIR /src
# setuptools and wheel come from the same hash-pinned lock as the runtime (no unpinned build isolation);
# PyInstaller from its own lock, which holds only what the runtime lock lacks.
COPY requirements/runtime.txt requirements/freeze.txt requirements/
RUN python -m pip install --no-cache-dir --require-hashes --no-deps -r requirements/runtime.txt -r requirements/freeze.txt
COPY setup.cfg pyproject.toml README.md ./
COPY reconcile/ reconcile/
RUN python -m pip wheel --no-cache-dir --no-deps --no-build-isolation --wheel-dir /wheels . \
 && python -m pip install --no-cache-dir --no-deps /wheels/kube_rehash-*.whl
# The frozen tree at /opt/kube-rehash (started as /usr/local/bin/kube-rehash) and the rest of the root, in /rootfs.
COPY scripts/freeze.py scripts/freeze.py
RUN python scripts/freeze.py onedir --out /frozen --rootfs /rootfs

# --- stage 2: runtime: that root and nothing else -------------------------------------------------------------
FROM scratch
COPY --from=build /rootfs/ /
# glibc's built-in C.UTF-8 locale needs no locale files.
ENV PATH=/usr/local/bin \
    LANG=C.UTF-8
# The same UID/GID as the manifests' runAsUser/runAsGroup (tests/test_dockerfile.py checks it).
USER 65532:65532
ENTRYPOINT ["kube-rehash"]
CMD ["run"]
