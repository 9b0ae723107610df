#!/usr/bin/env bash
# Build the real helm CLI the chart tests use (tests/test_chart.py, `make helm`) from Go modules: helm.sh/helm/v4
# at the version pinned by tools/helm/go.mod (+ go.sum), so the tests never depend on whatever helm a machine has.
#
# Output: $HELM_CACHE/<helm version>/helm (default .cache/helm/, git-ignored). A stamp of the inputs (go.mod,
# go.sum, this script, the Go version) is kept beside the binary: when it matches, nothing is rebuilt and this
# script returns at once, so a warm `make unit` costs nothing here.
#
# Needs only `go` and the Go module proxy; no git, no cgo.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
MOD="$ROOT/tools/helm"

if ! command -v go >/dev/null 2>&1; then
    echo "build-helm: the 'go' tool is required (https://go.dev/dl/)" >&2
    exit 1
fi

HELM_VERSION=$(sed -n -E 's|^[[:space:]]*(require[[:space:]]+)?helm.sh/helm/v4[[:space:]]+(v[^[:space:]]+).*|\2|p' \
    "$MOD/go.mod" | head -n1)
if [[ ! $HELM_VERSION =~ ^v4\.[0-9]+\.[0-9]+$ ]]; then
    echo "build-helm: cannot read the helm.sh/helm/v4 version from $MOD/go.mod" >&2
    exit 1
fi

OUT="${HELM_CACHE:-$ROOT/.cache/helm}/$HELM_VERSION"
STAMP=$({
    cat "$MOD/go.mod" "$MOD/go.sum" "${BASH_SOURCE[0]}"
    go env GOVERSION GOOS GOARCH
} | sha256sum | cut -d' ' -f1)

if [[ -f "$OUT/.stamp" && $(cat "$OUT/.stamp") == "$STAMP" && -x "$OUT/helm" ]]; then
    echo "helm $HELM_VERSION: cached in ${OUT#"$ROOT"/}"
    exit 0
fi

echo "building helm $HELM_VERSION into ${OUT#"$ROOT"/} ..."
start=$SECONDS
mkdir -p "$OUT"
STAGE=$(mktemp -d "$OUT/.build.XXXXXX")
trap 'rm -rf "$STAGE"' EXIT
# helm's own version variables, so `helm version` names the pinned release rather than "main".
LDFLAGS="-s -w -X helm.sh/helm/v4/internal/version.version=$HELM_VERSION"
(cd "$MOD" && CGO_ENABLED=0 go build -trimpath -ldflags "$LDFLAGS" -o "$STAGE/helm" helm.sh/helm/v4/cmd/helm)
mv -f "$STAGE/helm" "$OUT/helm"
echo "$STAMP" >"$OUT/.stamp"
echo "helm $HELM_VERSION built in $((SECONDS - start)) s"
