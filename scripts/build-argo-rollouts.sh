#!/usr/bin/env bash
# Build the real Argo Rollouts controller the Rollout tests run against the control plane
# (tests/real/test_argo_rollouts.py, `make argo-rollouts`) from Go modules:
# github.com/argoproj/argo-rollouts/cmd/rollouts-controller at the version pinned by tools/argo-rollouts/go.mod
# (+ go.sum; bump with tools/argo-rollouts/gen_replaces.py), with its Rollout CRDs copied from the module's
# manifests/crds/ in the Go module cache (never vendored by hand).
#
# Output: $ARGO_ROLLOUTS_CACHE/<version>/{rollouts-controller,crds/} (default .cache/argo-rollouts/), cached by a
# stamp (scripts/go-tool.sh). The release needs a newer Go than the machine's may be: GOTOOLCHAIN is exported
# from tools/argo-rollouts/toolchain, so `go` fetches that toolchain from the module proxy (about 10 s, once).
set -euo pipefail

TOOL=argo-rollouts
source "$(dirname "${BASH_SOURCE[0]}")/go-tool.sh"
MOD="$ROOT/tools/argo-rollouts"
MODULE=github.com/argoproj/argo-rollouts

go_tool_require
GOTOOLCHAIN=$(cat "$MOD/toolchain")
export GOTOOLCHAIN
VERSION=$(go_tool_version "$MODULE")
[[ $VERSION =~ ^v1\.[0-9]+\.[0-9]+$ ]] || go_tool_fail "cannot read the $MODULE version from $MOD/go.mod"
go_tool_init "$VERSION" "${ARGO_ROLLOUTS_CACHE:-}"
go_tool_cached rollouts-controller crds && exit 0

# The controller's version variable, so its log and metrics name the pinned release.
go_tool_build "$MODULE/cmd/rollouts-controller" "-X $MODULE/utils/version.version=${VERSION#v}" rollouts-controller
SOURCE=$(cd "$MOD" && go list -m -f '{{.Dir}}' "$MODULE")
[[ -d $SOURCE/manifests/crds ]] || go_tool_fail "no manifests/crds in $SOURCE"
mkdir "$STAGE/crds"
cp "$SOURCE"/manifests/crds/*-crd.yaml "$STAGE/crds/"
chmod u+w "$STAGE"/crds/*
go_tool_finish rollouts-controller crds
