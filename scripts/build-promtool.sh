#!/usr/bin/env bash
# Build the real promtool the monitoring tests use (tests/test_monitoring.py, `make promtool`) from Go modules:
# github.com/prometheus/prometheus/cmd/promtool at the version pinned by tools/promtool/go.mod (+ go.sum), so the
# alert rules are checked and unit-tested by Prometheus's own parser and rule evaluator, never by a look-alike.
#
# Output: $PROMTOOL_CACHE/<module version>/promtool (default .cache/promtool/, git-ignored). A stamp of the inputs
# (go.mod, go.sum, this script, the Go version) is kept beside the binary: when it matches, nothing is rebuilt and
# this script returns at once, so a warm `make unit` costs nothing here. A cold build takes about 5 minutes on a
# 2-core machine (the Prometheus module pulls every service-discovery SDK).
#
# Needs only `go` and the Go module proxy; no git, no cgo.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
MOD="$ROOT/tools/promtool"

if ! command -v go >/dev/null 2>&1; then
    echo "build-promtool: the 'go' tool is required (https://go.dev/dl/)" >&2
    exit 1
fi

MOD_VERSION=$(sed -n -E \
    's|^[[:space:]]*(require[[:space:]]+)?github.com/prometheus/prometheus[[:space:]]+(v[^[:space:]]+).*|\2|p' \
    "$MOD/go.mod" | head -n1)
if [[ ! $MOD_VERSION =~ ^v0\.([0-9]+)([0-9]{2})\.([0-9]+)$ ]]; then
    echo "build-promtool: cannot read the github.com/prometheus/prometheus version from $MOD/go.mod" >&2
    exit 1
fi
# The Go module v0.MMmm.p is Prometheus release MM.mm.p (v0.316.0 is Prometheus 3.16.0).
RELEASE="${BASH_REMATCH[1]}.$((10#${BASH_REMATCH[2]})).${BASH_REMATCH[3]}"

OUT="${PROMTOOL_CACHE:-$ROOT/.cache/promtool}/$MOD_VERSION"
STAMP=$({
    cat "$MOD/go.mod" "$MOD/go.sum" "${BASH_SOURCE[0]}"
    go env GOVERSION GOOS GOARCH
} | sha256sum | cut -d' ' -f1)

if [[ -f "$OUT/.stamp" && $(cat "$OUT/.stamp") == "$STAMP" && -x "$OUT/promtool" ]]; then
    echo "promtool $RELEASE: cached in ${OUT#"$ROOT"/}"
    exit 0
fi

echo "building promtool $RELEASE ($MOD_VERSION) into ${OUT#"$ROOT"/} ..."
start=$SECONDS
mkdir -p "$OUT"
STAGE=$(mktemp -d "$OUT/.build.XXXXXX")
trap 'rm -rf "$STAGE"' EXIT
# Prometheus's own version variables, so `promtool --version` names the pinned release.
LDFLAGS="-s -w -X github.com/prometheus/common/version.Version=$RELEASE"
(cd "$MOD" && CGO_ENABLED=0 go build -trimpath -ldflags "$LDFLAGS" -o "$STAGE/promtool" \
    github.com/prometheus/prometheus/cmd/promtool)
mv -f "$STAGE/promtool" "$OUT/promtool"
echo "$STAMP" >"$OUT/.stamp"
echo "promtool $RELEASE built in $((SECONDS - start)) s"
