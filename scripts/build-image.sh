#!/usr/bin/env bash
# Builds the kube-rehash image with podman (`make image`), from the project's Dockerfile.
#
# Why a local base: no container registry is reachable from CI or from this project's machines, so the
# Dockerfile's build-stage base (python:3.11.17-slim-bookworm) cannot be pulled. The same Debian release
# (bookworm, Python 3.11 with its shared libpython, which PyInstaller freezes, and binutils' objdump, which it
# runs) is built here from Debian's packages with debootstrap and imported as
# localhost/kube-rehash-base:bookworm-<digest of the base section>, then passed in with --build-arg BASE. Users
# building with docker or podman against a registry keep the upstream default. The final stage is FROM scratch
# either way, so the base's size is not the image's.
#
# Cache: each step records the hash of its inputs in a stamp under .cache/image/, one per tag (worktrees share
# the cache and podman's storage); a step whose inputs are unchanged and whose image still exists is skipped, so
# a warm run costs a few podman queries. The last line printed is the image's uncompressed size (podman's).
#
# Env: KUBE_REHASH_IMAGE (default localhost/kube-rehash:dev), DEBIAN_MIRROR (default deb.debian.org).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${KUBE_REHASH_NO_PODMAN:-}" = 1 ]; then
  echo "image: skipped (KUBE_REHASH_NO_PODMAN=1)"
  exit 0
fi

export CONTAINERS_CONF="${CONTAINERS_CONF:-$PWD/tests/image/containers.conf}"
IMAGE="${KUBE_REHASH_IMAGE:-localhost/kube-rehash:dev}"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
CACHE=.cache/image
mkdir -p "$CACHE"

# The base's inputs are this script's base section and the mirror; the image's are the base, everything the
# Dockerfile reads (tracked content, local changes, new files) and the rest of this script (how it builds).
# What the Dockerfile reads from the build context (.dockerignore lets only these through).
CONTEXT=(.dockerignore requirements/runtime.txt requirements/freeze.txt setup.cfg pyproject.toml README.md reconcile
  scripts/freeze.py)
base_inputs() { { sed -n '/^# --- base/,/^# --- end base/p' "$0"; echo "$MIRROR"; } | sha256sum | cut -d' ' -f1; }
image_inputs() {
  {
    image_id "$BASE"
    echo "$IMAGE"
    sed -n '/^# --- end base/,$p' "$0"
    git ls-files -s Dockerfile "${CONTEXT[@]}"
    git diff --no-ext-diff HEAD -- Dockerfile "${CONTEXT[@]}"
    git ls-files --others --exclude-standard reconcile | xargs -r sha256sum
  } | sha256sum | cut -d' ' -f1
}
# A stamp holds the inputs' hash and the ID of the image built from them: fresh only while the tag still names
# that image (podman's storage is shared, e.g. by several worktrees building the same tag).
image_id() { podman image inspect --format '{{.Id}}' "$1" 2>/dev/null || true; }
fresh() { [ -f "$1" ] && [ "$(cat "$1")" = "$2 $(image_id "$3")" ]; }
stamp_of() { echo "$CACHE/$(echo "$1" | tr '/:' '__').stamp"; }
# The image a rebuild replaced, once no tag names it any more (and nothing builds on it): not kept.
drop_untagged() {
  if [ -n "$1" ] && [ "$(podman image inspect --format '{{len .RepoTags}}' "$1" 2>/dev/null)" = 0 ]; then
    podman rmi "$1" >/dev/null 2>&1 || true
  fi
}

# --- base: Debian bookworm minbase + Python 3.11, laid out like the python image ------------------------
want=$(base_inputs)
BASE="localhost/kube-rehash-base:bookworm-${want:0:12}"
if ! fresh "$(stamp_of "$BASE")" "$want" "$BASE"; then
  echo "building $BASE from Debian bookworm ($MIRROR)"
  root=$(mktemp -d "$PWD/$CACHE/rootfs.XXXXXX")
  trap 'rm -rf "$root"' EXIT
  debootstrap --variant=minbase --include=python3,python3-venv,libpython3.11,binutils bookworm "$root" "$MIRROR" >"$CACHE/debootstrap.log"
  # `python` and pip where the python image has them (/usr/local/bin): a venv over Debian's Python 3.11 at
  # /usr/local, so the Dockerfile's `python -m pip install` works, is not refused as an externally managed
  # environment (PEP 668), and `pip uninstall pip` leaves no pip behind.
  chroot "$root" python3 -m venv /usr/local
  chroot "$root" /usr/local/bin/python -m pip --version >/dev/null
  # What a container needs neither at build nor at run time.
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root"/usr/share/doc/* \
    "$root"/usr/share/man/* "$root"/usr/share/locale/* "$root"/usr/share/info/*
  old=$(image_id "$BASE")
  tar -C "$root" -c . | podman import --quiet \
    --change 'ENV PATH=/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV LANG=C.UTF-8' \
    --change 'CMD ["python"]' \
    - "$BASE" >/dev/null
  rm -rf "$root"
  trap - EXIT
  drop_untagged "$old"
  echo "$want $(image_id "$BASE")" >"$(stamp_of "$BASE")"
fi
# --- end base -------------------------------------------------------------------------------------------

want=$(image_inputs)
if ! fresh "$(stamp_of "$IMAGE")" "$want" "$IMAGE"; then
  echo "building $IMAGE (FROM $BASE)"
  # Host network: both stages install the hash-pinned requirements from PyPI. pip there trusts the host's
  # CA bundle (PIP_CERT, else Debian's): machines behind a TLS-intercepting proxy need it. It is mounted
  # over /mnt (empty in every base) for the RUN steps only and named by the PIP_CERT build argument, so
  # nothing of it, not even an empty mount point, ends up in the image.
  ca="${PIP_CERT:-/etc/ssl/certs/ca-certificates.crt}"
  trust=()
  if [ -f "$ca" ]; then
    rm -rf "$CACHE/trust" && mkdir -p "$CACHE/trust" && cp "$ca" "$CACHE/trust/ca.crt"
    trust=(--volume "$PWD/$CACHE/trust:/mnt:ro" --build-arg PIP_CERT=/mnt/ca.crt)
  fi
  old=$(image_id "$IMAGE")
  podman build --quiet --network host "${trust[@]}" --build-arg "BASE=$BASE" -t "$IMAGE" -f Dockerfile . >/dev/null
  drop_untagged "$old"
  echo "$want $(image_id "$IMAGE")" >"$(stamp_of "$IMAGE")"
fi
podman run --rm --read-only --read-only-tmpfs=false --network none --user 65532 "$IMAGE" version
size=$(podman image inspect --format '{{.Size}}' "$IMAGE")
echo "image: $IMAGE, $((size / 1000000)) MB uncompressed ($size bytes, podman image inspect)"
