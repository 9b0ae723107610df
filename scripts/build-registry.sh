#!/usr/bin/env bash
# Build the CNCF Distribution registry the image-signing test pushes to and signs in (tests/test_image_signing.py,
# `make registry`) from Go modules: github.com/distribution/distribution/v3/cmd/registry at the version pinned
# by tools/registry/go.mod (+ go.sum), cached in .cache/registry/<version>/ (scripts/go-tool.sh). No outside
# registry is reachable from the build machine, so the test runs this one on 127.0.0.1.
set -euo pipefail
# shellcheck source=scripts/go-tool.sh
source "$(dirname "${BASH_SOURCE[0]}")/go-tool.sh"
build_go_tool registry github.com/distribution/distribution/v3 '^v3\.[0-9]+\.[0-9]+$' \
    github.com/distribution/distribution/v3/cmd/registry \
    '-X github.com/distribution/distribution/v3/version.version=$VERSION'
