#!/usr/bin/env bash
# Build the real Kubernetes control plane the tests run against (tests/real, `make cluster`): kube-apiserver,
# kube-controller-manager and kube-scheduler from k8s.io/kubernetes, etcd from go.etcd.io/etcd/server/v3 and kwok,
# all at the versions pinned by tests/cluster/go.mod and tests/cluster/kwok/go.mod (+ their go.sum).
#
# Output: $CONTROL_PLANE_CACHE/<kubernetes version>/ (default .cache/control-plane/, git-ignored), one directory
# per version, so every supported version (KUBE_VERSION, tests/cluster/versions.txt) stays cached. A stamp of the
# inputs (go.mod/go.sum files, this script, the Go version) is kept beside the binaries: when it matches, nothing is
# rebuilt and this script returns at once, so a warm `make test` costs nothing here.
#
# Needs only `go` (the version tests/cluster/go.mod names, or newer) and the Go module proxy; no git, no cgo.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KWOK_MOD="$ROOT/tests/cluster/kwok"
# KUBE_VERSION (a minor, e.g. 1.34; default the newest) picks a row of tests/cluster/versions.txt: its module
# directory holds the go.mod that pins that release.
VERSIONS="$ROOT/tests/cluster/versions.txt"
if [[ -n ${KUBE_VERSION:-} ]]; then
    ROW=$(awk -v minor="$KUBE_VERSION" '!/^#/ && $1 == minor' "$VERSIONS")
else
    ROW=$(awk '!/^#/ && NF' "$VERSIONS" | tail -n1)
fi
if [[ -z $ROW ]]; then
    echo "build-control-plane: KUBE_VERSION=$KUBE_VERSION is not supported; the minors of $VERSIONS are:" \
        "$(awk '!/^#/ && NF {print $1}' "$VERSIONS" | xargs)" >&2
    exit 1
fi
MOD="$ROOT/tests/cluster/$(awk '{print $4}' <<<"$ROW")"

if ! command -v go >/dev/null 2>&1; then
    echo "build-control-plane: the 'go' tool is required (https://go.dev/dl/)" >&2
    exit 1
fi

module_version() { # module_version DIR MODULE -> the version DIR/go.mod requires
    sed -n -E "s|^[[:space:]]*(require[[:space:]]+)?$2[[:space:]]+(v[^[:space:]]+).*|\2|p" "$1/go.mod" | head -n1
}
K8S_VERSION=$(module_version "$MOD" k8s.io/kubernetes)
ETCD_VERSION=$(module_version "$MOD" go.etcd.io/etcd/server/v3)
KWOK_VERSION=$(module_version "$KWOK_MOD" sigs.k8s.io/kwok)
if [[ ! $K8S_VERSION =~ ^v1\.([0-9]+)\.[0-9]+$ ]]; then
    echo "build-control-plane: cannot read the k8s.io/kubernetes version from $MOD/go.mod" >&2
    exit 1
fi
K8S_MINOR=${BASH_REMATCH[1]}
if [[ $(awk '{print $2, $3}' <<<"$ROW") != "$K8S_VERSION $ETCD_VERSION" ]]; then
    echo "build-control-plane: $MOD/go.mod pins $K8S_VERSION (etcd $ETCD_VERSION), $VERSIONS says: $ROW" >&2
    exit 1
fi

CACHE_ROOT=${CONTROL_PLANE_CACHE:-$ROOT/.cache/control-plane}
OUT="$CACHE_ROOT/$K8S_VERSION"
BINARIES=(etcd kube-apiserver kube-controller-manager kube-scheduler kwok)
# kwok's own default stages (node-initialize, node heartbeat with lease, pod ready/complete/delete), taken
# from the pinned kwok module so they always match the binary; the launcher passes them as kwok --config.
KWOK_STAGES=(node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml
    pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml)

STAMP=$({
    cat "$MOD/go.mod" "$MOD/go.sum" "$KWOK_MOD/go.mod" "$KWOK_MOD/go.sum" "${BASH_SOURCE[0]}"
    go env GOVERSION GOOS GOARCH
} | sha256sum | cut -d' ' -f1)

up_to_date() {
    [[ -f "$OUT/.stamp" && $(cat "$OUT/.stamp") == "$STAMP" ]] || return 1
    local bin
    for bin in "${BINARIES[@]}"; do [[ -x "$OUT/$bin" ]] || return 1; done
    [[ -f "$OUT/kwok-stages.yaml" ]]
}

if up_to_date; then
    echo "control plane $K8S_VERSION (etcd $ETCD_VERSION, kwok $KWOK_VERSION): cached in ${OUT#"$ROOT"/}"
    exit 0
fi

echo "building control plane $K8S_VERSION (etcd $ETCD_VERSION, kwok $KWOK_VERSION) into ${OUT#"$ROOT"/} ..."
start=$SECONDS
mkdir -p "$CACHE_ROOT"
STAGE=$(mktemp -d "$CACHE_ROOT/.build.XXXXXX")
trap 'rm -rf "$STAGE"' EXIT

export CGO_ENABLED=0
# The release's publication time from the module proxy: a truthful, reproducible buildDate for /version.
BUILD_DATE=$(cd "$MOD" && go mod download -json "k8s.io/kubernetes@$K8S_VERSION" |
    sed -n -E 's|.*"Info": "([^"]+)".*|\1|p' | xargs sed -n -E 's|.*"Time":"([^"]+)".*|\1|p')
VERSION_VARS=(gitVersion="$K8S_VERSION" gitMajor=1 gitMinor="$K8S_MINOR" gitTreeState=archive buildDate="$BUILD_DATE")
LDFLAGS="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    for var in "${VERSION_VARS[@]}"; do LDFLAGS+=" -X $pkg.$var"; done
done
BUILD=(go build -trimpath -pgo=off)

(cd "$MOD" && "${BUILD[@]}" -ldflags "$LDFLAGS" -o "$STAGE/" \
    k8s.io/kubernetes/cmd/kube-apiserver \
    k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kube-scheduler)
(cd "$MOD" && "${BUILD[@]}" -ldflags "-s -w" -o "$STAGE/etcd" go.etcd.io/etcd/server/v3)
(cd "$KWOK_MOD" && "${BUILD[@]}" -ldflags "-s -w" -o "$STAGE/kwok" sigs.k8s.io/kwok/cmd/kwok)

KWOK_DIR=$(cd "$KWOK_MOD" && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)
for stage in "${KWOK_STAGES[@]}"; do
    echo "# from sigs.k8s.io/kwok@$KWOK_VERSION kustomize/stage/$stage"
    cat "$KWOK_DIR/kustomize/stage/$stage"
    echo "---"
done >"$STAGE/kwok-stages.yaml"

echo "$STAMP" >"$STAGE/.stamp"
chmod 755 "$STAGE"
rm -rf "$OUT"
mv "$STAGE" "$OUT"
trap - EXIT
echo "control plane $K8S_VERSION built in $((SECONDS - start)) s: ${BINARIES[*]}"
