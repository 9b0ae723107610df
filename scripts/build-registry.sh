#!/usr/bin/env bash
# Build the CNCF Distribution registry the image-signing test pushes to and signs in (tests/test_image_signing.py,
# `make registry`) from Go modules: github.com/distribution/distribution/v3/cmd/registry at the version pinned
# by tools/registry/go.mod (+ go.sum). No outside registry is reachable from the build machine, so the test runs
# this one on 127.0.0.1.
#
# Output: $REGISTRY_CACHE/<version>/registry (default .cache/registry/), cached by a stamp (scripts/go-tool.sh).
set -euo pipefail

TOOL=registry
source "$(dirname "${BASH_SOURCE[0]}")/go-tool.sh"
MOD="$ROOT/tools/registry"
MODULE=github.com/distribution/distribution/v3

go_tool_require
VERSION=$(go_tool_version "$MODULE")
[[ $VERSION =~ ^v3\.[0-9]+\.[0-9]+$ ]] || go_tool_fail "cannot read the $MODULE version from $MOD/go.mod"
go_tool_init "$VERSION" "${REGISTRY_CACHE:-}"
go_tool_cached registry && exit 0
go_tool_build "$MODULE/cmd/registry" "-X $MODULE/version.version=$VERSION" registry
go_tool_finish registry
