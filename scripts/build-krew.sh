#!/usr/bin/env bash
# Build the real krew (kubectl's plugin manager) the release tests install the plugin archive with
# (tests/test_dist.py, `make krew`) from Go modules: sigs.k8s.io/krew/cmd/krew at the version pinned by
# tools/krew/go.mod (+ go.sum), so `kubectl krew install --manifest … --archive …` is krew's own code.
#
# Output: $KREW_CACHE/<krew version>/krew (default .cache/krew/), cached by a stamp (scripts/go-tool.sh).
# A cold build takes about 15 s.
set -euo pipefail

TOOL=krew
source "$(dirname "${BASH_SOURCE[0]}")/go-tool.sh"
MOD="$ROOT/tools/krew"

go_tool_require
VERSION=$(go_tool_version sigs.k8s.io/krew)
[[ $VERSION =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]] || go_tool_fail "cannot read the sigs.k8s.io/krew version from $MOD/go.mod"
go_tool_init "$VERSION" "${KREW_CACHE:-}"
go_tool_cached krew && exit 0
# krew's own version variable, so `krew version` names the pinned release.
go_tool_build sigs.k8s.io/krew/cmd/krew "-X sigs.k8s.io/krew/internal/version.gitTag=$VERSION" krew
go_tool_finish krew
