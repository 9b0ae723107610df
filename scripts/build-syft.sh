#!/usr/bin/env bash
# Build the real syft that writes the release's SBOMs (scripts/dist-extras.py, `make syft`) from Go modules:
# github.com/anchore/syft/cmd/syft at the version pinned by tools/syft/go.mod (+ go.sum).
#
# Output: $SYFT_CACHE/<syft version>/syft (default .cache/syft/), cached by a stamp (scripts/go-tool.sh).
# A cold build takes about 3 minutes on an idle 2-core machine (7 min 39 s under load).
set -euo pipefail

TOOL=syft
source "$(dirname "${BASH_SOURCE[0]}")/go-tool.sh"
MOD="$ROOT/tools/syft"

go_tool_require
VERSION=$(go_tool_version github.com/anchore/syft)
[[ $VERSION =~ ^v1\.[0-9]+\.[0-9]+$ ]] || go_tool_fail "cannot read the github.com/anchore/syft version from $MOD/go.mod"
go_tool_init "$VERSION" "${SYFT_CACHE:-}"
go_tool_cached syft && exit 0
# syft's version variable, so `syft version` and the SBOM's creator name the pinned release.
go_tool_build github.com/anchore/syft/cmd/syft "-X main.version=$VERSION" syft
go_tool_finish syft
