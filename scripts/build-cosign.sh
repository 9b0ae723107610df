#!/usr/bin/env bash
# Build the real cosign the release tests sign and verify with (tests/test_dist.py, `make cosign`) from Go
# modules: github.com/sigstore/cosign/v3/cmd/cosign at the version pinned by tools/cosign/go.mod (+ go.sum).
#
# Output: $COSIGN_CACHE/<cosign version>/cosign (default .cache/cosign/), cached by a stamp (scripts/go-tool.sh).
# A cold build takes a few minutes on a 2-core machine.
set -euo pipefail

TOOL=cosign
source "$(dirname "${BASH_SOURCE[0]}")/go-tool.sh"
MOD="$ROOT/tools/cosign"

go_tool_require
VERSION=$(go_tool_version github.com/sigstore/cosign/v3)
[[ $VERSION =~ ^v3\.[0-9]+\.[0-9]+$ ]] ||
    go_tool_fail "cannot read the github.com/sigstore/cosign/v3 version from $MOD/go.mod"
go_tool_init "$VERSION" "${COSIGN_CACHE:-}"
go_tool_cached cosign && exit 0
# cosign's version variable (sigs.k8s.io/release-utils), so `cosign version` names the pinned release.
go_tool_build github.com/sigstore/cosign/v3/cmd/cosign "-X sigs.k8s.io/release-utils/version.gitVersion=$VERSION" cosign
go_tool_finish cosign
