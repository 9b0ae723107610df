#!/usr/bin/env bash
# Build the real krew (kubectl's plugin manager) the release tests install the plugin archive with
# (tests/test_dist.py, `make krew`) from Go modules: sigs.k8s.io/krew/cmd/krew at the version pinned by
# tools/krew/go.mod (+ go.sum), so `kubectl krew install --manifest … --archive …` is krew's own code.
#
# Output: $KREW_CACHE/<krew version>/krew (default .cache/krew/, git-ignored). A stamp of the inputs (go.mod,
# go.sum, this script, the Go version) is kept beside the binary: when it matches, nothing is rebuilt and this
# script returns at once. A cold build takes about 15 s.
#
# Needs only `go` and the Go module proxy; no git, no cgo.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
MOD="$ROOT/tools/krew"

if ! command -v go >/dev/null 2>&1; then
    echo "build-krew: the 'go' tool is required (https://go.dev/dl/)" >&2
    exit 1
fi

KREW_VERSION=$(sed -n -E 's|^[[:space:]]*(require[[:space:]]+)?sigs.k8s.io/krew[[:space:]]+(v[^[:space:]]+).*|\2|p' \
    "$MOD/go.mod" | head -n1)
if [[ ! $KREW_VERSION =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
    echo "build-krew: cannot read the sigs.k8s.io/krew version from $MOD/go.mod" >&2
    exit 1
fi

OUT="${KREW_CACHE:-$ROOT/.cache/krew}/$KREW_VERSION"
STAMP=$({
    cat "$MOD/go.mod" "$MOD/go.sum" "${BASH_SOURCE[0]}"
    go env GOVERSION GOOS GOARCH
} | sha256sum | cut -d' ' -f1)

if [[ -f "$OUT/.stamp" && $(cat "$OUT/.stamp") == "$STAMP" && -x "$OUT/krew" ]]; then
    echo "krew $KREW_VERSION: cached in ${OUT#"$ROOT"/}"
    exit 0
fi

echo "building krew $KREW_VERSION into ${OUT#"$ROOT"/} ..."
start=$SECONDS
mkdir -p "$OUT"
STAGE=$(mktemp -d "$OUT/.build.XXXXXX")
trap 'rm -rf "$STAGE"' EXIT
# krew's own version variable, so `krew version` names the pinned release.
LDFLAGS="-s -w -X sigs.k8s.io/krew/internal/version.gitTag=$KREW_VERSION"
(cd "$MOD" && CGO_ENABLED=0 go build -trimpath -ldflags "$LDFLAGS" -o "$STAGE/krew" sigs.k8s.io/krew/cmd/krew)
mv -f "$STAGE/krew" "$OUT/krew"
echo "$STAMP" >"$OUT/.stamp"
echo "krew $KREW_VERSION built in $((SECONDS - start)) s"
