#!/usr/bin/env bash
# Build the real cosign the release tests sign and verify with (tests/test_dist.py, `make cosign`) from Go
# modules: github.com/sigstore/cosign/v3/cmd/cosign at the version pinned by tools/cosign/go.mod (+ go.sum).
#
# Output: $COSIGN_CACHE/<cosign version>/cosign (default .cache/cosign/, git-ignored). A stamp of the inputs
# (go.mod, go.sum, this script, the Go version) is kept beside the binary: when it matches, nothing is rebuilt
# and this script returns at once. A cold build takes a few minutes on a 2-core machine.
#
# Needs only `go` and the Go module proxy; no git, no cgo.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
MOD="$ROOT/tools/cosign"

if ! command -v go >/dev/null 2>&1; then
    echo "build-cosign: the 'go' tool is required (https://go.dev/dl/)" >&2
    exit 1
fi

COSIGN_VERSION=$(sed -n -E \
    's|^[[:space:]]*(require[[:space:]]+)?github.com/sigstore/cosign/v3[[:space:]]+(v[^[:space:]]+).*|\2|p' \
    "$MOD/go.mod" | head -n1)
if [[ ! $COSIGN_VERSION =~ ^v3\.[0-9]+\.[0-9]+$ ]]; then
    echo "build-cosign: cannot read the github.com/sigstore/cosign/v3 version from $MOD/go.mod" >&2
    exit 1
fi

OUT="${COSIGN_CACHE:-$ROOT/.cache/cosign}/$COSIGN_VERSION"
STAMP=$({
    cat "$MOD/go.mod" "$MOD/go.sum" "${BASH_SOURCE[0]}"
    go env GOVERSION GOOS GOARCH
} | sha256sum | cut -d' ' -f1)

if [[ -f "$OUT/.stamp" && $(cat "$OUT/.stamp") == "$STAMP" && -x "$OUT/cosign" ]]; then
    echo "cosign $COSIGN_VERSION: cached in ${OUT#"$ROOT"/}"
    exit 0
fi

echo "building cosign $COSIGN_VERSION into ${OUT#"$ROOT"/} ..."
start=$SECONDS
mkdir -p "$OUT"
STAGE=$(mktemp -d "$OUT/.build.XXXXXX")
trap 'rm -rf "$STAGE"' EXIT
# cosign's version variable (sigs.k8s.io/release-utils), so `cosign version` names the pinned release.
LDFLAGS="-s -w -X sigs.k8s.io/release-utils/version.gitVersion=$COSIGN_VERSION"
(cd "$MOD" && CGO_ENABLED=0 go build -trimpath -ldflags "$LDFLAGS" -o "$STAGE/cosign" \
    github.com/sigstore/cosign/v3/cmd/cosign)
mv -f "$STAGE/cosign" "$OUT/cosign"
echo "$STAMP" >"$OUT/.stamp"
echo "cosign $COSIGN_VERSION built in $((SECONDS - start)) s"
